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
import { RecordError } from '../../errors.js'
import { isList, isMap, isStruct, type IcebergType, type StructType, decimalParams } from '../../schema/index.js'
import { compileList, compileMap, describe, isInformative, isPlainObject, LONG_TYPES, typeName, valueBytes, writeDefault } from './coerce-parts.js'
import { compilePrimitive, Failure, type Convert, type Ctx } from './primitives.js'
import { estimateRowBytes, KEY_OVERHEAD, OBJECT_OVERHEAD } from './sizes.js'
import { layoutOf } from './layout.js'
import { bareRow, compiledStruct, inlineKind, rowFactory, type LaidConvert, type StructParts } from './struct-code.js'
import { fieldValue, INHERITED } from './values.js'
import { fieldsKey, SharedCompiled } from './shared.js'

export { describe, isInformative } from './coerce-parts.js'

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

/** Compiled struct conversions by fields and options. */
const roots = new SharedCompiled<Convert>()

/**
 * Compile a coercer for a struct (a table schema). `table` is used in error messages;
 * `caseInsensitive` (the table option) matches record keys to field names ignoring case.
 * `longsAsNumbers` (the writer's path): a long, time or timestamp value that is a safe integer
 * comes out as a number, not a bigint — no BigInt allocated per value (it cost ~0.3-0.8 µs
 * each); columns.ts writes numbers into int64 columns exactly, lib/iceberg's partition
 * transforms take them as bigint. Values beyond 2^53 stay bigint.
 */
export function compileCoercer(schema: StructType, opts: { table: string; caseInsensitive?: boolean; longsAsNumbers?: boolean }): Coercer {
  const o: CompileOptions = { ci: opts.caseInsensitive ?? false, numbers: opts.longsAsNumbers ?? false }
  // The conversion depends on the fields and the options only: tables of one shape share it (shared.ts).
  const root = roots.get(fieldsKey(schema.fields, o.ci, o.numbers), () => compileStruct(schema, '', o))
  // One context per coercer, reset per record: coercion is synchronous, so calls never interleave.
  const ctx: Ctx = { unknown: undefined }
  // A wide record the guard walked is read from its layout (layout.ts), not from the object again.
  const laid = (root as Partial<{ laid: LaidConvert }>).laid
  return (record: unknown, fast = false): Coerced => {
    if (typeof record !== 'object' || record === null || Array.isArray(record) || record instanceof Uint8Array)
      throw new RecordError(`table ${opts.table}: record expected struct, got ${describe(record)}`)
    ctx.unknown = undefined
    ctx.fast = fast
    try {
      const layout = laid !== undefined ? layoutOf(record) : undefined
      const row = layout !== undefined ? laid!(record as Row, layout, ctx) : (root(record, ctx) as Row)
      return { row, unknown: ctx.unknown ?? NONE, bytes: ctx.bytes! }
    } catch (err) {
      if (!(err instanceof Failure)) throw err
      if (fast) throw NEEDS_EXACT
      const path = err.segments.reduce((acc, s) => (s.startsWith('[') ? acc + s : acc ? `${acc}.${s}` : s), '')
      throw new RecordError(`table ${opts.table}: field '${path}' expected ${err.expected}, got ${describe(err.value)}`)
    }
  }
}

function compileStruct(type: StructType, path: string, o: CompileOptions): Convert {
  const p = structParts(type, path, o)
  return compiledStruct(p, o.ci) ?? genericStruct(p, o.ci)
}

/** What a struct's conversion needs per field, worked out once. */
function structParts(type: StructType, path: string, o: CompileOptions): StructParts {
  const names = type.fields.map((f) => f.name)
  const converts = type.fields.map((f) => compileType(f.type, path ? `${path}.${f.name}` : f.name, o))
  const defaults = type.fields.map((f, i) => writeDefault(f, converts[i]!, path))
  return {
    names,
    required: type.fields.map((f) => f.required),
    expected: type.fields.map((f) => typeName(f.type)),
    converts,
    defaults,
    // The row's size (sizes.ts) is summed while it is built: per field its key's share, plus the value's.
    keyBytes: names.map((name) => KEY_OVERHEAD + 2 * name.length),
    defaultBytes: defaults.map((d) => estimateRowBytes(d)),
    structField: type.fields.map((f) => isStruct(f.type)),
    // A long held as a number (longsAsNumbers) is charged as the bigint it stands for, as before.
    longField: type.fields.map((f) => o.numbers && typeof f.type === 'string' && LONG_TYPES.has(f.type)),
    inline: type.fields.map((f) => inlineKind(f.type, o.numbers)),
    known: new Set(o.ci ? names.map((name) => name.toLowerCase()) : names),
    path,
    typeText: typeName(type),
    objectOverhead: OBJECT_OVERHEAD,
    make: rowFactory(names),
    isPlainObject,
    isInformative,
    valueBytes,
  }
}

/** The generic loop: case-insensitive tables (keys matched by fieldValue) and schemas with a `__proto__` field. */
function genericStruct(p: StructParts, ci: boolean): Convert {
  const { names, required, expected, converts, defaults, keyBytes, defaultBytes, structField, longField, known, path, typeText, make } = p
  const n = names.length
  return (v, ctx) => {
    if (!isPlainObject(v)) throw new Failure([], typeText, v)
    const out: Row = make()
    let bytes = OBJECT_OVERHEAD
    let matched = 0
    let i = 0
    try {
      for (; i < n; i++) {
        const name = names[i]!
        const value = ci || INHERITED.has(name) ? fieldValue(v, name, ci) : v[name]
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
    ctx.bytes = make === bareRow ? estimateRowBytes(out) : bytes
    return out
  }
}

/** `ci`: match keys ignoring case; `numbers`: longs, times and timestamps as numbers where they are safe integers (see compileCoercer). */
interface CompileOptions {
  ci: boolean
  numbers: boolean
}

function compileType(type: IcebergType, path: string, o: CompileOptions): Convert {
  if (isStruct(type)) return compileStruct(type, path, o)
  if (isList(type)) return compileList(compileType(type.element, `${path}.element`, o), type['element-required'], typeName(type.element), typeName(type))
  if (isMap(type)) return compileMap(compileType(type.key, `${path}.key`, o), compileType(type.value, `${path}.value`, o), type)
  const convert = compilePrimitive(type, o.numbers)
  if (type === 'string') return (v, ctx) => (ctx.fast && typeof v !== 'string' && typeof v !== 'boolean' ? needsExact() : convert(v, ctx))
  if (decimalParams(type) !== undefined) return (v, ctx) => (ctx.fast && typeof v !== 'string' ? needsExact() : convert(v, ctx))
  return convert
}
