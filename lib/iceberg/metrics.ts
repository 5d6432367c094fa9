/**
 * Column-metric encoding for manifests: the spec's binary single-value serialization
 * (https://iceberg.apache.org/spec/#binary-single-value-serialization), the truncation of string
 * and binary bounds (Iceberg Java's UnicodeUtil / BinaryUtil), and the metrics mode of a column
 * from table properties (Iceberg Java's MetricsConfig / MetricsModes).
 *
 * Values are in the writer's representation (shared with transforms.ts):
 *   boolean → boolean; int, date (days) → number; long, time (µs), timestamp[tz] (µs),
 *   timestamp[tz]_ns (ns) → bigint (a safe-integer number is accepted); float, double → number;
 *   string → string; uuid → string (or its 16 bytes); fixed[L], binary → Uint8Array;
 *   decimal(P, S) → the unscaled value as bigint (10.65 in decimal(4, 2) is 1065n).
 */
import { IcebergError } from '../errors.js'
import { logger } from '../log.js'

export type BoundValue = boolean | number | bigint | string | Uint8Array

const utf8 = new TextEncoder()
const utf8Decoder = new TextDecoder('utf-8', { fatal: true })

function fail(type: string, value: unknown, why: string): never {
  const shown = typeof value === 'bigint' ? `${value}n` : value instanceof Uint8Array ? `bytes[${value.length}]` : JSON.stringify(value)
  throw new IcebergError(`cannot serialize ${type} bound ${shown}: ${why}`)
}

function asBigInt(type: string, value: unknown): bigint {
  if (typeof value === 'bigint') return value
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value)
  return fail(type, value, 'expected a bigint (or a safe integer)')
}

function le(size: 4 | 8, write: (view: DataView) => void): Uint8Array {
  const out = new Uint8Array(size)
  write(new DataView(out.buffer))
  return out
}

/** Minimal two's-complement big-endian bytes of a bigint (decimal unscaled values; also used by bucket hashing). */
export function bigIntToMinBytes(value: bigint): Uint8Array {
  const bytes: number[] = []
  let v = value
  // Emit low bytes until the remaining value is pure sign extension of the last byte emitted.
  for (;;) {
    const byte = Number(BigInt.asUintN(8, v))
    bytes.unshift(byte)
    v >>= 8n
    const signBit = (byte & 0x80) !== 0
    if ((v === 0n && !signBit) || (v === -1n && signBit)) break
  }
  return Uint8Array.from(bytes)
}

/** The bigint a two's-complement big-endian byte string stands for. */
export function minBytesToBigInt(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n
  let v = 0n
  for (const b of bytes) v = (v << 8n) | BigInt(b)
  return BigInt.asIntN(bytes.length * 8, v)
}

/** A UUID string (any case, with dashes) to its 16 big-endian bytes. */
export function uuidToBytes(uuid: string): Uint8Array {
  const hex = uuid.replace(/-/g, '')
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new IcebergError(`invalid uuid '${uuid}'`)
  return Uint8Array.from(hex.match(/../g)!.map((h) => parseInt(h, 16)))
}

export function bytesToUuid(bytes: Uint8Array): string {
  if (bytes.length !== 16) throw new IcebergError(`a uuid is 16 bytes, got ${bytes.length}`)
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

const is = (type: string, prefix: string) => type === prefix || type.startsWith(`${prefix}(`) || type.startsWith(`${prefix}[`)

/** Serialize one value of a primitive Iceberg type (spec Appendix D). */
export function toBoundBytes(type: string, value: BoundValue): Uint8Array {
  switch (type) {
    case 'boolean':
      if (typeof value !== 'boolean') fail(type, value, 'expected a boolean')
      return Uint8Array.of(value ? 1 : 0)
    case 'int':
    case 'date':
      if (typeof value !== 'number' || !Number.isInteger(value) || value < -(2 ** 31) || value >= 2 ** 31) fail(type, value, 'expected a 32-bit integer')
      return le(4, (v) => v.setInt32(0, value, true))
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns': {
      const big = asBigInt(type, value)
      if (BigInt.asIntN(64, big) !== big) fail(type, value, 'out of the 64-bit range')
      return le(8, (v) => v.setBigInt64(0, big, true))
    }
    case 'float':
      if (typeof value !== 'number') fail(type, value, 'expected a number')
      return le(4, (v) => v.setFloat32(0, value, true))
    case 'double':
      if (typeof value !== 'number') fail(type, value, 'expected a number')
      return le(8, (v) => v.setFloat64(0, value, true))
    case 'string':
      if (typeof value !== 'string') fail(type, value, 'expected a string')
      return utf8.encode(value)
    case 'uuid':
      if (value instanceof Uint8Array && value.length === 16) return value
      if (typeof value !== 'string') fail(type, value, 'expected a uuid string or 16 bytes')
      return uuidToBytes(value)
    case 'binary':
      if (!(value instanceof Uint8Array)) fail(type, value, 'expected bytes')
      return value
  }
  if (is(type, 'fixed')) {
    if (!(value instanceof Uint8Array)) fail(type, value, 'expected bytes')
    return value
  }
  if (is(type, 'decimal')) return bigIntToMinBytes(asBigInt(type, value))
  return fail(type, value, 'the type has no single-value binary serialization')
}

/** Read one value back (inverse of toBoundBytes; int/date as number, 64-bit types as bigint, uuid as string). */
export function fromBoundBytes(type: string, bytes: Uint8Array): BoundValue {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const need = (n: number) => {
    if (bytes.length !== n) throw new IcebergError(`a ${type} bound is ${n} bytes, got ${bytes.length}`)
  }
  switch (type) {
    case 'boolean':
      need(1)
      return bytes[0] !== 0
    case 'int':
    case 'date':
      need(4)
      return view.getInt32(0, true)
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      // Some writers stored int bounds for a column later promoted to long: accept 4 bytes too.
      if (type === 'long' && bytes.length === 4) return BigInt(view.getInt32(0, true))
      need(8)
      return view.getBigInt64(0, true)
    case 'float':
      need(4)
      return view.getFloat32(0, true)
    case 'double':
      if (bytes.length === 4) return view.getFloat32(0, true) // promoted from float
      need(8)
      return view.getFloat64(0, true)
    case 'string':
      try {
        return utf8Decoder.decode(bytes)
      } catch (err) {
        throw new IcebergError(`a string bound is not valid UTF-8 (${bytes.length} bytes)`, { cause: err })
      }
    case 'uuid':
      return bytesToUuid(bytes)
    case 'binary':
      return bytes.slice()
  }
  if (is(type, 'fixed')) return bytes.slice()
  if (is(type, 'decimal')) return minBytesToBigInt(bytes)
  throw new IcebergError(`type ${type} has no single-value binary serialization`)
}

/** The first `n` code points of `s` (a lower bound of every string that starts with it). */
export function truncateLowerString(s: string, n: number): string {
  if (n <= 0) throw new IcebergError(`truncate length must be positive, got ${n}`)
  const cps = Array.from(s)
  return cps.length <= n ? s : cps.slice(0, n).join('')
}

const MIN_SURROGATE = 0xd800
const MAX_SURROGATE = 0xdfff
const MAX_CODE_POINT = 0x10ffff

/**
 * A string of at most `n` code points that is greater than `s` and every string starting with
 * the first `n` code points of `s`: truncate, then increment the last code point that can be
 * incremented (skipping the surrogate range), dropping the ones after it. `null` when no such
 * string exists (every code point is U+10FFFF): the caller then writes no upper bound.
 */
export function truncateUpperString(s: string, n: number): string | null {
  if (n <= 0) throw new IcebergError(`truncate length must be positive, got ${n}`)
  const cps = Array.from(s, (c) => c.codePointAt(0)!)
  if (cps.length <= n) return s
  for (let i = n - 1; i >= 0; i--) {
    const cp = cps[i]
    if (cp === MAX_CODE_POINT) continue
    const next = cp === MIN_SURROGATE - 1 ? MAX_SURROGATE + 1 : cp + 1
    return String.fromCodePoint(...cps.slice(0, i), next)
  }
  return null
}

/** The first `n` bytes of `b`. */
export function truncateLowerBinary(b: Uint8Array, n: number): Uint8Array {
  if (n < 0) throw new IcebergError(`truncate length must not be negative, got ${n}`)
  return b.length <= n ? b : b.slice(0, n)
}

/** At most `n` bytes greater than `b` and all its extensions: truncate, increment the last byte below 0xff. `null` if all are 0xff. */
export function truncateUpperBinary(b: Uint8Array, n: number): Uint8Array | null {
  if (n < 0) throw new IcebergError(`truncate length must not be negative, got ${n}`)
  if (b.length <= n) return b
  for (let i = n - 1; i >= 0; i--) {
    if (b[i] === 0xff) continue
    const out = b.slice(0, i + 1)
    out[i] += 1
    return out
  }
  return null
}

/** none: no counts or bounds; counts: value/null/NaN counts only; truncate(N): counts + bounds truncated to N; full: counts + whole bounds. */
export type MetricsMode = { kind: 'none' } | { kind: 'counts' } | { kind: 'truncate'; length: number } | { kind: 'full' }

export const METRICS_DEFAULT_PROPERTY = 'write.metadata.metrics.default'
export const METRICS_COLUMN_PREFIX = 'write.metadata.metrics.column.'
export const DEFAULT_METRICS_MODE: MetricsMode = { kind: 'truncate', length: 16 }

/** Parse a mode string as Iceberg Java's MetricsModes.fromString does (case-insensitive). */
export function parseMetricsMode(text: string): MetricsMode {
  const mode = text.trim().toLowerCase()
  if (mode === 'none' || mode === 'counts' || mode === 'full') return { kind: mode }
  const m = /^truncate\((\d+)\)$/.exec(mode)
  if (m && Number(m[1]) > 0) return { kind: 'truncate', length: Number(m[1]) }
  throw new IcebergError(`invalid metrics mode '${text}' (expected none, counts, truncate(N) with N > 0, or full)`)
}

/**
 * The metrics mode of a column (its full dotted name, e.g. `payload.user_id`), from table
 * properties: `write.metadata.metrics.column.<name>`, else `write.metadata.metrics.default`, else
 * truncate(16). Like Iceberg Java, an invalid mode falls back to the default with a warning rather
 * than failing every write to a table another engine configured.
 */
export function metricsModeFor(properties: Record<string, string>, columnName: string): MetricsMode {
  let fallback = DEFAULT_METRICS_MODE
  const configuredDefault = properties[METRICS_DEFAULT_PROPERTY]
  if (configuredDefault !== undefined) fallback = parseOr(configuredDefault, DEFAULT_METRICS_MODE, METRICS_DEFAULT_PROPERTY)
  const own = properties[METRICS_COLUMN_PREFIX + columnName]
  return own === undefined ? fallback : parseOr(own, fallback, METRICS_COLUMN_PREFIX + columnName)
}

function parseOr(text: string, fallback: MetricsMode, property: string): MetricsMode {
  try {
    return parseMetricsMode(text)
  } catch (err) {
    logger.warn(`table property ${property}: ${(err as Error).message}; using the default`, { property, value: text })
    return fallback
  }
}

/**
 * Lower and upper bound bytes of a column under a mode, or undefined where none is stored
 * (mode none/counts, or no upper bound exists after truncation). Strings and binary are
 * truncated under truncate(N); other types are stored whole (as Iceberg Java does).
 */
export function boundsFor(type: string, mode: MetricsMode, lower: BoundValue, upper: BoundValue): { lower?: Uint8Array; upper?: Uint8Array } {
  if (mode.kind === 'none' || mode.kind === 'counts') return {}
  if (mode.kind === 'truncate' && type === 'string') {
    const hi = truncateUpperString(upper as string, mode.length)
    return { lower: toBoundBytes(type, truncateLowerString(lower as string, mode.length)), upper: hi === null ? undefined : toBoundBytes(type, hi) }
  }
  if (mode.kind === 'truncate' && (type === 'binary' || is(type, 'fixed'))) {
    const hi = truncateUpperBinary(upper as Uint8Array, mode.length)
    return { lower: truncateLowerBinary(lower as Uint8Array, mode.length), upper: hi ?? undefined }
  }
  return { lower: toBoundBytes(type, lower), upper: toBoundBytes(type, upper) }
}
