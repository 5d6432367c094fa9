/**
 * Schema inference from decoded JSON records (auto-created tables, new fields of evolving ones).
 * Objects → struct, arrays → list, integral numbers → long, other numbers → double, ISO-8601
 * date-times with a zone → timestamptz, booleans → boolean, other strings → string. A date-time
 * with non-zero digits past microseconds is `timestamptz_ns` in a format-v3 table; format v2 has
 * no nanosecond type, so there such text counts as a string (stored exactly, never floored). Across
 * records a field takes the kind most of its values have (a strict majority; integers and
 * doubles together count as numbers, double when any is fractional); without a majority it is a
 * string (coercion stores any value as text). A minority of other values never decides the type:
 * the writer dead-letters them when they do not coerce. Every inferred field is
 * optional, except identifier columns, which Iceberg requires to be required. A field that was
 * only ever null, `[]` or `{}` says nothing about its type and is left out until it has a value.
 */
import { SchemaError } from '../errors.js'
import type { IcebergType, NestedField, Schema, StructType } from './types.js'
import { fastIsoMicros, isoToEpochNanos, isZonedTimestampText } from './temporal.js'

export interface InferOptions {
  /** First field id to assign (default 1). */
  startId?: number
  /** Schema id of the result (default 0). */
  schemaId?: number
  /** Top-level columns that identify a row: made required and listed in `identifier-field-ids`. */
  idColumns?: string[]
  /** Deepest nesting accepted (default 64); deeper values throw SchemaError instead of overflowing the stack. */
  maxDepth?: number
  /** The table's format version (default 2): nanosecond date-times are a type only from v3. */
  formatVersion?: number
}

/** What one field's values looked like across the records: how many of each kind. */
type Kind = 'boolean' | 'long' | 'bigLong' | 'double' | 'timestamptz' | 'timestamptzNanos' | 'string' | 'binary'
interface Stats {
  /** Non-null values seen. */
  n: number
  prim: Partial<Record<Kind, number>>
  struct?: { n: number; fields: Map<string, Stats> }
  list?: { n: number; element: Stats }
}

const newStats = (): Stats => ({ n: 0, prim: {} })

/** Zoned date-time text: µs, ns (non-zero digits past µs: v3 only, else text), or not a date-time. */
function textKind(v: string, nanos: boolean): Kind {
  if (!isZonedTimestampText(v)) return 'string'
  if (fastIsoMicros(v) !== undefined || isoToEpochNanos(v)! % 1000n === 0n) return 'timestamptz'
  return nanos ? 'timestamptzNanos' : 'string'
}

function primKind(v: unknown, nanos: boolean): Kind | undefined {
  switch (typeof v) {
    case 'boolean':
      return 'boolean'
    case 'bigint':
      return Number.isSafeInteger(Number(v)) ? 'long' : 'bigLong'
    case 'number':
      return Number.isSafeInteger(v) ? 'long' : 'double'
    case 'string':
      return textKind(v, nanos)
    case 'object':
      break
    default:
      return 'string'
  }
  const obj = v as Record<string, unknown>
  if (obj.isLosslessNumber === true && typeof obj.value === 'string') {
    const text = obj.value
    // An integer literal is a long, also beyond int64 (such a value is then a dead letter that
    // names it, never a rounded double); a literal with a point or an exponent is a double.
    if (!/^[+-]?\d+$/.test(text)) return 'double'
    return Number.isSafeInteger(Number(text)) ? 'long' : 'bigLong'
  }
  if (v instanceof Date) return 'timestamptz'
  if (v instanceof Uint8Array) return 'binary'
  return undefined
}

/** Count `v` into `stats`. Recursion depth is the value's nesting, refused past `maxDepth`. */
function observe(stats: Stats, v: unknown, depth: number, maxDepth: number, nanos: boolean): void {
  if (v === null || v === undefined) return
  if (depth > maxDepth) throw new SchemaError(`cannot infer a schema: a value nests deeper than ${maxDepth} levels`)
  stats.n++
  const kind = primKind(v, nanos)
  if (kind !== undefined) {
    stats.prim[kind] = (stats.prim[kind] ?? 0) + 1
    return
  }
  if (Array.isArray(v)) {
    const list = (stats.list ??= { n: 0, element: newStats() })
    list.n++
    for (const e of v) observe(list.element, e, depth + 1, maxDepth, nanos)
    return
  }
  const struct = (stats.struct ??= { n: 0, fields: new Map() })
  struct.n++
  for (const [k, e] of v instanceof Map ? v : Object.entries(v as object)) {
    const key = String(k)
    let field = struct.fields.get(key)
    if (!field) struct.fields.set(key, (field = newStats()))
    observe(field, e, depth + 1, maxDepth, nanos)
  }
}

/**
 * A field with no type information: only null, `[]`, `{}`, `[null]`… It still counts when the
 * field's type is chosen (`{}` in one record and `false` in another is a tie, so a string), but a
 * field whose values say nothing is left out of the schema.
 */
function isEmpty(stats: Stats): boolean {
  if (Object.keys(stats.prim).length > 0) return false
  if (stats.list && !isEmpty(stats.list.element)) return false
  if (stats.struct && [...stats.struct.fields.values()].some((f) => !isEmpty(f))) return false
  return true
}

type Choice = { kind: 'struct'; fields: Map<string, Stats> } | { kind: 'list'; element: Stats } | { kind: Exclude<Kind, 'bigLong' | 'timestamptzNanos'> | 'timestamptz_ns' }

/**
 * The type of a field: the kind that holds a strict majority of its non-null values (integers and
 * doubles counted together as numbers), else string, which holds anything. So a minority of
 * mistyped values never decides a column: they are dead letters when coerced. Numbers are double
 * when any is fractional, unless integers beyond 2^53 (which a double cannot hold) outnumber them.
 * Below a list the values must agree (as before: any conflict → string).
 */
function choose(stats: Stats, inList: boolean): Choice {
  const p = stats.prim
  const longs = (p.long ?? 0) + (p.bigLong ?? 0)
  const numbers = longs + (p.double ?? 0)
  const counts: [Choice['kind'], number][] = [
    ['boolean', p.boolean ?? 0],
    ['long', numbers],
    ['timestamptz', (p.timestamptz ?? 0) + (p.timestamptzNanos ?? 0)],
    ['string', p.string ?? 0],
    ['binary', p.binary ?? 0],
    ['struct', stats.struct?.n ?? 0],
    ['list', stats.list?.n ?? 0],
  ]
  const [kind, count] = counts.reduce((a, b) => (b[1] > a[1] ? b : a))
  // Inside a list the elements of ONE record disagree: widen (any conflict → string), so a
  // record on its own always fits the schema inferred from it.
  if (inList ? count < stats.n : count * 2 <= stats.n) return { kind: 'string' }
  // An object that says nothing (`{}`, all-null fields) does not beat a value that does.
  if (kind === 'struct') return [...stats.struct!.fields.values()].every(isEmpty) ? { kind: 'string' } : { kind, fields: stats.struct!.fields }
  if (kind === 'list') return { kind, element: stats.list!.element }
  if (kind === 'long' && (p.double ?? 0) > 0 && (p.bigLong ?? 0) <= (p.double ?? 0)) return { kind: 'double' }
  // One nanosecond value makes the column nanosecond: it holds the microsecond ones exactly too.
  if (kind === 'timestamptz' && (p.timestamptzNanos ?? 0) > 0) return { kind: 'timestamptz_ns' }
  return { kind }
}

/** Infer an Iceberg schema from records, with fresh ids (Iceberg's order: a struct's fields first, then their children). */
export function inferSchema(records: readonly object[], opts: InferOptions = {}): Schema {
  const root = newStats()
  const maxDepth = opts.maxDepth ?? 64
  const nanos = (opts.formatVersion ?? 2) >= 3
  for (const r of records) observe(root, r, 0, maxDepth, nanos)
  let next = opts.startId ?? 1
  const struct = toStruct(root.struct?.fields ?? new Map(), () => next++)
  const schema: Schema = { type: 'struct', 'schema-id': opts.schemaId ?? 0, fields: struct.fields }
  const idColumns = opts.idColumns ?? []
  if (idColumns.length) {
    schema['identifier-field-ids'] = idColumns.map((name) => {
      const field = schema.fields.find((f) => f.name === name)
      if (!field) throw new SchemaError(`identifier column '${name}' is not in the records (fields: ${schema.fields.map((f) => f.name).join(', ') || 'none'})`)
      if (typeof field.type !== 'string' || field.type === 'double' || field.type === 'float')
        throw new SchemaError(`identifier column '${name}' must be a non-floating primitive, got ${typeof field.type === 'string' ? field.type : field.type.type}`)
      field.required = true
      return field.id
    })
  }
  return schema
}

function toStruct(fields: Map<string, Stats>, nextId: () => number, inList = false): StructType {
  const out: NestedField[] = [...fields]
    .filter(([, s]) => !isEmpty(s))
    .map(([name]) => ({ id: nextId(), name, required: false, type: 'string' }))
  out.forEach((f) => (f.type = toType(fields.get(f.name)!, nextId, inList)))
  return { type: 'struct', fields: out }
}

function toType(stats: Stats, nextId: () => number, inList: boolean): IcebergType {
  const choice = choose(stats, inList)
  if (choice.kind === 'struct') return toStruct(choice.fields, nextId, inList)
  if (choice.kind === 'list') {
    const id = nextId()
    const element = isEmpty(choice.element) ? 'string' : toType(choice.element, nextId, true)
    return { type: 'list', 'element-id': id, element, 'element-required': false }
  }
  return choice.kind
}
