/**
 * The schema a table must evolve to so one batch's records fit, by lib/schema's one rule set
 * (evolve.ts, promote.ts), from every source the batch has:
 *
 * 1. each distinct writer schema (Avro via Confluent or Glue, Connect envelopes, the string and
 *    bytes formats' one-field schemas) — `source: 'schema'`: widens, relaxes, adds, rejects;
 * 2. the schema inferred from the JSON records the table does not cover — `'records'`: adds fields;
 * 3. what the values that did not coerce need (./columnar/needs.ts) — `'values'`: a promoted
 *    type where the spec allows one that holds the value, optional where a required field had none.
 *
 * A rejected change (one the spec forbids) is not applied; the records of that writer schema
 * that carry a value there get a dead-letter reason naming the field, the table type, the
 * writer's type and the value. Pure: the catalog commit and its retries are in tables.ts.
 */
import { inferSchema, evolveSchema, sameName, type EvolveOptions, canPromote, isList, isMap, isStruct, type IcebergType, type ListType, type MapType, type NestedField, type Schema, type StructType } from '../schema/index.js'
import { describe, NEEDS_EXACT, type Coerced, type Coercer } from './columnar/coerce.js'
import { exactJson } from './decode.js'
import type { Sample, TableState } from './table-state.js'
import { valueNeeds, type ValueNeed } from './columnar/needs.js'
import { fieldValue } from './columnar/values.js'

export interface EvolutionInput {
  /** Writer schemas of the batch's records, each with the values decoded with it. */
  declared: { schema: Schema; values: Record<string, unknown>[] }[]
  /** Values without a writer schema (JSON) that have fields the table lacks. */
  plain: Record<string, unknown>[]
  /** Values whose coercion to the table's schema failed. */
  failing: Record<string, unknown>[]
}

export interface TableView {
  name: string
  schema: Schema
  lastColumnId: number
  formatVersion: number
  caseInsensitive: boolean
  /** Partition transforms by source field id. */
  transforms: ReadonlyMap<number, readonly string[]>
}

export interface EvolutionPlan {
  /** The schema to commit, or undefined when the table already holds everything. */
  target?: Schema
  /** Dead-letter reasons of records whose writer schema asks for a change the spec forbids, by value. */
  rejected: Map<object, string>
}

/** What a batch's samples say: every distinct writer schema (with its values), and the values `coerce` (the table's current schema) does not fully hold. */
export function evolutionInput(samples: Sample[], coerce: Coercer, coerced: (sample: Sample, result: Coerced) => void): EvolutionInput {
  const declared = new Map<string, EvolutionInput['declared'][number]>()
  const byObject = new Map<Schema, string>()
  const plain: Record<string, unknown>[] = []
  const failing: Record<string, unknown>[] = []
  for (const s of samples) {
    if (s.schema) {
      let key = byObject.get(s.schema)
      if (key === undefined) byObject.set(s.schema, (key = JSON.stringify(s.schema.fields)))
      let entry = declared.get(key)
      if (!entry) declared.set(key, (entry = { schema: s.schema, values: [] }))
      entry.values.push(s.value)
    }
    try {
      let result: Coerced
      try {
        result = coerce(s.value, s.fast)
        coerced(s, result)
      } catch (err) {
        // A JSON.parse value where digits matter: judged by the exact decoding, not cached.
        if (err !== NEEDS_EXACT) throw err
        result = coerce(exactJson(s.record))
      }
      if (result.unknown.length > 0 && !s.schema) plain.push(s.value)
    } catch {
      failing.push(exactValue(s))
      if (!s.schema) plain.push(s.value) // a bad value hides whether other fields are new: let inference look
    }
  }
  return { declared: [...declared.values()], plain, failing }
}

/** The sample's exact value (its JSON.parse value when it has no exact decoding, or that fails). */
function exactValue(s: Sample): Record<string, unknown> {
  try {
    return s.fast ? exactJson(s.record) : s.value
  } catch {
    return s.value
  }
}

/** The table as planning sees it. */
export function tableView(state: TableState): TableView {
  const transforms = new Map<number, string[]>()
  for (const f of state.spec.fields) transforms.set(f['source-id'], [...(transforms.get(f['source-id']) ?? []), f.transform.replace(/\[.*$/, '')])
  return {
    name: state.name,
    schema: state.schema,
    lastColumnId: state.metadata['last-column-id'],
    formatVersion: state.metadata['format-version'],
    caseInsensitive: state.options.caseInsensitive,
    transforms,
  }
}

/** `infer` types the new fields of values without a writer schema (default: plain inference). */
export function planEvolution(table: TableView, input: EvolutionInput, infer: (values: Record<string, unknown>[]) => StructType = (values) => inferSchema(values)): EvolutionPlan {
  const opts = (source: EvolveOptions['source']): EvolveOptions => ({
    table: table.name,
    source,
    formatVersion: table.formatVersion,
    caseInsensitive: table.caseInsensitive,
    transforms: table.transforms,
  })
  let schema = table.schema
  let changed = false
  const apply = (incoming: StructType, source: EvolveOptions['source']) => {
    const r = evolveSchema(schema, incoming, table.lastColumnId, opts(source))
    if (r.schema) {
      // One schema change per batch, however many sources contributed: keep the first new id.
      schema = { ...r.schema, 'schema-id': table.schema['schema-id'] + 1 }
      changed = true
    }
    return r.rejected
  }
  const rejected = new Map<object, string>()
  for (const { schema: declared, values } of input.declared) {
    for (const rej of apply(declared, 'schema')) {
      for (const v of values) {
        const at = valueAt(v, rej.path.split('.'), declared, table.caseInsensitive)
        if (at !== undefined && at !== null && !rejected.has(v)) rejected.set(v, `${rej.reason}: value ${describe(at)}`)
      }
    }
  }
  if (input.plain.length) apply(infer(input.plain), 'records')
  if (input.failing.length) {
    const needsOpts = { formatVersion: table.formatVersion, caseInsensitive: table.caseInsensitive, identifiers: new Set(schema['identifier-field-ids'] ?? []), transforms: table.transforms }
    const needs = input.failing.filter((v) => !rejected.has(v)).flatMap((v) => valueNeeds(schema, v, needsOpts))
    if (needs.length) apply(needsSchema(schema, needs, table.formatVersion), 'values')
  }
  return changed ? { target: schema, rejected } : { rejected }
}

/**
 * A copy of `schema` with what `needs` ask for applied (promoted types, optional fields) — the
 * `values` source for evolveSchema, which checks it against the same rules. Of two types needed
 * at one path, the wider.
 */
export function needsSchema(schema: Schema, needs: ValueNeed[], formatVersion: number): StructType {
  const copy = structuredClone(schema)
  for (const need of needs) {
    const slot = slotAt(copy, need.path)
    if (!slot) continue
    if (need.optional) slot.optional()
    const current = slot.get()
    if (need.type !== undefined && typeof current === 'string' && canPromote(current, need.type, { formatVersion })) slot.set(need.type)
  }
  return copy
}

interface Slot {
  get(): IcebergType
  set(t: IcebergType): void
  optional(): void
}

/** The place of a path's type in a (copied) tree: a struct field, a list's element or a map's value. */
function slotAt(root: StructType, path: string[]): Slot | undefined {
  let slot: Slot | undefined
  let type: IcebergType = root
  for (const seg of path) {
    if (isStruct(type)) {
      const f: NestedField | undefined = type.fields.find((g) => g.name === seg)
      if (!f) return undefined
      slot = { get: () => f.type, set: (t) => (f.type = t), optional: () => (f.required = false) }
    } else if (isList(type) && seg === 'element') {
      const l: ListType = type
      slot = { get: () => l.element, set: (t) => (l.element = t), optional: () => (l['element-required'] = false) }
    } else if (isMap(type) && seg === 'value') {
      const m: MapType = type
      slot = { get: () => m.value, set: (t) => (m.value = t), optional: () => (m['value-required'] = false) }
    } else return undefined
    type = slot.get()
  }
  return slot
}

/** The first non-null value at an Iceberg dotted path (`items.element.qty`) of a value decoded with `schema`. */
function valueAt(v: unknown, path: string[], type: IcebergType, ci: boolean): unknown {
  if (path.length === 0) return v
  if (v === null || v === undefined) return undefined
  if (isStruct(type)) {
    const f = type.fields.find((g) => sameName(g.name, path[0]!, ci))
    return f && typeof v === 'object' ? valueAt(fieldValue(v as Record<string, unknown>, f.name, ci), path.slice(1), f.type, ci) : undefined
  }
  const items = isList(type) && Array.isArray(v) ? v : isMap(type) ? (v instanceof Map ? [...v.values()] : Object.values(v as object)) : []
  const inner = isList(type) ? type.element : isMap(type) ? (path[0] === 'key' ? type.key : type.value) : undefined
  if (inner === undefined) return undefined
  for (const item of items) {
    const found = valueAt(item, path.slice(1), inner, ci)
    if (found !== undefined && found !== null) return found
  }
  return undefined
}
