/**
 * Primitive conversions of coercion, one closure per column type (see coerce.ts for the inputs
 * each type accepts and the value representation it produces). A value that cannot be converted
 * throws `Failure`, which the struct/list/map levels annotate with the path.
 */
import { SchemaError } from '../../errors.js'
import { fastIsoMicros, decimalParams, fixedLength } from '../../schema/index.js'
import { base64Bytes, isoToEpochDays, isoToEpochNanos, isoToTimeMicros, losslessText, toBigInt, toDecimal, toFloat, uuidBytes } from './values.js'

export interface Ctx {
  unknown: { path: string; value: unknown }[] | undefined
  /** The record came from JSON.parse (lib/codec parseJsonObjectFast): where digits could matter, ask for the exact decoding. */
  fast?: boolean
  /** Set by a struct's conversion: the size (sizes.ts) of the row it returned. */
  bytes?: number
}

export type Convert = (v: unknown, ctx: Ctx) => unknown

/** Thrown inside the compiled tree; the top level turns it into a RecordError with the full path. */
export class Failure {
  constructor(
    readonly segments: string[],
    readonly expected: string,
    readonly value: unknown,
  ) {}
}

/** JSON text of any value (bigints as digits); what a string column stores for an object or array. */
export function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)) ?? String(value)
  } catch {
    return String(value)
  }
}

/** The largest finite 32-bit float. */

/**
 * `f` (toFloat of `v`) holds `v` exactly as far as a float column can tell: an integer is the
 * double's value or the double's own shortest text (1152921504606847000, how JSON.stringify and
 * Java print 2^60), so no digit written is lost; finite text stays finite.
 */
function exactFloat(v: unknown, f: number): boolean {
  const text = typeof v === 'bigint' ? v.toString() : typeof v === 'string' ? v.trim() : losslessText(v)
  if (text === undefined) return true
  if (/^[+-]?\d+$/.test(text)) return Number.isFinite(f) && (BigInt(f) === BigInt(text) || String(f) === text.replace(/^\+/, ''))
  // Explicit NaN / Infinity text is meant; only a finite literal that overflowed is not.
  return Number.isFinite(f) || !/^[+-]?(\d|\.\d)/.test(text)
}

const INT_MIN = -(2 ** 31)
const INT_MAX = 2 ** 31 - 1
const LONG_MIN = -(2n ** 63n)
const LONG_MAX = 2n ** 63n - 1n
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q
}

/** Epoch nanoseconds of a timestamp input: ISO text, epoch millis (number/bigint/lossless) or Date. */
function epochNanos(v: unknown): bigint | undefined {
  if (typeof v === 'string') {
    const t = v.trim()
    if (/^-?\d+$/.test(t)) return BigInt(t) * 1_000_000n
    return isoToEpochNanos(t)
  }
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return undefined
    return Number.isInteger(v) ? BigInt(v) * 1_000_000n : BigInt(Math.round(v * 1_000_000))
  }
  if (typeof v === 'bigint') return v * 1_000_000n
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? undefined : BigInt(v.getTime()) * 1_000_000n
  const text = losslessText(v)
  return text !== undefined ? epochNanos(text) : undefined
}

type Fail = (v: unknown) => never
type AsNumber = (b: bigint) => number | bigint

/** `numbers`: safe-integer longs, times and timestamps as numbers (coerce.ts compileCoercer `longsAsNumbers`). */
export function compilePrimitive(type: string, numbers = false): Convert {
  const fail = (v: unknown): never => {
    throw new Failure([], type, v)
  }
  const asNumber: AsNumber = numbers ? (b) => (b >= -MAX_SAFE && b <= MAX_SAFE ? Number(b) : b) : (b) => b
  const convert = numeric(type, numbers, fail, asNumber) ?? temporal(type, numbers, fail, asNumber) ?? other(type, fail)
  if (convert === undefined) throw new SchemaError(`cannot coerce to Iceberg type '${type}': not supported by Floe's writer`)
  return convert
}

/** boolean, int, long, float, double. */
function numeric(type: string, numbers: boolean, fail: Fail, asNumber: AsNumber): Convert | undefined {
  switch (type) {
    case 'boolean':
      return (v) => {
        if (typeof v === 'boolean') return v
        if (v === 'true' || v === 'false') return v === 'true'
        return fail(v)
      }
    case 'int':
      return (v) => {
        if (typeof v === 'number' && Number.isInteger(v) && v >= INT_MIN && v <= INT_MAX) return v
        const b = toBigInt(v)
        return b !== undefined && b >= INT_MIN && b <= INT_MAX ? Number(b) : fail(v)
      }
    case 'long':
      return (v) => {
        if (typeof v === 'number' && Number.isSafeInteger(v)) return numbers ? v : BigInt(v)
        const b = toBigInt(v)
        return b !== undefined && b >= LONG_MIN && b <= LONG_MAX ? asNumber(b) : fail(v)
      }
    case 'float':
      // Only values a float holds exactly (NaN and ±Infinity included): 0.1 is not one; it needs a double.
      return (v) => {
        const f = typeof v === 'number' ? v : toFloat(v)
        if (f === undefined) return fail(v)
        if (typeof v !== 'number' && (!exactFloat(v, f) || (Number.isFinite(f) && !Number.isFinite(Math.fround(f))))) throw new Failure([], 'float (exactly)', v)
        return Math.fround(f) === f || Number.isNaN(f) ? f : fail(v)
      }
    case 'double':
      // Never stored inexactly without an error: an integer a double cannot hold (beyond 2^53,
      // not a power-of-two multiple) or finite text that overflows to ±Infinity is a Failure (a
      // dead letter), never a rounded value.
      return (v) => {
        if (typeof v === 'number') return v
        const f = toFloat(v)
        if (f === undefined) return fail(v)
        if (!exactFloat(v, f)) throw new Failure([], 'double (exactly)', v)
        return f
      }
  }
  return undefined
}

/** date, time, timestamp[tz], timestamp[tz]_ns. */
function temporal(type: string, numbers: boolean, fail: Fail, asNumber: AsNumber): Convert | undefined {
  switch (type) {
    case 'date':
      return (v) => {
        if (typeof v === 'number' && Number.isInteger(v) && v >= INT_MIN && v <= INT_MAX) return v
        if (typeof v === 'string') return isoToEpochDays(v) ?? fail(v)
        if (v instanceof Date && !Number.isNaN(v.getTime())) return Math.floor(v.getTime() / 86_400_000)
        return fail(v)
      }
    case 'time':
      return (v) => {
        if (typeof v === 'string') return isoToTimeMicros(v) ?? fail(v)
        const ms = typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : typeof v === 'bigint' ? v : undefined
        if (ms === undefined || ms < 0n || ms >= 86_400_000n) return fail(v)
        return numbers ? Number(ms) * 1000 : ms * 1000n
      }
    case 'timestamp':
    case 'timestamptz':
      return (v) => {
        if (typeof v === 'string') {
          const us = fastIsoMicros(v)
          if (us !== undefined) return numbers && Number.isSafeInteger(us) ? us : BigInt(us)
        } else if (typeof v === 'number' && Number.isSafeInteger(v)) {
          if (numbers && Number.isSafeInteger(v * 1000)) return v * 1000
          return BigInt(v) * 1000n
        }
        const ns = epochNanos(v)
        // Nanoseconds a microsecond column cannot hold are refused, never floored.
        if (ns !== undefined && ns % 1000n !== 0n) throw new Failure([], `${type} (microseconds: the value has non-zero digits past them)`, v)
        const us = ns === undefined ? undefined : floorDiv(ns, 1000n)
        return us !== undefined && us >= LONG_MIN && us <= LONG_MAX ? asNumber(us) : fail(v)
      }
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return (v) => {
        const ns = epochNanos(v)
        return ns !== undefined && ns >= LONG_MIN && ns <= LONG_MAX ? asNumber(ns) : fail(v)
      }
  }
  return undefined
}

/** string, uuid, binary, decimal(P, S), fixed[L]. */
function other(type: string, fail: Fail): Convert | undefined {
  switch (type) {
    case 'string':
      return (v) => {
        if (typeof v === 'string') return v
        if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v)
        if (v instanceof Uint8Array) return fail(v)
        return losslessText(v) ?? safeJson(v)
      }
    case 'uuid':
      return (v) => {
        if (v instanceof Uint8Array) return v.length === 16 ? v : fail(v)
        return (typeof v === 'string' ? uuidBytes(v.trim()) : undefined) ?? fail(v)
      }
    case 'binary':
      return (v) => {
        if (v instanceof Uint8Array) return v
        return (typeof v === 'string' ? base64Bytes(v) : undefined) ?? fail(v)
      }
  }
  const dec = decimalParams(type)
  if (dec) return (v) => toDecimal(v, dec.precision, dec.scale) ?? fail(v)
  const len = fixedLength(type)
  if (len !== undefined)
    return (v) => {
      const b = v instanceof Uint8Array ? v : typeof v === 'string' ? base64Bytes(v) : undefined
      return b !== undefined && b.length === len ? b : fail(v)
    }
  return undefined
}
