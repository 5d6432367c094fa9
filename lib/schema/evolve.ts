/**
 * Schema evolution under the Iceberg spec's rules (https://iceberg.apache.org/spec/#schema-evolution):
 * add optional columns (also inside structs, list elements and map values), widen int → long,
 * float → double, decimal(P, S) → decimal(P', S) with P' > P, make a required field optional.
 * New fields get fresh ids above the table's last-column-id. Everything else — narrowing,
 * changing a type, adding a required column, changing a map key — is a SchemaError that names
 * the table, the field and both types.
 */
import { SchemaError } from '../errors.js'
import type { IcebergType, ListType, MapType, NestedField, Schema, StructType } from './types.js'
import { isList, isMap, isStruct } from './types.js'
import { decimalParams, maxFieldId, typeToString } from './walk.js'

/** True when a column of type `from` may be changed to `to` (equal types included). */
export function canPromote(from: IcebergType, to: IcebergType): boolean {
  if (typeof from !== 'string' || typeof to !== 'string') return false
  if (from === to) return true
  if (from === 'int' && to === 'long') return true
  if (from === 'float' && to === 'double') return true
  const a = decimalParams(from)
  const b = decimalParams(to)
  return a !== undefined && b !== undefined && a.scale === b.scale && b.precision >= a.precision
}

export interface EvolveOptions {
  /** Table name for messages. */
  table?: string
  /**
   * `add` (default; for schemas inferred from JSON records): only add fields the table lacks;
   * types of existing fields are left alone (coercion decides value by value).
   * `union` (for a writer schema such as Avro's): also widen types and make fields optional
   * where the incoming schema does, and reject incompatible types.
   */
  mode?: 'add' | 'union'
}

/**
 * The schema `current` becomes when it must hold what `incoming` describes (fields matched by
 * name; ids in `incoming` are ignored), or `undefined` when nothing changes. New fields are added
 * as optional (the spec allows no other way without a default) with ids above `lastColumnId`.
 * The result keeps `schema-id` + 1; the catalog's addSchema assigns the final id.
 */
export function evolveSchema(current: Schema, incoming: StructType, lastColumnId = 0, opts: EvolveOptions = {}): Schema | undefined {
  const ctx: Ctx = {
    table: opts.table ?? '(unnamed)',
    union: opts.mode === 'union',
    nextId: Math.max(lastColumnId, maxFieldId(current)) + 1,
    changed: false,
  }
  const fields = mergeFields(current.fields, incoming.fields, '', ctx)
  if (!ctx.changed) return undefined
  return { ...current, 'schema-id': current['schema-id'] + 1, fields }
}

interface Ctx {
  table: string
  union: boolean
  nextId: number
  changed: boolean
}

function mergeFields(current: NestedField[], incoming: NestedField[], prefix: string, ctx: Ctx): NestedField[] {
  const out = current.map((f) => {
    const inc = incoming.find((g) => g.name === f.name)
    if (!inc) return f
    const name = prefix + f.name
    const type = mergeType(f.type, inc.type, name, ctx)
    const required = f.required && !(ctx.union && !inc.required)
    if (required !== f.required) ctx.changed = true
    return type === f.type && required === f.required ? f : { ...f, type, required }
  })
  for (const inc of incoming) {
    if (current.some((f) => f.name === inc.name)) continue
    out.push({ ...freshField(inc, ctx), required: false })
    ctx.changed = true
  }
  return out
}

function mergeType(cur: IcebergType, inc: IcebergType, name: string, ctx: Ctx): IcebergType {
  if (isStruct(cur) && isStruct(inc)) {
    const fields = mergeFields(cur.fields, inc.fields, `${name}.`, ctx)
    return fields.length === cur.fields.length && fields.every((f, i) => f === cur.fields[i]) ? cur : { ...cur, fields }
  }
  if (isList(cur) && isList(inc)) {
    const element = mergeType(cur.element, inc.element, `${name}.element`, ctx)
    const required = cur['element-required'] && !(ctx.union && !inc['element-required'])
    if (element === cur.element && required === cur['element-required']) return cur
    ctx.changed = true
    return { ...cur, element, 'element-required': required } satisfies ListType
  }
  if (isMap(cur) && isMap(inc)) {
    if (ctx.union && !(typeof cur.key === 'string' && cur.key === inc.key) && !(isStruct(cur.key) && isStruct(inc.key)))
      throw incompatible(ctx, `${name}.key`, cur.key, inc.key, 'map keys cannot change')
    const value = mergeType(cur.value, inc.value, `${name}.value`, ctx)
    const required = cur['value-required'] && !(ctx.union && !inc['value-required'])
    if (value === cur.value && required === cur['value-required']) return cur
    ctx.changed = true
    return { ...cur, value, 'value-required': required } satisfies MapType
  }
  if (!ctx.union) return cur
  if (typeof cur === 'string' && typeof inc === 'string') {
    if (canPromote(inc, cur)) return cur // the incoming values fit the wider column as it is
    if (canPromote(cur, inc)) {
      ctx.changed = true
      return inc
    }
  }
  throw incompatible(ctx, name, cur, inc)
}

function incompatible(ctx: Ctx, name: string, from: IcebergType, to: IcebergType, why?: string): SchemaError {
  return new SchemaError(
    `table ${ctx.table}: field '${name}' cannot change from ${typeToString(from)} to ${typeToString(to)} (${why ?? 'only int → long, float → double and wider decimal precision are allowed'})`,
  )
}

/** A copy of a field (and its whole subtree) with fresh ids, Iceberg's order: a struct's fields, then their children. */
function freshField(f: NestedField, ctx: Ctx): NestedField {
  const id = ctx.nextId++
  return { ...f, id, type: freshType(f.type, ctx) }
}

function freshType(t: IcebergType, ctx: Ctx): IcebergType {
  if (isStruct(t)) {
    const ids = t.fields.map(() => ctx.nextId++)
    return { ...t, fields: t.fields.map((f, i) => ({ ...f, id: ids[i]!, type: freshType(f.type, ctx) })) }
  }
  if (isList(t)) {
    const id = ctx.nextId++
    return { ...t, 'element-id': id, element: freshType(t.element, ctx) }
  }
  if (isMap(t)) {
    const keyId = ctx.nextId++
    const valueId = ctx.nextId++
    return { ...t, 'key-id': keyId, key: freshType(t.key, ctx), 'value-id': valueId, value: freshType(t.value, ctx) }
  }
  return t
}

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
  const ctx: Ctx = { table, union: true, nextId: Math.max(lastColumnId, maxFieldId(current)) + 1, changed: false }
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

function widened(f: NestedField, to: string, name: string, ctx: Ctx): IcebergType {
  if (typeof f.type === 'string' && canPromote(f.type, to)) return f.type === to ? f.type : to
  throw incompatible(ctx, name, f.type, to)
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
