/**
 * Coerce decoded records (plain JS objects from JSON or Avro) to an Iceberg schema. A coercer is
 * compiled once per (schema, table) into closures, so the schema is not interpreted per record.
 *
 * Coerced values ("rows") are what arrow-build.ts and lib/iceberg's transforms and metrics take:
 *   boolean → boolean; int, date (days since epoch) → number; long, time (µs), timestamp[tz] (µs),
 *   timestamp[tz]_ns (ns) → bigint; float, double → number; decimal(P, S) → unscaled bigint;
 *   string → string; uuid, fixed[L], binary → Uint8Array; struct → object keyed by field name;
 *   list → array; map → Map; null → null.
 * Accepted inputs: timestamps from ISO-8601 text (no zone = UTC), epoch milliseconds (number or
 * bigint) or Date; dates from `YYYY-MM-DD` or days since epoch; times from `HH:MM:SS[.f]` or
 * milliseconds of the day; decimals from numbers or numeric text (exact, rounded half up to the
 * scale); integers from integral numbers, bigints, integer text or lossless-json numbers (range-
 * checked); uuid from text; binary and fixed from base64; strings from text, numbers and booleans
 * (objects and arrays as their JSON text, the fallback column type of inference); maps from JSON
 * objects (keys coerced to the key type) or Map.
 */
import { RecordError, SchemaError } from '../../errors.js'
import { isList, isMap, isStruct, type IcebergType, type NestedField, type StructType, decimalParams } from '../../schema/index.js'
import { compilePrimitive, Failure, safeJson, type Convert, type Ctx } from './primitives.js'
import { estimateRowBytes, KEY_OVERHEAD, OBJECT_OVERHEAD } from './sizes.js'
import { compiledStruct, emptyRow, inlineKind, rowFactory } from './struct-code.js'
import { fieldValue, losslessText } from './values.js'

export type Row = Record<string, unknown>

/** A field present in a record but not in the schema: Iceberg-style dotted path (`items.element.sku`) and a sample value. */
export interface UnknownField {
  path: string
  value: unknown
}

export interface Coerced {
  row: Row
  /** Unknown fields with a non-null value (empty when there are none). */
  unknown: UnknownField[]
  /** `estimateRowBytes(row)` (sizes.ts), summed while the row was built: what the buffers charge for it. */
  bytes: number
}

/**
 * `fast`: the record is JSON.parse's value (lib/codec parseJsonObjectFast). Where its digits could
 * differ from the exact decoding (a number into a string or decimal column, an object or array
 * into a string column) or any value fails, the coercer throws NeedsExact instead: the caller
 * decodes that record exactly and coerces it again, so the row and every reason are as if it had
 * been decoded exactly from the start.
 */
export type Coercer = (record: unknown, fast?: boolean) => Coerced

/** Thrown (one instance) by a `fast` coercion that needs the record's exact decoding. */
export class NeedsExact {
  readonly needsExact = true
}
export const NEEDS_EXACT = new NeedsExact()
const needsExact = (): never => {
  throw NEEDS_EXACT
}

const NONE: UnknownField[] = []

/**
 * Compile a coercer for a struct (a table schema). `table` is used in error messages;
 * `caseInsensitive` (the table option) matches record keys to field names ignoring case.
 * `longsAsNumbers` (the writer's path): a long, time or timestamp value that is a safe integer
 * comes out as a number, not a bigint — no BigInt allocated per value (it cost ~0.3-0.8 µs
 * each); columns.ts writes numbers into int64 columns exactly, lib/iceberg's partition
 * transforms take them as bigint. Values beyond 2^53 stay bigint.
 */
export function compileCoercer(schema: StructType, opts: { table: string; caseInsensitive?: boolean; longsAsNumbers?: boolean }): Coercer {
  const root = compileStruct(schema, '', { ci: opts.caseInsensitive ?? false, numbers: opts.longsAsNumbers ?? false })
  // One context per coercer, reset per record: coercion is synchronous, so calls never interleave.
  const ctx: Ctx = { unknown: undefined }
  return (record: unknown, fast = false): Coerced => {
    if (typeof record !== 'object' || record === null || Array.isArray(record) || record instanceof Uint8Array)
      throw new RecordError(`table ${opts.table}: record expected struct, got ${describe(record)}`)
    ctx.unknown = undefined
    ctx.fast = fast
    try {
      const row = root(record, ctx) as Row
      return { row, unknown: ctx.unknown ?? NONE, bytes: ctx.bytes! }
    } catch (err) {
      if (!(err instanceof Failure)) throw err
      if (fast) throw NEEDS_EXACT
      const path = err.segments.reduce((acc, s) => (s.startsWith('[') ? acc + s : acc ? `${acc}.${s}` : s), '')
      throw new RecordError(`table ${opts.table}: field '${path}' expected ${err.expected}, got ${describe(err.value)}`)
    }
  }
}

/** `<jsType> <value>` for messages: strings quoted, long values cut at 100 characters. */
export function describe(value: unknown): string {
  if (value === undefined) return 'undefined'
  if (value === null) return 'null'
  const type = Array.isArray(value) ? 'array' : value instanceof Uint8Array ? 'bytes' : typeof value
  let shown: string
  if (typeof value === 'string') shown = `'${value}'`
  else if (typeof value === 'bigint') shown = `${value}`
  else if (value instanceof Uint8Array) shown = `[${value.length} bytes]`
  else if (typeof value === 'object') shown = losslessText(value) ?? safeJson(value)
  else shown = String(value)
  if (shown.length > 100) shown = `${shown.slice(0, 100)}…`
  return `${type} ${shown}`
}


/** A value that says something about its type (not null, not an empty or all-null array/object). */
export function isInformative(v: unknown): boolean {
  if (v === null || v === undefined) return false
  if (Array.isArray(v)) return v.some(isInformative)
  if (typeof v === 'object' && !(v instanceof Uint8Array) && !(v instanceof Date) && losslessText(v) === undefined)
    return Object.values(v as object).some(isInformative)
  return true
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array) && !(v instanceof Date) && !(v instanceof Map) && losslessText(v) === undefined

function compileStruct(type: StructType, path: string, o: CompileOptions): Convert {
  const ci = o.ci
  const n = type.fields.length
  const names = type.fields.map((f) => f.name)
  const required = type.fields.map((f) => f.required)
  const expected = type.fields.map((f) => typeName(f.type))
  const converts = type.fields.map((f) => compileType(f.type, path ? `${path}.${f.name}` : f.name, o))
  const defaults = type.fields.map((f, i) => writeDefault(f, converts[i]!, path))
  // The row's size (sizes.ts) is summed while it is built: per field its key's share, plus the value's.
  const keyBytes = names.map((name) => KEY_OVERHEAD + 2 * name.length)
  const defaultBytes = defaults.map((d) => estimateRowBytes(d))
  const structField = type.fields.map((f) => isStruct(f.type))
  // A long held as a number (longsAsNumbers) is charged as the bigint it stands for, as before.
  const longField = type.fields.map((f) => o.numbers && typeof f.type === 'string' && LONG_TYPES.has(f.type))
  const known = new Set(ci ? names.map((name) => name.toLowerCase()) : names)
  const typeText = typeName(type)
  const make = rowFactory(names)
  const inline = type.fields.map((f) => inlineKind(f.type, o.numbers))
  const compiled = compiledStruct(
    { names, required, expected, converts, defaults, keyBytes, defaultBytes, structField, longField, inline, known, path, typeText, objectOverhead: OBJECT_OVERHEAD, make, isPlainObject, isInformative, valueBytes },
    ci,
  )
  if (compiled !== undefined) return compiled
  return (v, ctx) => {
    if (!isPlainObject(v)) throw new Failure([], typeText, v)
    const out: Row = make()
    let bytes = OBJECT_OVERHEAD
    let matched = 0
    let i = 0
    try {
      for (; i < n; i++) {
        const name = names[i]!
        const value = ci ? fieldValue(v, name, true) : v[name]
        if (value !== undefined) matched++
        if (value === undefined && defaults[i] !== undefined) {
          out[name] = defaults[i]
          bytes += keyBytes[i]! + defaultBytes[i]!
        } else if (value === null || value === undefined) {
          if (required[i]) throw new Failure([], `${expected[i]} (required)`, value)
          out[name] = null
          bytes += keyBytes[i]! + 8
        } else {
          const c = converts[i]!(value, ctx)
          out[name] = c
          bytes += keyBytes[i]! + (structField[i] ? ctx.bytes! : longField[i] && typeof c === 'number' ? 32 : valueBytes(c))
        }
      }
    } catch (err) {
      if (err instanceof Failure) err.segments.unshift(names[i]!)
      throw err
    }
    // Only a record with keys the loop did not match can have unknown fields.
    let keys = 0
    for (const _ in v) keys++
    if (keys > matched) {
      for (const key in v) {
        if (!known.has(ci ? key.toLowerCase() : key) && isInformative(v[key])) (ctx.unknown ??= []).push({ path: path ? `${path}.${key}` : key, value: v[key] })
      }
    }
    ctx.bytes = make === emptyRow ? estimateRowBytes(out) : bytes
    return out
  }
}

/** A primitive's share of sizes.ts's estimate, inline; anything else walked. */
/** `ci`: match keys ignoring case; `numbers`: longs, times and timestamps as numbers where they are safe integers (see compileCoercer). */
interface CompileOptions {
  ci: boolean
  numbers: boolean
}

const LONG_TYPES = new Set(['long', 'time', 'timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns'])

const valueBytes = (c: unknown): number =>
  typeof c === 'string' ? 24 + 2 * c.length : typeof c === 'number' || typeof c === 'boolean' ? 16 : typeof c === 'bigint' ? 32 : estimateRowBytes(c)

/**
 * A field's v3 `write-default`, converted once: the value a record that lacks the field gets (an
 * explicit null stays null). JSON single-value form: binary and fixed as hex, structs as `{}`
 * (whose fields take their own defaults); everything else as coercion accepts it.
 */
function writeDefault(field: NestedField, convert: Convert, path: string): unknown {
  const raw = field['write-default']
  if (raw === undefined || raw === null) return undefined
  const hex = (field.type === 'binary' || /^fixed\[/.test(String(field.type))) && typeof raw === 'string'
  const input = hex && /^(?:[0-9a-fA-F]{2})*$/.test(raw) ? Uint8Array.from(raw.match(/../g) ?? [], (b) => parseInt(b, 16)) : raw
  try {
    return convert(input, { unknown: undefined })
  } catch (err) {
    if (!(err instanceof Failure)) throw err
    const name = path ? `${path}.${field.name}` : field.name
    throw new SchemaError(`field '${name}': write-default ${describe(raw)} is not a valid ${typeName(field.type)}`)
  }
}

function compileType(type: IcebergType, path: string, o: CompileOptions): Convert {
  if (isStruct(type)) return compileStruct(type, path, o)
  if (isList(type)) {
    const element = compileType(type.element, `${path}.element`, o)
    const required = type['element-required']
    const expected = typeName(type.element)
    const text = typeName(type)
    return (v, ctx) => {
      if (!Array.isArray(v)) throw new Failure([], text, v)
      const out = new Array(v.length)
      let i = 0
      try {
        for (; i < v.length; i++) {
          const e = v[i]
          if (e === null || e === undefined) {
            if (required) throw new Failure([], `${expected} (required)`, e)
            out[i] = null
          } else out[i] = element(e, ctx)
        }
      } catch (err) {
        if (err instanceof Failure) err.segments.unshift(`[${i}]`)
        throw err
      }
      return out
    }
  }
  if (isMap(type)) {
    const key = compileType(type.key, `${path}.key`, o)
    const value = compileType(type.value, `${path}.value`, o)
    const required = type['value-required']
    const expected = typeName(type.value)
    const text = typeName(type)
    return (v, ctx) => {
      const entries: Iterable<[unknown, unknown]> | undefined = v instanceof Map ? v : isPlainObject(v) ? Object.entries(v) : undefined
      if (entries === undefined) throw new Failure([], text, v)
      const out = new Map<unknown, unknown>()
      for (const [k, e] of entries) {
        try {
          if (k === null || k === undefined) throw new Failure([], `${typeName(type.key)} (map key)`, k)
          const ck = key(k, ctx)
          if (e === null || e === undefined) {
            if (required) throw new Failure([], `${expected} (required)`, e)
            out.set(ck, null)
          } else out.set(ck, value(e, ctx))
        } catch (err) {
          if (err instanceof Failure) err.segments.unshift(`[${JSON.stringify(String(k))}]`)
          throw err
        }
      }
      return out
    }
  }
  const convert = compilePrimitive(type, o.numbers)
  if (type === 'string') return (v, ctx) => (ctx.fast && typeof v !== 'string' && typeof v !== 'boolean' ? needsExact() : convert(v, ctx))
  if (decimalParams(type) !== undefined) return (v, ctx) => (ctx.fast && typeof v !== 'string' ? needsExact() : convert(v, ctx))
  return convert
}

const typeName = (t: IcebergType): string => (typeof t === 'string' ? t : t.type)
