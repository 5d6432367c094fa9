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

/**
 * Microseconds since the epoch of the common shape `YYYY-MM-DDTHH:MM:SS[.f…]Z|±HH:MM` (what
 * JSON producers emit), parsed by character codes; `undefined` for anything else, which then
 * takes the general path (isoToEpochNanos), as do instants beyond 2^53 µs from the epoch and text
 * with non-zero digits past microseconds (which a microsecond column cannot hold: the coercer
 * refuses it there, never floors it).
 */
export function fastIsoMicros(s: string): number | undefined {
  return isoMicrosOf(s, 0, s.length, stringCode)
}

/**
 * fastIsoMicros of the ASCII text `b[start..end)` read as bytes, so a JSON scanner reads a
 * timestamp without making a string of it (lib/writer/columnar/scan-numbers.ts).
 */
export function fastIsoMicrosBytes(b: Uint8Array, start: number, end: number): number | undefined {
  return readIsoMicrosBytes(b, start, end) ? isoMicros[0] : undefined
}

/**
 * Where readIsoMicrosBytes puts its value: a typed array, since a double returned from a call
 * is a new heap number each time (one per record for a scanner: measured on Node 20, issue 20).
 */
export const isoMicros = new Float64Array(1)

/** fastIsoMicrosBytes into `isoMicros[0]`: false where it gives undefined. */
export function readIsoMicrosBytes(b: Uint8Array, start: number, end: number): boolean {
  // The common `…:SS.mmmZ` and `…:SSZ` forms (what JSON.stringify of a Date writes) read inline
  // in integer arithmetic, with no character callback: a scanner reads one per record (~70 ns
  // each before, 2 % of the narrow writer's CPU). Anything else, or anything these lines do not
  // validate, takes the general reader.
  const n = end - start
  const o = start
  if ((n === 24 || n === 20) && end <= b.length && b[o + n - 1] === 90 && b[o + 4] === 45 && b[o + 7] === 45 && b[o + 10] === 84 && b[o + 13] === 58 && b[o + 16] === 58) {
    const y1 = digits2(b, o)
    const y2 = digits2(b, o + 2)
    const mo = digits2(b, o + 5)
    const d = digits2(b, o + 8)
    const h = digits2(b, o + 11)
    const mi = digits2(b, o + 14)
    const sec = digits2(b, o + 17)
    const frac = n === 20 ? 0 : b[o + 19] === 46 ? digits2(b, o + 20) : -1
    const last = n === 20 ? 0 : digit(b, o + 22)
    // Every part -1 when not digits: one of them negative makes the `|` negative.
    if ((y1 | y2 | mo | d | h | mi | sec | frac | last) >= 0 && h <= 23 && mi <= 59 && sec <= 59) {
      const y = y1 * 100 + y2
      const ms = frac * 10 + last
      const days = epochDays(y, mo, d)
      const micros = days === undefined ? Number.NaN : ((days * 24 + h) * 60 + mi) * 60_000_000 + sec * 1_000_000 + ms * 1000
      // Past 2^53 µs (after 2255 or before 1685) the general reader says no.
      if (Number.isSafeInteger(micros)) {
        isoMicros[0] = micros
        return true
      }
    }
  }
  const general = isoMicrosOf(b, start, end, byteCode)
  if (general === undefined) return false
  isoMicros[0] = general
  return true
}

/**
 * The last valid date readIsoMicrosBytes read — `yyyymmdd` as a number — and its epoch days: a
 * batch's timestamps mostly share a day. Typed, so a lookup allocates nothing.
 */
const lastDate = new Int32Array([-1, 0])

/** Epoch days of a proleptic Gregorian date whose parts are digits (0 and up); undefined when there is no such date. */
function epochDays(y: number, mo: number, d: number): number | undefined {
  const key = (y * 100 + mo) * 100 + d
  if (key === lastDate[0]) return lastDate[1]!
  if (mo < 1 || mo > 12 || d < 1 || d > DAYS_IN_MONTH[mo - 1]! || (mo === 2 && d === 29 && !(y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0)))) return undefined
  const days = daysFromCivil(y, mo, d)
  lastDate[0] = key
  lastDate[1] = days
  return days
}

/** The digit at `i` (within the text), or -1 when it is not one. */
function digit(b: Uint8Array, i: number): number {
  const c = b[i]! - 48
  return c >= 0 && c <= 9 ? c : -1
}

/** The two digits at `i` as a number, or -1 when either is not a digit. */
function digits2(b: Uint8Array, i: number): number {
  const hi = digit(b, i)
  const lo = digit(b, i + 1)
  return hi < 0 || lo < 0 ? -1 : hi * 10 + lo
}


type CodeAt<T> = (t: T, i: number) => number
const stringCode: CodeAt<string> = (s, i) => s.charCodeAt(i)
const byteCode: CodeAt<Uint8Array> = (b, i) => b[i] ?? NaN

/** A digit's value at `start + i` of `t`, NaN for anything else (or past the end). */
function dig<T>(t: T, code: CodeAt<T>, i: number): number {
  const c = code(t, i) - 48
  return c >= 0 && c <= 9 ? c : NaN
}

const pair = <T>(t: T, code: CodeAt<T>, i: number): number => dig(t, code, i) * 10 + dig(t, code, i + 1)

/** fastIsoMicros over `t[start..end)`, whatever holds the characters (`code` reads one; NaN past the end). No closure per call. */
function isoMicrosOf<T>(t: T, start: number, end: number, code: CodeAt<T>): number | undefined {
  const n = end - start
  const o = start
  if (n < 20 || code(t, o + 4) !== 45 || code(t, o + 7) !== 45 || code(t, o + 13) !== 58 || code(t, o + 16) !== 58) return undefined
  const sep = code(t, o + 10)
  if (sep !== 84 && sep !== 32) return undefined
  const y = pair(t, code, o + 0) * 100 + pair(t, code, o + 2)
  const mo = pair(t, code, o + 5)
  const d = pair(t, code, o + 8)
  const h = pair(t, code, o + 11)
  const mi = pair(t, code, o + 14)
  const sec = pair(t, code, o + 17)
  if (!(mo >= 1 && mo <= 12 && d >= 1 && d <= DAYS_IN_MONTH[mo - 1]! && h <= 23 && mi <= 59 && sec <= 59)) return undefined
  if (mo === 2 && d === 29 && !(y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0))) return undefined
  let i = 19
  let micros = 0
  if (code(t, o + i) === 46) {
    let k = 0
    for (i++; i < n; i++, k++) {
      const c = dig(t, code, o + i)
      if (Number.isNaN(c)) break
      if (k < 6) micros = micros * 10 + c
      else if (c !== 0) return undefined
    }
    if (k === 0 || k > 9) return undefined
    for (; k < 6; k++) micros *= 10
  }
  let offset = 0
  const z = code(t, o + i)
  if ((z === 90 || z === 122) && i === n - 1) offset = 0
  else if ((z === 43 || z === 45) && i === n - 6 && code(t, o + i + 3) === 58) {
    const oh = pair(t, code, o + i + 1)
    const om = pair(t, code, o + i + 4)
    if (!(oh <= 18 && om <= 59)) return undefined
    offset = (z === 45 ? -1 : 1) * (oh * 60 + om)
  } else return undefined
  const result = ((daysFromCivil(y, mo, d) * 24 + h) * 60 + mi - offset) * 60_000_000 + sec * 1_000_000 + micros
  // Exact only within 2^53 µs of the epoch (years ~1685..2255); outside, the general path takes over.
  return Number.isSafeInteger(result) ? result : undefined
}
