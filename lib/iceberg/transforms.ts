/**
 * Partition transforms (https://iceberg.apache.org/spec/#partition-transforms): identity,
 * bucket[N], truncate[W], year, month, day, hour, void.
 *
 * Source values are in the writer's representation (the same as lib/iceberg/metrics.ts):
 *   boolean → boolean; int, date (days since 1970-01-01) → number; long, time (µs since midnight),
 *   timestamp/timestamptz (µs since epoch), timestamp_ns/timestamptz_ns (ns since epoch) → bigint
 *   (a safe-integer number is accepted too); float, double → number; string → string;
 *   uuid → string (or its 16 big-endian bytes); fixed[L], binary → Uint8Array;
 *   decimal(P, S) → unscaled bigint (10.65 in decimal(4, 2) is 1065n).
 * Results are partition values (lib/iceberg/types.ts PartitionValue): int, date and the
 * year/month/day/hour/bucket ordinals → number; long/time/timestamp identity and decimal → bigint;
 * uuid identity → its 16 bytes (manifests store uuid partitions as fixed[16]); null → null.
 */
import { IcebergError } from '../errors.js'
import type { PartitionValue } from './types.js'
import { bigIntToMinBytes, uuidToBytes } from './conversions.js'

export type Transform =
  | { kind: 'identity' | 'year' | 'month' | 'day' | 'hour' | 'void' }
  | { kind: 'bucket'; n: number }
  | { kind: 'truncate'; width: number }

/** Parse a transform as written in partition specs: `identity`, `bucket[16]`, `truncate[4]`, `day`, … */
export function parseTransform(text: string): Transform {
  const t = text.trim().toLowerCase()
  if (t === 'identity' || t === 'year' || t === 'month' || t === 'day' || t === 'hour' || t === 'void') return { kind: t }
  const m = /^(bucket|truncate)\[(\d+)\]$/.exec(t)
  if (m && Number(m[2]) > 0 && Number(m[2]) <= 2 ** 31 - 1) {
    return m[1] === 'bucket' ? { kind: 'bucket', n: Number(m[2]) } : { kind: 'truncate', width: Number(m[2]) }
  }
  throw new IcebergError(`unknown partition transform '${text}' (expected identity, bucket[N], truncate[W], year, month, day, hour or void, with N, W > 0)`)
}

export function transformToString(t: Transform): string {
  return t.kind === 'bucket' ? `bucket[${t.n}]` : t.kind === 'truncate' ? `truncate[${t.width}]` : t.kind
}

const TIMESTAMPS = ['timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns']
const isDecimal = (type: string) => type.startsWith('decimal(')
const isFixed = (type: string) => type.startsWith('fixed[')
const NOT_PARTITIONABLE = ['variant', 'geometry', 'geography', 'unknown']

/** Whether a transform accepts a source type (the spec's "Source types" column). */
export function canTransform(t: Transform, sourceType: string): boolean {
  const base = sourceType.replace(/\(.*$/, '')
  switch (t.kind) {
    case 'identity':
      return !NOT_PARTITIONABLE.includes(base) && !['struct', 'list', 'map'].includes(base)
    case 'void':
      return true
    case 'bucket':
      return ['int', 'long', 'date', 'time', 'string', 'uuid', 'binary', ...TIMESTAMPS].includes(sourceType) || isDecimal(sourceType) || isFixed(sourceType)
    case 'truncate':
      return ['int', 'long', 'string', 'binary'].includes(sourceType) || isDecimal(sourceType)
    case 'year':
    case 'month':
    case 'day':
      return sourceType === 'date' || TIMESTAMPS.includes(sourceType)
    case 'hour':
      return TIMESTAMPS.includes(sourceType)
  }
}

function parsed(transform: string | Transform): Transform {
  return typeof transform === 'string' ? parseTransform(transform) : transform
}

/** The type of a transform's result for a source type (day → date; bucket, year, month, hour → int). */
export function transformResultType(transform: string | Transform, sourceType: string): string {
  const t = parsed(transform)
  if (!canTransform(t, sourceType)) throw new IcebergError(`partition transform ${transformToString(t)} cannot be applied to type ${sourceType}`)
  switch (t.kind) {
    case 'identity':
    case 'truncate':
    case 'void':
      return sourceType
    case 'day':
      return 'date'
    default:
      return 'int'
  }
}

// ---- Murmur3 x86 32-bit, seed 0 (spec Appendix B). Written here because the npm ports hash
// JS strings by UTF-16 code unit, while Iceberg hashes byte arrays.

const C1 = 0xcc9e2d51
const C2 = 0x1b873593

export function murmur3x86(bytes: Uint8Array, seed = 0): number {
  let h = seed | 0
  const blocks = bytes.length >>> 2
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  for (let i = 0; i < blocks; i++) {
    let k = view.getUint32(i * 4, true)
    k = Math.imul(k, C1)
    k = (k << 15) | (k >>> 17)
    k = Math.imul(k, C2)
    h ^= k
    h = (h << 13) | (h >>> 19)
    h = (Math.imul(h, 5) + 0xe6546b64) | 0
  }
  const tail = blocks * 4
  const rest = bytes.length & 3
  if (rest > 0) {
    let k = 0
    if (rest === 3) k ^= bytes[tail + 2] << 16
    if (rest >= 2) k ^= bytes[tail + 1] << 8
    k ^= bytes[tail]
    k = Math.imul(k, C1)
    k = (k << 15) | (k >>> 17)
    k = Math.imul(k, C2)
    h ^= k
  }
  h ^= bytes.length
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h | 0
}

function longBytes(v: bigint): Uint8Array {
  const out = new Uint8Array(8)
  new DataView(out.buffer).setBigInt64(0, BigInt.asIntN(64, v), true)
  return out
}

const utf8 = new TextEncoder()

function bad(what: string, type: string, value: unknown, expected: string): never {
  const shown = typeof value === 'bigint' ? `${value}n` : value instanceof Uint8Array ? `bytes[${value.length}]` : JSON.stringify(value)
  throw new IcebergError(`${what}: ${type} value expected ${expected}, got ${typeof value} ${shown}`)
}

function asInt(what: string, type: string, v: unknown): number {
  if (typeof v === 'number' && Number.isInteger(v)) return v
  return bad(what, type, v, 'an integer number')
}

function asLong(what: string, type: string, v: unknown): bigint {
  if (typeof v === 'bigint') return v
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v)
  return bad(what, type, v, 'a bigint')
}

function asBytes(what: string, type: string, v: unknown): Uint8Array {
  if (v instanceof Uint8Array) return v
  return bad(what, type, v, 'a Uint8Array')
}

/** The spec's 32-bit hash of a value (Appendix B); ints and longs hash alike, nanosecond timestamps as micros. */
export function hashValue(type: string, value: unknown): number {
  const what = 'bucket hash'
  switch (type) {
    case 'int':
    case 'date':
      return murmur3x86(longBytes(BigInt(asInt(what, type, value))))
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return murmur3x86(longBytes(asLong(what, type, value)))
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return murmur3x86(longBytes(floorDiv(asLong(what, type, value), 1000n)))
    case 'string':
      if (typeof value !== 'string') bad(what, type, value, 'a string')
      return murmur3x86(utf8.encode(value))
    case 'uuid':
      if (typeof value === 'string') return murmur3x86(uuidToBytes(value))
      return murmur3x86(asBytes(what, type, value))
    case 'binary':
      return murmur3x86(asBytes(what, type, value))
  }
  if (isFixed(type)) return murmur3x86(asBytes(what, type, value))
  if (isDecimal(type)) return murmur3x86(bigIntToMinBytes(asLong(what, type, value)))
  throw new IcebergError(`${what}: type ${type} cannot be bucketed`)
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q
}

const MICROS_PER_HOUR = 3_600_000_000n
const MICROS_PER_DAY = 86_400_000_000n

/** Days since 1970-01-01 of a date or timestamp value. */
function epochDays(type: string, value: unknown, what: string): number {
  if (type === 'date') return asInt(what, type, value)
  const micros = type.endsWith('_ns') ? floorDiv(asLong(what, type, value), 1000n) : asLong(what, type, value)
  return Number(floorDiv(micros, MICROS_PER_DAY))
}

/** [year, month 1-12, day 1-31] of days since 1970-01-01 (proleptic Gregorian, UTC). */
export function civilFromDays(days: number): [number, number, number] {
  const d = new Date(days * 86_400_000)
  if (Number.isNaN(d.getTime())) throw new IcebergError(`date ${days} days from 1970-01-01 is out of range`)
  return [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()]
}

/**
 * Apply a transform to one source value. `null`/`undefined` give `null` (every transform maps null
 * to null). Throws IcebergError naming the transform, type and value when they do not fit.
 */
export function applyTransform(transform: string | Transform, sourceType: string, value: unknown): PartitionValue {
  const t = parsed(transform)
  const what = `partition transform ${transformToString(t)}`
  if (!canTransform(t, sourceType)) throw new IcebergError(`${what} cannot be applied to type ${sourceType}`)
  if (value === null || value === undefined || t.kind === 'void') return null
  switch (t.kind) {
    case 'identity':
      return identity(what, sourceType, value)
    case 'bucket':
      return (hashValue(sourceType, value) & 0x7fffffff) % t.n
    case 'truncate':
      return truncate(what, sourceType, value, t.width)
    case 'day':
      return epochDays(sourceType, value, what)
    case 'hour': {
      const v = asLong(what, sourceType, value)
      const micros = sourceType.endsWith('_ns') ? floorDiv(v, 1000n) : v
      return Number(floorDiv(micros, MICROS_PER_HOUR))
    }
    case 'year':
    case 'month': {
      const [y, m] = civilFromDays(epochDays(sourceType, value, what))
      return t.kind === 'year' ? y - 1970 : (y - 1970) * 12 + (m - 1)
    }
  }
}

function identity(what: string, type: string, value: unknown): PartitionValue {
  switch (type) {
    case 'boolean':
      if (typeof value !== 'boolean') bad(what, type, value, 'a boolean')
      return value
    case 'int':
    case 'date':
      return asInt(what, type, value)
    case 'float':
    case 'double':
      if (typeof value !== 'number') bad(what, type, value, 'a number')
      return value
    case 'string':
      if (typeof value !== 'string') bad(what, type, value, 'a string')
      return value
    case 'uuid':
      return typeof value === 'string' ? uuidToBytes(value) : asBytes(what, type, value)
    case 'binary':
      return asBytes(what, type, value)
  }
  if (isFixed(type)) return asBytes(what, type, value)
  return asLong(what, type, value) // long, time, timestamps, decimal (unscaled)
}

function truncate(what: string, type: string, value: unknown, width: number): PartitionValue {
  if (type === 'int') {
    const v = asInt(what, type, value)
    return v - (((v % width) + width) % width)
  }
  if (type === 'long' || isDecimal(type)) {
    const v = asLong(what, type, value)
    const w = BigInt(width)
    return v - (((v % w) + w) % w)
  }
  if (type === 'string') {
    if (typeof value !== 'string') bad(what, type, value, 'a string')
    const cps = Array.from(value)
    return cps.length <= width ? value : cps.slice(0, width).join('')
  }
  const bytes = asBytes(what, type, value)
  return bytes.length <= width ? bytes : bytes.slice(0, width)
}
