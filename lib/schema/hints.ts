/**
 * `columns` type hints from a table's options (`{"reading": "double", "id": "long"}`): the pinned
 * type replaces the inferred one for a field of that name (dots for nested struct fields), when a
 * table is created and when a field first appears. Inference guesses from the records at hand; a
 * hint is how a user says what a column is before the records can.
 */
import type { IcebergType, NestedField, Schema, StructType } from './types.js'

export function applyColumnHints(schema: Schema, hints: Readonly<Record<string, string>> | undefined): Schema {
  if (!hints || Object.keys(hints).length === 0) return schema
  const normal = new Map(Object.entries(hints).map(([name, type]) => [name, type.replace(/\s+/g, '').replace(',', ', ')]))
  return { ...schema, fields: pin(schema, '', normal).fields }
}

function pin<T extends StructType>(struct: T, prefix: string, hints: Map<string, string>): T {
  const fields = struct.fields.map((f): NestedField => {
    const path = `${prefix}${f.name}`
    const hint = hints.get(path)
    if (hint !== undefined) return { ...f, type: hint as IcebergType }
    if (typeof f.type === 'object' && f.type.type === 'struct') return { ...f, type: pin(f.type, `${path}.`, hints) }
    return f
  })
  return { ...struct, fields }
}
