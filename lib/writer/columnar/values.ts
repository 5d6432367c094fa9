/**
 * Scalar conversions for coercion, each returning `undefined` when the input cannot be converted
 * (the caller turns that into a RecordError naming field, type and value). Exact: timestamps and
 * decimals are parsed from their text with integer arithmetic, never through a float.
 */

/** A lossless-json LosslessNumber (or anything shaped like it): its exact decimal text. */
export function losslessText(v: unknown): string | undefined {
  if (typeof v === 'object' && v !== null && (v as { isLosslessNumber?: unknown }).isLosslessNumber === true) {
    const value = (v as { value?: unknown }).value
    return typeof value === 'string' ? value : undefined
  }
  return undefined
}

const INTEGER = /^[+-]?\d+$/

/** An exact integer from a number (safe integers only), bigint, integer string or LosslessNumber. */
export function toBigInt(v: unknown): bigint | undefined {
  if (typeof v === 'bigint') return v
  if (typeof v === 'number') return Number.isSafeInteger(v) ? BigInt(v) : undefined
  const text = typeof v === 'string' ? v.trim() : losslessText(v)
  if (text !== undefined && INTEGER.test(text)) return BigInt(text)
  return undefined
}

const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/

/** A float from a number, bigint, numeric string (incl. NaN, Infinity, -Infinity) or LosslessNumber. */
export function toFloat(v: unknown): number | undefined {
  if (typeof v === 'number') return v
  if (typeof v === 'bigint') return Number(v)
  const text = typeof v === 'string' ? v.trim() : losslessText(v)
  if (text === undefined) return undefined
  if (NUMERIC.test(text)) return Number(text)
  if (text === 'NaN') return NaN
  if (text === 'Infinity' || text === '+Infinity') return Infinity
  if (text === '-Infinity') return -Infinity
  return undefined
}

/**
 * The unscaled value of a decimal with `scale` digits after the point, from its exact text
 * (numbers go through their shortest round-trip text, so 0.1 is 1 tenth, not 0.1000000000000000055…).
 * Extra digits round half up (as Iceberg's Kafka Connect converter does); `undefined` when the
 * text is not a number or needs more than `precision` digits.
 */
export function toDecimal(v: unknown, precision: number, scale: number): bigint | undefined {
  let text: string | undefined
  if (typeof v === 'number') text = Number.isFinite(v) ? String(v) : undefined
  else if (typeof v === 'bigint') text = v.toString()
  else if (typeof v === 'string') text = v.trim()
  else text = losslessText(v)
  if (text === undefined) return undefined
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text)
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return undefined
  const negative = m[1] === '-'
  let digits = m[2]! + (m[3] ?? '')
  // Value = digits × 10^(exp - fractionLength); we want it × 10^scale.
  const shift = Number(m[4] ?? 0) - (m[3] ?? '').length + scale
  if (Math.abs(shift) > 400) return digits.replace(/0/g, '') === '' ? 0n : undefined
  let unscaled: bigint
  if (shift >= 0) unscaled = BigInt(digits + '0'.repeat(shift))
  else {
    digits = digits.padStart(-shift + 1, '0')
    const keep = digits.slice(0, digits.length + shift)
    const dropped = digits.slice(digits.length + shift)
    unscaled = BigInt(keep) + (dropped.charCodeAt(0) >= 53 /* '5' */ ? 1n : 0n)
  }
  if (unscaled.toString().length > precision) return undefined
  return negative ? -unscaled : unscaled
}

const DATE_TIME = /^([+-]?\d{4,6})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

interface ParsedDateTime {
  days: number
  /** Nanoseconds within the day (wall clock), before the zone offset. */
  nanosOfDay: bigint
  /** Zone offset in minutes, undefined when the text has none. */
  offsetMinutes?: number
  hasTime: boolean
}

/** Parse an ISO-8601 date or date-time; undefined unless every component is in range. */
export function parseDateTime(text: string): ParsedDateTime | undefined {
  const m = DATE_TIME.exec(text.trim())
  if (!m) return undefined
  const y = Number(m[1])
  const mo = Number(m[2])
  const d = Number(m[3])
  if (mo < 1 || mo > 12 || d < 1 || d > DAYS_IN_MONTH[mo - 1]!) return undefined
  if (mo === 2 && d === 29 && !(y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0))) return undefined
  const h = Number(m[4] ?? 0)
  const mi = Number(m[5] ?? 0)
  const s = Number(m[6] ?? 0)
  if (h > 23 || mi > 59 || s > 59) return undefined
  const frac = BigInt((m[7] ?? '').padEnd(9, '0'))
  let offsetMinutes: number | undefined
  const zone = m[8]
  if (zone !== undefined) {
    if (zone === 'Z' || zone === 'z') offsetMinutes = 0
    else {
      const sign = zone[0] === '-' ? -1 : 1
      const digits = zone.slice(1).replace(':', '')
      const oh = Number(digits.slice(0, 2))
      const om = Number(digits.slice(2) || 0)
      if (oh > 18 || om > 59) return undefined
      offsetMinutes = sign * (oh * 60 + om)
    }
  }
  // Date.UTC maps years 0..99 to 1900..1999; setUTCFullYear does not.
  const date = new Date(0)
  date.setUTCFullYear(y, mo - 1, d)
  const days = Math.floor(date.getTime() / 86_400_000)
  const nanosOfDay = BigInt((h * 60 + mi) * 60 + s) * 1_000_000_000n + frac
  return { days, nanosOfDay, offsetMinutes, hasTime: m[4] !== undefined }
}

const NANOS_PER_DAY = 86_400_000_000_000n

/**
 * Nanoseconds since the epoch (UTC) of an ISO-8601 text. Without a zone, the text is taken as UTC
 * (Iceberg's Kafka Connect converter does the same).
 */
export function isoToEpochNanos(text: string): bigint | undefined {
  const p = parseDateTime(text)
  if (!p) return undefined
  return BigInt(p.days) * NANOS_PER_DAY + p.nanosOfDay - BigInt(p.offsetMinutes ?? 0) * 60_000_000_000n
}

/** True when the text is an ISO-8601 date-time with a time and an explicit zone (what inference calls timestamptz). */
export function isZonedTimestampText(text: string): boolean {
  const p = parseDateTime(text)
  return p !== undefined && p.hasTime && p.offsetMinutes !== undefined
}

/** Days since 1970-01-01 from `YYYY-MM-DD` text. */
export function isoToEpochDays(text: string): number | undefined {
  const p = parseDateTime(text)
  return p && !p.hasTime && p.offsetMinutes === undefined ? p.days : undefined
}

const TIME = /^(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?$/

/** Microseconds since midnight from `HH:MM[:SS[.ffffff]]` (digits past micros are truncated). */
export function isoToTimeMicros(text: string): bigint | undefined {
  const m = TIME.exec(text.trim())
  if (!m) return undefined
  const h = Number(m[1])
  const mi = Number(m[2])
  const s = Number(m[3] ?? 0)
  if (h > 23 || mi > 59 || s > 59) return undefined
  return BigInt((h * 60 + mi) * 60 + s) * 1_000_000n + BigInt((m[4] ?? '').padEnd(9, '0').slice(0, 6))
}

const UUID = /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/

/** The 16 bytes of a UUID text (with or without dashes). */
export function uuidBytes(text: string): Uint8Array | undefined {
  if (!UUID.test(text)) return undefined
  return Buffer.from(text.replace(/-/g, ''), 'hex')
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/

/** Bytes from base64 (standard or URL-safe, padding optional). */
export function base64Bytes(text: string): Uint8Array | undefined {
  if (text.length % 4 === 1 || !BASE64.test(text)) return undefined
  const buf = Buffer.from(text, text.includes('-') || text.includes('_') ? 'base64url' : 'base64')
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength)
}
