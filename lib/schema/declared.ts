/**
 * The schema a new table gets from a writer's declared schema (Avro, Connect envelope): the
 * rules for required fields and identifier columns.
 */
import { SchemaError } from '../errors.js'
import { withoutV3Fields } from './evolve.js'
import type { IcebergType, Schema, StructType } from './types.js'
import { relaxEmptyStructs } from './walk.js'

/**
 * A new table's schema from a declared one. Floe creates format-v2 tables: a v3-only field (Avro
 * timestamp-nanos) is left out (evolution dead-letters its values). With `evolveSchema` off
 * every field becomes optional (optionalFields); identifier columns are then made required.
 */
export function declaredTableSchema(declared: Schema, opts: { evolveSchema: boolean; idColumns: string[] }): Schema {
  const v2 = withoutV3Fields(declared)
  return withIdColumns(opts.evolveSchema ? relaxEmptyStructs(v2) : optionalFields(v2), opts.idColumns)
}

/**
 * A declared schema (Avro, Connect) with every struct field optional: for tables created with
 * `evolveSchema` off. Producers drop fields in later schema versions (Avro allows it for fields
 * with defaults); without evolution to relax it (required → optional), a required column would
 * turn every later record into a dead letter. With evolution on, non-nullable fields stay
 * required (readers see the producer's contract) and a version that drops one relaxes it.
 * Identifier columns are made required again by withIdColumns.
 */
export function optionalFields<T extends StructType>(struct: T): T {
  const relax = (type: IcebergType): IcebergType => {
    if (typeof type !== 'object') return type
    if (type.type === 'struct') return optionalFields(type)
    if (type.type === 'list') return { ...type, element: relax(type.element) }
    return { ...type, value: relax(type.value) }
  }
  return { ...struct, fields: struct.fields.map((f) => ({ ...f, required: false, type: relax(f.type) })) }
}

/** Mark identifier columns required and list them (Iceberg requires identifier fields to be required). */
export function withIdColumns(schema: Schema, idColumns: string[]): Schema {
  if (idColumns.length === 0) return schema
  const ids: number[] = []
  const fields = schema.fields.map((f) => {
    if (!idColumns.includes(f.name)) return f
    ids.push(f.id)
    return { ...f, required: true }
  })
  const missing = idColumns.filter((c) => !schema.fields.some((f) => f.name === c))
  if (missing.length) throw new SchemaError(`idColumns ${missing.map((c) => `'${c}'`).join(', ')} not in the records' schema`)
  return { ...schema, fields, 'identifier-field-ids': ids }
}
