/**
 * Schema evolution: the one rule set every source of a new schema goes through (writer schemas
 * from Avro, Connect envelopes and the Confluent/Glue registries; schemas inferred from JSON
 * records; what values that did not fit the table need). Under the Iceberg spec
 * (https://iceberg.apache.org/spec/#schema-evolution, ./promote.ts):
 *
 * - new fields are added as optional (the spec allows no required column without a default), at
 *   any depth — struct fields, list elements, map values, into a struct that was empty — with
 *   fresh ids from the table's last-column-id in Iceberg Java's order (UpdateSchema.addColumn +
 *   AssignFreshIds: deeper additions inside existing structs before later siblings; a new struct's
 *   own fields before their children);
 * - primitive types are promoted only as the table's format version allows, at any depth;
 * - a field that is optional in the source, or that a writer schema no longer has, becomes
 *   optional (required → optional); identifier fields stay required;
 * - nothing is ever dropped, renamed or narrowed: a narrower incoming type (int into a long
 *   column) is no change, its values fit.
 * A change the spec forbids (long → int is not one: it fits; string → long, double → long, a
 * struct where the table has a primitive, a changed map key) is never applied; it is returned as
 * a `Rejection` so the caller can dead-letter the records that carry it.
 *
 * Names match case-sensitively unless `caseInsensitive` (a per-table option); ids in `incoming`
 * are ignored.
 */
import type { IcebergType, NestedField, Schema, StructType } from './types.js'
import { isList, isMap, isStruct } from './types.js'
import { canPromote, promotionRule } from './promote.js'
import { maxFieldId, relaxEmptyStructs, typeToString } from './walk.js'

/**
 * Where `incoming` comes from, which decides how much it says:
 * - `schema`: a writer schema (Avro, Connect, registry). Its types are the producer's word: a
 *   wider type widens the column, an optional or missing field relaxes a required one, a type
 *   that cannot be promoted is rejected.
 * - `records`: inferred from JSON records. It only adds fields; its types for existing fields
 *   say nothing (every JSON integer infers as long), so coercion decides value by value.
 * - `values`: what values that did not fit need (a promoted type, an optional field), built by
 *   the writer from the table's own structure: widened and relaxed like `schema`, missing fields untouched.
 */
export type EvolveSource = 'schema' | 'records' | 'values'

export interface EvolveOptions {
  /** Table name for messages. */
  table?: string
  source?: EvolveSource
  /** The table's format version (promotion rules differ from v3). */
  formatVersion?: number
  caseInsensitive?: boolean
  /** Partition transforms by source field id: a date partition source is only promoted where the transform's values stay the same. */
  transforms?: ReadonlyMap<number, readonly string[]>
}

/** A change the spec forbids, not applied: `path` is the Iceberg dotted name (`items.element.qty`). */
export interface Rejection {
  path: string
  tableType: IcebergType
  incomingType: IcebergType
  reason: string
}

export interface Evolution {
  /** The new schema (`schema-id` + 1; the catalog's addSchema assigns the final id), or undefined when nothing changes. */
  schema?: Schema
  rejected: Rejection[]
}

interface Ctx {
  table: string
  source: EvolveSource
  formatVersion: number
  ci: boolean
  transforms: ReadonlyMap<number, readonly string[]>
  identifiers: Set<number>
  nextId: number
  changed: boolean
  rejected: Rejection[]
}

/** The schema `current` becomes when it must hold what `incoming` describes (see the module comment). */
export function evolveSchema(current: Schema, incoming: StructType, lastColumnId = 0, opts: EvolveOptions = {}): Evolution {
  const ctx: Ctx = {
    table: opts.table ?? '(unnamed)',
    source: opts.source ?? 'records',
    formatVersion: opts.formatVersion ?? 2,
    ci: opts.caseInsensitive ?? false,
    transforms: opts.transforms ?? new Map(),
    identifiers: new Set(current['identifier-field-ids'] ?? []),
    nextId: Math.max(lastColumnId, maxFieldId(current)) + 1,
    changed: false,
    rejected: [],
  }
  const fields = mergeFields(current.fields, incoming.fields, '', ctx)
  return ctx.changed ? { schema: { ...current, 'schema-id': current['schema-id'] + 1, fields }, rejected: ctx.rejected } : { rejected: ctx.rejected }
}

/** Name equality under the table's case rule. */
export const sameName = (a: string, b: string, ci: boolean): boolean => a === b || (ci && a.toLowerCase() === b.toLowerCase())

function mergeFields(current: NestedField[], incoming: NestedField[], prefix: string, ctx: Ctx): NestedField[] {
  const out = current.map((f) => {
    const inc = incoming.find((g) => sameName(g.name, f.name, ctx.ci))
    const relax = f.required && !ctx.identifiers.has(f.id) && (inc ? ctx.source !== 'records' && !inc.required : ctx.source === 'schema')
    if (relax) ctx.changed = true
    const type = inc ? mergeType(f.type, inc.type, prefix + f.name, f.id, ctx) : f.type
    return type === f.type && !relax ? f : { ...f, type, required: f.required && !relax }
  })
  for (const given of incoming) {
    if (out.some((f) => sameName(f.name, given.name, ctx.ci))) continue
    if (ctx.source === 'values') continue // values only name fields the table has
    const inc = ctx.formatVersion < 3 ? withoutV3Types(given, prefix, (path, type) => rejectV3(ctx, path, type)) : given
    if (inc === undefined) continue
    const [added] = relaxEmptyStructs({ type: 'struct', fields: [freshField(inc, ctx)] }).fields
    out.push({ ...added!, required: false })
    ctx.changed = true
  }
  return out
}

function mergeType(cur: IcebergType, inc: IcebergType, name: string, id: number, ctx: Ctx): IcebergType {
  const relaxes = (curRequired: boolean, incRequired: boolean) => curRequired && ctx.source !== 'records' && !incRequired
  if (isStruct(cur) && isStruct(inc)) {
    const fields = mergeFields(cur.fields, inc.fields, `${name}.`, ctx)
    return fields.length === cur.fields.length && fields.every((f, i) => f === cur.fields[i]) ? cur : { ...cur, fields }
  }
  if (isList(cur) && isList(inc)) {
    const element = mergeType(cur.element, inc.element, `${name}.element`, cur['element-id'], ctx)
    const relax = relaxes(cur['element-required'], inc['element-required'])
    if (element === cur.element && !relax) return cur
    ctx.changed = true
    return { ...cur, element, 'element-required': cur['element-required'] && !relax }
  }
  if (isMap(cur) && isMap(inc)) {
    if (ctx.source !== 'records' && typeToString(cur.key) !== typeToString(inc.key) && !(isStruct(cur.key) && isStruct(inc.key)))
      return reject(ctx, `${name}.key`, cur.key, inc.key, 'map keys cannot change')
    const value = mergeType(cur.value, inc.value, `${name}.value`, cur['value-id'], ctx)
    const relax = relaxes(cur['value-required'], inc['value-required'])
    if (value === cur.value && !relax) return cur
    ctx.changed = true
    return { ...cur, value, 'value-required': cur['value-required'] && !relax }
  }
  // Types of existing fields inferred from JSON say nothing: coercion decides value by value.
  if (ctx.source === 'records') return cur
  const rule = { formatVersion: ctx.formatVersion, transforms: ctx.transforms.get(id) }
  if (typeof cur === 'string' && typeof inc === 'string') {
    if (canPromote(inc, cur, { formatVersion: ctx.formatVersion })) return cur // the incoming values fit the column as it is
    if (canPromote(cur, inc, rule)) {
      ctx.changed = true
      return inc
    }
    if (canPromote(cur, inc, { formatVersion: ctx.formatVersion })) return reject(ctx, name, cur, inc, `it is the source of a ${rule.transforms?.join('/')} partition field, whose values would change`)
  } else if (ctx.formatVersion >= 3 && cur === 'unknown') {
    ctx.changed = true
    return freshType(inc, ctx)
  }
  return reject(ctx, name, cur, inc)
}

function reject(ctx: Ctx, path: string, tableType: IcebergType, incomingType: IcebergType, why?: string): IcebergType {
  const reason = `table ${ctx.table}: field '${path}' is ${typeToString(tableType)} in the table and cannot become ${typeToString(incomingType)} (${why ?? promotionRule(ctx.formatVersion)})`
  ctx.rejected.push({ path, tableType, incomingType, reason })
  return tableType
}

/** Types the spec adds in format v3 that Floe's sources produce (Avro timestamp-nanos, local-timestamp-nanos). */
const V3_TYPES = new Set(['timestamp_ns', 'timestamptz_ns'])

/**
 * `f` without its v3-only types, for a format-v2 table (Iceberg Java refuses them there: "not
 * supported until v3"; Spark, PyIceberg and DuckDB then refuse the whole table): a struct keeps
 * its other fields; a field, list or map holding one is dropped. `dropped` hears each path.
 */
export function withoutV3Types(f: NestedField, prefix = '', dropped: (path: string, type: IcebergType) => void = () => undefined): NestedField | undefined {
  const path = prefix + f.name
  if (isStruct(f.type)) {
    const fields = f.type.fields.flatMap((g) => withoutV3Types(g, `${path}.`, dropped) ?? [])
    return fields.length === f.type.fields.length && fields.every((g, i) => g === (f.type as StructType).fields[i]) ? f : { ...f, type: { ...f.type, fields } }
  }
  const leaf = v3Leaf(f.type, path)
  if (leaf === undefined) return f
  dropped(leaf.path, leaf.type)
  return undefined
}

/** `schema` without its v3-only types (see withoutV3Types): what a format-v2 table is created with. */
export const withoutV3Fields = <T extends StructType>(schema: T): T => ({ ...schema, fields: schema.fields.flatMap((f) => withoutV3Types(f) ?? []) })

function v3Leaf(t: IcebergType, path: string): { path: string; type: IcebergType } | undefined {
  if (typeof t === 'string') return V3_TYPES.has(t) ? { path, type: t } : undefined
  if (isStruct(t)) for (const f of t.fields) {
    const found = v3Leaf(f.type, `${path}.${f.name}`)
    if (found) return found
  }
  if (isList(t)) return v3Leaf(t.element, `${path}.element`)
  if (isMap(t)) return v3Leaf(t.key, `${path}.key`) ?? v3Leaf(t.value, `${path}.value`)
  return undefined
}

function rejectV3(ctx: Ctx, path: string, type: IcebergType): void {
  const reason = `table ${ctx.table}: field '${path}' is ${typeToString(type)}, a type format v2 does not have (Iceberg: v3 only), so the table has no such column (send timestamp-micros, or write to a format-v3 table)`
  ctx.rejected.push({ path, tableType: type, incomingType: type, reason })
}

/** A copy of a field (and its whole subtree) with fresh ids, Iceberg's order: a struct's fields, then their children. */
export function freshField(f: NestedField, ctx: { nextId: number }): NestedField {
  const id = ctx.nextId++
  return { ...f, id, type: freshType(f.type, ctx) }
}

function freshType(t: IcebergType, ctx: { nextId: number }): IcebergType {
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
