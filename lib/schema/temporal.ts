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
  const days = daysFromCivil(y, mo, d)
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

/** Microseconds since midnight from `HH:MM[:SS[.ffffff]]`; undefined when digits past micros are not zeros (a time column cannot hold them). */
export function isoToTimeMicros(text: string): bigint | undefined {
  const m = TIME.exec(text.trim())
  if (!m) return undefined
  const h = Number(m[1])
  const mi = Number(m[2])
  const s = Number(m[3] ?? 0)
  if (h > 23 || mi > 59 || s > 59) return undefined
  const fraction = (m[4] ?? '').padEnd(9, '0')
  if (fraction.slice(6) !== '000') return undefined
  return BigInt((h * 60 + mi) * 60 + s) * 1_000_000n + BigInt(fraction.slice(0, 6))
}


/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil; integer arithmetic only). */
export function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y
  const era = Math.floor(yy / 400)
  const yoe = yy - era * 400
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
}

const digit = (s: string, i: number): number => {
  const c = s.charCodeAt(i) - 48
  return c >= 0 && c <= 9 ? c : NaN
}
const two = (s: string, i: number): number => digit(s, i) * 10 + digit(s, i + 1)

/**
 * Microseconds since the epoch of the common shape `YYYY-MM-DDTHH:MM:SS[.f…]Z|±HH:MM` (what
 * JSON producers emit), parsed by character codes; `undefined` for anything else, which then
 * takes the general path (isoToEpochNanos), as do instants beyond 2^53 µs from the epoch and text
 * with non-zero digits past microseconds (which a microsecond column cannot hold: the coercer
 * refuses it there, never floors it).
 */
export function fastIsoMicros(s: string): number | undefined {
  const n = s.length
  if (n < 20 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58) return undefined
  const sep = s.charCodeAt(10)
  if (sep !== 84 && sep !== 32) return undefined
  const y = two(s, 0) * 100 + two(s, 2)
  const mo = two(s, 5)
  const d = two(s, 8)
  const h = two(s, 11)
  const mi = two(s, 14)
  const sec = two(s, 17)
  if (!(mo >= 1 && mo <= 12 && d >= 1 && d <= DAYS_IN_MONTH[mo - 1]! && h <= 23 && mi <= 59 && sec <= 59)) return undefined
  if (mo === 2 && d === 29 && !(y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0))) return undefined
  let i = 19
  let micros = 0
  if (s.charCodeAt(i) === 46) {
    let k = 0
    for (i++; i < n; i++, k++) {
      const c = digit(s, i)
      if (Number.isNaN(c)) break
      if (k < 6) micros = micros * 10 + c
      else if (c !== 0) return undefined
    }
    if (k === 0 || k > 9) return undefined
    for (; k < 6; k++) micros *= 10
  }
  let offset = 0
  const z = s.charCodeAt(i)
  if ((z === 90 || z === 122) && i === n - 1) offset = 0
  else if ((z === 43 || z === 45) && i === n - 6 && s.charCodeAt(i + 3) === 58) {
    const oh = two(s, i + 1)
    const om = two(s, i + 4)
    if (!(oh <= 18 && om <= 59)) return undefined
    offset = (z === 45 ? -1 : 1) * (oh * 60 + om)
  } else return undefined
  const result = ((daysFromCivil(y, mo, d) * 24 + h) * 60 + mi - offset) * 60_000_000 + sec * 1_000_000 + micros
  // Exact only within 2^53 µs of the epoch (years ~1685..2255); outside, the general path takes over.
  return Number.isSafeInteger(result) ? result : undefined
}
