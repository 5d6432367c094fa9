/**
 * The value shape every decoder produces (documented in ./index.ts), and the conversions shared
 * by the Avro and Kafka Connect decoders: two's-complement decimals to exact strings, epoch days
 * and times of day to ISO text, epoch millis/micros/nanos to ISO timestamps.
 */

/** Unscaled big-endian two's-complement bytes (Avro and Connect decimals) as an exact decimal string. */
export function decimalFromBytes(bytes: Uint8Array, scale: number): string {
  let n = 0n
  for (const b of bytes) n = (n << 8n) | BigInt(b)
  if (bytes.length > 0 && bytes[0]! & 0x80) n -= 1n << BigInt(bytes.length * 8)
  return decimalFromUnscaled(n, scale)
}

/** An unscaled integer and a scale as an exact decimal string: (-12345n, 2) → "-123.45". */
export function decimalFromUnscaled(unscaled: bigint, scale: number): string {
  const negative = unscaled < 0n
  let digits = (negative ? -unscaled : unscaled).toString()
  if (scale > 0) {
    digits = digits.padStart(scale + 1, '0')
    digits = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`
  } else if (scale < 0) {
    digits = digits + '0'.repeat(-scale)
  }
  return negative ? `-${digits}` : digits
}

const DAY_MS = 86_400_000

/** Days since 1970-01-01 as `YYYY-MM-DD` (proleptic Gregorian, like Iceberg). */
export function isoDate(days: number): string {
  const d = new Date(days * DAY_MS)
  if (Number.isNaN(d.getTime())) throw new RangeError(`date ${days} days from epoch is out of range`)
  const y = d.getUTCFullYear()
  const year = y >= 0 && y <= 9999 ? String(y).padStart(4, '0') : (y < 0 ? '-' : '+') + String(Math.abs(y)).padStart(6, '0')
  return `${year}-${String(d.getUTCMonth() + 1).padStart(2, '0')}-${String(d.getUTCDate()).padStart(2, '0')}`
}

/** Microseconds since midnight as `HH:MM:SS.ffffff`. */
export function isoTime(micros: bigint): string {
  if (micros < 0n || micros >= 86_400_000_000n) throw new RangeError(`time ${micros} µs is outside one day`)
  const us = Number(micros % 1_000_000n)
  const s = Number(micros / 1_000_000n)
  const hh = Math.floor(s / 3600)
  const mm = Math.floor((s % 3600) / 60)
  const ss = s % 60
  return `${pad2(hh)}:${pad2(mm)}:${pad2(ss)}.${String(us).padStart(6, '0')}`
}

const pad2 = (n: number) => String(n).padStart(2, '0')

/**
 * Microseconds since the epoch as ISO-8601 text with six fractional digits; `Z` when zoned
 * (timestamptz: a UTC instant), no zone for wall-clock timestamps. Text, not a number, because
 * the writer's coercion reads a bare number or bigint as epoch *millis*.
 */
export function isoMicros(micros: bigint, zoned: boolean): string {
  return isoSubMillis(micros, 1_000n, 3, zoned)
}

/** Nanoseconds since the epoch as ISO-8601 text with nine fractional digits (see isoMicros). */
export function isoNanos(nanos: bigint, zoned: boolean): string {
  return isoSubMillis(nanos, 1_000_000n, 6, zoned)
}

function isoSubMillis(v: bigint, perMilli: bigint, digits: number, zoned: boolean): string {
  const ms = v / perMilli - (v % perMilli < 0n ? 1n : 0n)
  const rest = v - ms * perMilli
  const d = new Date(Number(ms))
  if (Number.isNaN(d.getTime())) throw new RangeError(`timestamp ${v} is out of range`)
  const base = d.toISOString() // YYYY-MM-DDTHH:MM:SS.mmmZ (±YYYYYY past year 9999)
  return `${base.slice(0, -1)}${String(rest).padStart(digits, '0')}${zoned ? 'Z' : ''}`
}

/** A 16-byte UUID as its canonical text. */
export function uuidText(bytes: Uint8Array): string {
  const h = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

/** A plain Uint8Array copy (not a Buffer view into a larger pool). */
export function ownBytes(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(bytes)
}

/** Assigns field ids depth-first while a decoder builds an Iceberg type tree (callers re-map ids by name). */
export class IdAllocator {
  private next = 1
  take(): number {
    return this.next++
  }
}
