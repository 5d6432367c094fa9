/**
 * Glue table columns mirrored from Iceberg schemas, as Iceberg Java's IcebergToGlueConverter
 * does (informational only: Athena and the console show them; engines read the metadata file).
 * Current-schema columns first, then columns only older schemas have (iceberg.field.current =
 * false), deduplicated by name; each carries iceberg.field.id / .optional / .current.
 */
import type { Column } from '@aws-sdk/client-glue'
import type { IcebergType } from '../schema/index.js'
import type { TableMetadata } from '../iceberg/index.js'

/** Hive/Glue type name of an Iceberg type (IcebergToGlueConverter.toTypeString). */
export function glueTypeString(type: IcebergType): string {
  if (typeof type === 'string') {
    switch (type) {
      case 'boolean':
      case 'int':
      case 'float':
      case 'double':
      case 'date':
      case 'binary':
        return type
      case 'long':
        return 'bigint'
      case 'time':
      case 'string':
      case 'uuid':
        return 'string'
      case 'timestamp':
      case 'timestamptz':
        return 'timestamp'
      case 'timestamp_ns':
      case 'timestamptz_ns':
        return 'timestamp_nano' // Java falls back to the lower-cased type id, TIMESTAMP_NANO
    }
    if (type.startsWith('fixed[')) return 'binary'
    const dec = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(type)
    if (dec) return `decimal(${dec[1]},${dec[2]})`
    return type.replace(/\(.*$/, '').toLowerCase()
  }
  switch (type.type) {
    case 'struct':
      return `struct<${type.fields.map((f) => `${f.name}:${glueTypeString(f.type)}`).join(',')}>`
    case 'list':
      return `array<${glueTypeString(type.element)}>`
    case 'map':
      return `map<${glueTypeString(type.key)},${glueTypeString(type.value)}>`
  }
}

/** StorageDescriptor columns; `existing` keeps comments a user set in Glue (first one per name wins). */
export function glueColumns(metadata: TableMetadata, existing: Column[] = []): Column[] {
  const comments = new Map<string, string>()
  for (const c of existing) if (c.Name && c.Comment != null && !comments.has(c.Name)) comments.set(c.Name, c.Comment)
  const columns: Column[] = []
  const seen = new Set<string>()
  const current = metadata.schemas.find((s) => s['schema-id'] === metadata['current-schema-id'])
  const ordered = [...(current ? [current] : []), ...metadata.schemas.filter((s) => s !== current)]
  for (const schema of ordered) {
    const isCurrent = schema === current
    for (const field of schema.fields) {
      if (seen.has(field.name)) continue
      seen.add(field.name)
      const column: Column = {
        Name: field.name,
        Type: glueTypeString(field.type),
        Parameters: {
          'iceberg.field.id': String(field.id),
          'iceberg.field.optional': String(!field.required),
          'iceberg.field.current': String(isCurrent),
        },
      }
      const comment = field.doc ? field.doc : comments.get(field.name)
      if (comment !== undefined) column.Comment = comment
      columns.push(column)
    }
  }
  return columns
}
