/**
 * Explicit schema changes addressed by dotted name (like Iceberg Java's UpdateSchema), under the
 * same promotion rule as evolution (./promote.ts): for tools and tests that change a table by hand.
 */
import { SchemaError } from '../errors.js'
import { freshField } from './evolve.js'
import { canPromote, promotionRule } from './promote.js'
import type { IcebergType, NestedField, Schema } from './types.js'
import { isList, isMap, isStruct } from './types.js'
import { maxFieldId, typeToString } from './walk.js'

/** One explicit change, addressed by dotted name (`''` or omitted parent = the table's top level). */
export type SchemaUpdate =
  | { op: 'add'; parent?: string; name: string; type: IcebergType; required?: boolean; doc?: string }
  | { op: 'widen'; field: string; type: string }
  | { op: 'make-optional'; field: string }

/**
 * Apply explicit updates in order (like Iceberg Java's UpdateSchema). Throws SchemaError for
 * anything the spec forbids: a required new column, narrowing or changing a type, an unknown or
 * duplicate name. A parent is a struct, a list whose element is a struct, or a map whose value is one.
 */
export function applySchemaUpdates(current: Schema, updates: SchemaUpdate[], lastColumnId = 0, opts: { table?: string } = {}): Schema {
  const table = opts.table ?? '(unnamed)'
  const ctx = { table, nextId: Math.max(lastColumnId, maxFieldId(current)) + 1 }
  let fields = current.fields
  for (const u of updates) {
    if (u.op === 'add') {
      if (u.required) throw new SchemaError(`table ${table}: cannot add required column '${dotted(u.parent, u.name)}' (${typeToString(u.type)}): the spec only allows adding optional columns`)
      const field = { ...freshField({ id: 0, name: u.name, required: false, type: u.type, ...(u.doc ? { doc: u.doc } : {}) }, ctx) }
      fields = editStruct(fields, u.parent ?? '', '', table, (struct) => {
        if (struct.some((f) => f.name === u.name)) throw new SchemaError(`table ${table}: cannot add column '${dotted(u.parent, u.name)}': it already exists`)
        return [...struct, field]
      })
    } else {
      const path = u.field.split('.')
      const leaf = path.pop()!
      fields = editStruct(fields, path.join('.'), '', table, (struct) => {
        const i = struct.findIndex((f) => f.name === leaf)
        if (i < 0) throw new SchemaError(`table ${table}: no field '${u.field}'`)
        const f = struct[i]!
        const next = u.op === 'make-optional' ? { ...f, required: false } : { ...f, type: widened(f, u.type, u.field, ctx) }
        return struct.map((g, j) => (j === i ? next : g))
      })
    }
  }
  return { ...current, 'schema-id': current['schema-id'] + 1, fields }
}

function widened(f: NestedField, to: string, name: string, ctx: { table: string }): IcebergType {
  if (typeof f.type === 'string' && canPromote(f.type, to)) return f.type === to ? f.type : to
  throw new SchemaError(`table ${ctx.table}: field '${name}' cannot change from ${typeToString(f.type)} to ${to} (${promotionRule()})`)
}

const dotted = (parent: string | undefined, name: string) => (parent ? `${parent}.${name}` : name)

/** Rebuild the tree with the struct at `path` (dotted, through list elements and map values) replaced by `edit(fields)`. */
function editStruct(fields: NestedField[], path: string, seen: string, table: string, edit: (fields: NestedField[]) => NestedField[]): NestedField[] {
  if (path === '') return edit(fields)
  const [head, ...rest] = path.split('.')
  const i = fields.findIndex((f) => f.name === head)
  if (i < 0) throw new SchemaError(`table ${table}: no field '${seen}${head}'`)
  const f = fields[i]!
  const type = editIn(f.type, rest, `${seen}${head}.`, table, edit)
  return fields.map((g, j) => (j === i ? { ...f, type } : g))
}

function editIn(t: IcebergType, rest: string[], seen: string, table: string, edit: (fields: NestedField[]) => NestedField[]): IcebergType {
  if (isList(t) && rest[0] === 'element') return { ...t, element: editIn(t.element, rest.slice(1), `${seen}element.`, table, edit) }
  if (isList(t)) return { ...t, element: editIn(t.element, rest, seen, table, edit) }
  if (isMap(t) && rest[0] === 'value') return { ...t, value: editIn(t.value, rest.slice(1), `${seen}value.`, table, edit) }
  if (isMap(t)) return { ...t, value: editIn(t.value, rest, seen, table, edit) }
  if (!isStruct(t)) throw new SchemaError(`table ${table}: '${seen.slice(0, -1)}' is ${typeToString(t)}, not a struct`)
  return { ...t, fields: editStruct(t.fields, rest.join('.'), seen, table, edit) }
}
