/**
 * Partition specs from `partitionBy` expressions, partition tuples of rows, and Hive-style
 * partition paths (`ts_day=2024-05-01/user_id_bucket=3`), named and formatted as Iceberg Java's
 * PartitionSpec.Builder and Transform.toHumanString do, so paths match what Spark writes.
 */
import { IcebergError } from '../errors.js'
import { type IcebergType, type NestedField, type Schema, isPrimitive, isStruct } from '../schema/index.js'
import { bytesToUuid } from './conversions.js'
import { applyTransform, civilFromDays, parseTransform, type Transform, transformResultType, transformToString } from './transforms.js'
import type { PartitionField, PartitionSpec, PartitionTuple, PartitionValue } from './types.js'

/** A partitionable column: its full dotted name, the path of names from the root, and its field. */
export interface SourceColumn {
  name: string
  path: string[]
  field: NestedField
}

/** Primitive columns reachable through structs only (the spec forbids sources inside lists and maps), by id. */
export function sourceColumns(schema: Schema): Map<number, SourceColumn> {
  const out = new Map<number, SourceColumn>()
  const walk = (fields: NestedField[], path: string[]) => {
    for (const field of fields) {
      const p = [...path, field.name]
      if (isStruct(field.type)) walk(field.type.fields, p)
      else if (isPrimitive(field.type)) out.set(field.id, { name: p.join('.'), path: p, field })
    }
  }
  walk(schema.fields, [])
  return out
}

const ALIASES: Record<string, string> = { years: 'year', months: 'month', days: 'day', hours: 'hour', bucket: 'bucket', truncate: 'truncate' }

/** Iceberg Java's default partition field name for a transform of a column. */
function defaultName(t: Transform, column: string): string {
  switch (t.kind) {
    case 'identity':
      return column
    case 'bucket':
      return `${column}_bucket`
    case 'truncate':
      return `${column}_trunc`
    case 'void':
      return `${column}_null`
    default:
      return `${column}_${t.kind}`
  }
}

/** Java's Transform.dedupName: time transforms dedup together (not both day and hour of a column); others by their full form. */
const dedupName = (t: Transform) => (['year', 'month', 'day', 'hour'].includes(t.kind) ? 'time' : transformToString(t))

/** Parse one expression: `col`, `identity(col)`, `day(col)`/`days(col)`, `bucket(16, col)`, `truncate(4, col)` (either argument order). */
export function parsePartitionExpr(expr: string): { transform: Transform; column: string } {
  const text = expr.trim()
  const call = /^([A-Za-z_]+)\s*\((.*)\)$/s.exec(text)
  if (!call) {
    if (!/^[^(),\s]+$/.test(text)) throw new IcebergError(`partitionBy '${expr}': expected a column name or transform(column), e.g. day(ts), bucket(16, id)`)
    return { transform: { kind: 'identity' }, column: text }
  }
  const fn = call[1].toLowerCase()
  const args = call[2].split(',').map((a) => a.trim())
  const name = ALIASES[fn] ?? fn
  if (name === 'bucket' || name === 'truncate') {
    const num = args.findIndex((a) => /^\d+$/.test(a))
    if (args.length !== 2 || num < 0 || !args[1 - num]) throw new IcebergError(`partitionBy '${expr}': ${name} takes a positive integer and a column, e.g. ${name}(16, id)`)
    try {
      return { transform: parseTransform(`${name}[${args[num]}]`), column: args[1 - num] }
    } catch (err) {
      throw new IcebergError(`partitionBy '${expr}': ${(err as Error).message}`, { cause: err })
    }
  }
  if (!['identity', 'year', 'month', 'day', 'hour', 'void'].includes(name)) {
    throw new IcebergError(`partitionBy '${expr}': unknown transform '${call[1]}' (expected identity, year, month, day, hour, bucket, truncate or void)`)
  }
  if (args.length !== 1 || !args[0]) throw new IcebergError(`partitionBy '${expr}': ${name} takes exactly one column`)
  return { transform: parseTransform(name), column: args[0] }
}

/**
 * A partition spec (spec id 0) from `partitionBy` expressions such as
 * `["day(ts)", "bucket(16, user_id)", "truncate(4, name)", "country"]`. Nested columns use dots
 * (`payload.region`). Field ids are assigned from `startFieldId` (Iceberg's 1000) upward.
 * Errors name the expression.
 */
export function parsePartitionBy(schema: Schema, exprs: string[], startFieldId = 1000): PartitionSpec {
  const columns = sourceColumns(schema)
  const byName = new Map([...columns.values()].map((c) => [c.name, c]))
  const fields: PartitionField[] = []
  const seen = new Set<string>()
  for (const expr of exprs) {
    const { transform, column } = parsePartitionExpr(expr)
    const source = byName.get(column)
    if (!source) {
      const known = [...byName.keys()].slice(0, 20).join(', ')
      throw new IcebergError(`partitionBy '${expr}': no primitive column '${column}' outside lists and maps (columns: ${known})`)
    }
    const type = source.field.type as string
    try {
      transformResultType(transform, type)
    } catch (err) {
      throw new IcebergError(`partitionBy '${expr}': ${(err as Error).message}`, { cause: err })
    }
    const key = `${source.field.id}:${dedupName(transform)}`
    if (seen.has(key)) throw new IcebergError(`partitionBy '${expr}': column '${column}' is already partitioned by a redundant ${dedupName(transform)} transform`)
    seen.add(key)
    const name = defaultName(transform, column)
    if (fields.some((f) => f.name === name)) throw new IcebergError(`partitionBy '${expr}': partition field name '${name}' is used twice`)
    if (transform.kind !== 'identity' && byName.has(name) && byName.get(name)!.field.id !== source.field.id) {
      throw new IcebergError(`partitionBy '${expr}': partition field name '${name}' conflicts with a column of the same name`)
    }
    fields.push({ 'source-id': source.field.id, 'field-id': startFieldId + fields.length, name, transform: transformToString(transform) })
  }
  return { 'spec-id': 0, fields }
}

/** The column a partition field reads, or an IcebergError naming the field. */
function sourceOf(columns: Map<number, SourceColumn>, field: PartitionField): SourceColumn {
  const source = columns.get(field['source-id'])
  if (!source) throw new IcebergError(`partition field '${field.name}': source column id ${field['source-id']} is not a primitive column of the schema`)
  return source
}

/** The partition tuple of one row (a plain object in the writer's value representation, nested structs as objects). */
export function partitionTuple(spec: PartitionSpec, schema: Schema, row: Record<string, unknown>): PartitionTuple {
  const columns = sourceColumns(schema)
  return spec.fields.map((field) => {
    const source = sourceOf(columns, field)
    let value: unknown = row
    for (const key of source.path) value = value === null || value === undefined ? undefined : (value as Record<string, unknown>)[key]
    return transformValue(field.transform, source.field.type as string, value)
  })
}

/**
 * Each field of `spec` as a function of its source column's value alone, as partitionTuple applies
 * it to a row's (the writer's scanner lane groups its rows by these: lib/writer/scan-partition.ts).
 */
export function fieldTransforms(spec: PartitionSpec, schema: Schema): ((value: unknown) => PartitionValue)[] {
  const columns = sourceColumns(schema)
  return spec.fields.map((field) => {
    const type = sourceOf(columns, field).field.type as string
    const transform = parseTransform(field.transform)
    return (value) => transformValue(transform, type, value)
  })
}

function transformValue(transform: string | Transform, type: string, value: unknown): PartitionValue {
  // The writer's rows may hold a long, time or timestamp as a safe-integer number (lib/writer/columnar coerce.ts longsAsNumbers).
  return applyTransform(transform, type, typeof value === 'number' && INT64_TYPES.has(type) ? BigInt(value) : value)
}

const INT64_TYPES = new Set(['long', 'time', 'timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns'])

/** Result types of a spec's fields, in order (day → date; bucket/year/month/hour → int; …). */
export function partitionTypes(spec: PartitionSpec, schema: Schema): IcebergType[] {
  const columns = sourceColumns(schema)
  return spec.fields.map((f) => transformResultType(f.transform, sourceOf(columns, f).field.type as string))
}

/** Java's URLEncoder.encode(s, UTF_8): keeps A-Z a-z 0-9 . - * _, space → '+', the rest %XX. */
export function escapePathPart(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+')
}

const pad = (n: number, w = 2) => String(Math.abs(n)).padStart(w, '0')
/** Java's String.format("%04d", y) (humanYear/humanMonth/humanDay/humanHour). */
const year4 = (y: number) => (y < 0 ? `-${pad(y, 3)}` : pad(y, 4))
/** ISO-8601 years as java.time prints them in timestamps: a sign past four digits. */
const isoYear = (y: number) => (y < 0 ? `-${pad(y, 4)}` : y > 9999 ? `+${y}` : pad(y, 4))
const floorDiv = (a: bigint, b: bigint) => (a % b !== 0n && a < 0n !== b < 0n ? a / b - 1n : a / b)

function isoDate(days: number, iso = false): string {
  const [y, m, d] = civilFromDays(days)
  return `${iso ? isoYear(y) : year4(y)}-${pad(m)}-${pad(d)}`
}

/** ISO_LOCAL_TIME of nanoseconds within a day: HH:mm:ss, then the fraction without trailing zeros. */
function isoTime(nanosOfDay: bigint): string {
  const secs = Number(nanosOfDay / 1_000_000_000n)
  const frac = nanosOfDay % 1_000_000_000n
  const base = `${pad(Math.floor(secs / 3600))}:${pad(Math.floor(secs / 60) % 60)}:${pad(secs % 60)}`
  return frac === 0n ? base : `${base}.${frac.toString().padStart(9, '0').replace(/0+$/, '')}`
}

function isoTimestamp(nanos: bigint, utc: boolean): string {
  const perDay = 86_400_000_000_000n
  const day = floorDiv(nanos, perDay)
  const text = `${isoDate(Number(day), true)}T${isoTime(nanos - day * perDay)}`
  return utc ? `${text}+00:00` : text
}

/** Java's LocalTime.toString (used for identity-partitioned time columns): seconds and fraction only when non-zero. */
function javaLocalTime(micros: bigint): string {
  const nanos = micros * 1000n
  const secs = Number(nanos / 1_000_000_000n)
  const frac = Number(nanos % 1_000_000_000n)
  let s = `${pad(Math.floor(secs / 3600))}:${pad(Math.floor(secs / 60) % 60)}`
  if (secs % 60 === 0 && frac === 0) return s
  s += `:${pad(secs % 60)}`
  if (frac === 0) return s
  if (frac % 1_000_000 === 0) return `${s}.${pad(frac / 1_000_000, 3)}`
  if (frac % 1000 === 0) return `${s}.${pad(frac / 1000, 6)}`
  return `${s}.${pad(frac, 9)}`
}

/** Java's BigDecimal.toString of an unscaled value and scale (plain unless the exponent is below -6). */
function decimalString(unscaled: bigint, scale: number): string {
  const neg = unscaled < 0n
  const digits = (neg ? -unscaled : unscaled).toString()
  const adjusted = -scale + (digits.length - 1)
  let body: string
  if (scale >= 0 && adjusted >= -6) {
    if (scale === 0) body = digits
    else {
      const padded = digits.padStart(scale + 1, '0')
      body = `${padded.slice(0, padded.length - scale)}.${padded.slice(padded.length - scale)}`
    }
  } else {
    const mant = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits
    body = `${mant}E${adjusted >= 0 ? '+' : ''}${adjusted}`
  }
  return neg ? `-${body}` : body
}

/** Java's Float/Double.toString: plain in [1e-3, 1e7) with at least one fraction digit, else d.dddE±n. */
function javaFloating(v: number, float32: boolean): string {
  if (Number.isNaN(v)) return 'NaN'
  if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity'
  if (v === 0) return Object.is(v, -0) ? '-0.0' : '0.0'
  let shortest = String(v)
  if (float32) {
    for (let p = 1; p <= 9; p++) {
      const candidate = Number(v.toPrecision(p))
      if (Math.fround(candidate) === v) {
        shortest = String(candidate)
        break
      }
    }
  }
  const abs = Math.abs(v)
  if (abs >= 1e-3 && abs < 1e7) {
    const plain = Number(shortest).toString()
    return plain.includes('.') || plain.includes('e') ? plain : `${plain}.0`
  }
  const [mant, exp] = Number(shortest).toExponential().split('e')
  return `${mant.includes('.') ? mant : `${mant}.0`}E${Number(exp)}`
}

const base64 = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64')

/** The human string of a partition value of a result type (Iceberg Java Transform.toHumanString). */
export function humanValue(transform: string, resultType: string, value: PartitionValue): string {
  if (value === null) return 'null'
  const t = parseTransform(transform)
  if (t.kind === 'year') return year4(1970 + (value as number))
  if (t.kind === 'month') return `${year4(1970 + Math.floor((value as number) / 12))}-${pad((((value as number) % 12) + 12) % 12 + 1)}`
  if (t.kind === 'hour') {
    const h = value as number
    const day = Math.floor(h / 24)
    return `${isoDate(day)}-${pad(h - day * 24)}`
  }
  switch (resultType) {
    case 'date':
      return isoDate(value as number)
    case 'time':
      return javaLocalTime(BigInt(value as bigint))
    case 'timestamp':
    case 'timestamptz':
      return isoTimestamp(BigInt(value as bigint) * 1000n, resultType === 'timestamptz')
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return isoTimestamp(BigInt(value as bigint), resultType === 'timestamptz_ns')
    case 'float':
    case 'double':
      return javaFloating(value as number, resultType === 'float')
    case 'uuid':
      return value instanceof Uint8Array ? bytesToUuid(value) : String(value)
    case 'binary':
      return base64(value as Uint8Array)
  }
  if (resultType.startsWith('fixed[')) return base64(value as Uint8Array)
  const dec = /^decimal\(\s*\d+\s*,\s*(\d+)\s*\)$/.exec(resultType)
  if (dec) return decimalString(BigInt(value as bigint), Number(dec[1]))
  return String(value)
}

/** Hive-style path of a tuple, as Iceberg Java's PartitionSpec.partitionToPath: `name=value/…`, URL-escaped. */
export function partitionPath(spec: PartitionSpec, schema: Schema, tuple: PartitionTuple): string {
  if (tuple.length !== spec.fields.length) {
    throw new IcebergError(`partition tuple has ${tuple.length} values but spec ${spec['spec-id']} has ${spec.fields.length} fields`)
  }
  const types = partitionTypes(spec, schema)
  return spec.fields
    .map((f, i) => `${escapePathPart(f.name)}=${escapePathPart(humanValue(f.transform, types[i] as string, tuple[i]))}`)
    .join('/')
}
