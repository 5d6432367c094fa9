/**
 * Column metrics for manifests: the truncation of string and binary bounds (Iceberg Java's
 * UnicodeUtil / BinaryUtil), the metrics mode of a column from table properties (Iceberg Java's
 * MetricsConfig / MetricsModes), and the bounds a mode keeps, serialized by conversions.ts (the
 * spec's binary single-value serialization; values in the representation it documents).
 */
import { IcebergError } from '../errors.js'
import { logger } from '../log.js'
import { toBoundBytes, typeIs, type BoundValue } from './conversions.js'

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
  if (mode.kind === 'truncate' && (type === 'binary' || typeIs(type, 'fixed'))) {
    const hi = truncateUpperBinary(upper as Uint8Array, mode.length)
    return { lower: truncateLowerBinary(lower as Uint8Array, mode.length), upper: hi ?? undefined }
  }
  return { lower: toBoundBytes(type, lower), upper: toBoundBytes(type, upper) }
}
