/**
 * ISO-8601 text for Iceberg's temporal types, parsed exactly (integer nanoseconds, no float):
 * dates `YYYY-MM-DD`, date-times with `T` or space, fractions up to 9 digits, zones `Z`, `±HH`,
 * `±HHMM`, `±HH:MM`. Used by inference (is this a timestamptz?) and by coercion.
 */

const DATE_TIME = /^([+-]?\d{4,6})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

export interface ParsedDateTime {
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

