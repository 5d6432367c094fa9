/**
 * The scanner's numeric leaf columns (scan.ts): int, float, double, date and timestamp[tz] (µs)
 * as exact doubles, and long as 64-bit words — so an id of 19 digits is read exactly without a
 * BigInt per value. Statistics as columns.ts computes them for the same values: the -0 rule,
 * bounds of 64-bit columns as bigint.
 */
import * as arrow from 'apache-arrow'
import { isoMicros, isoToEpochDays, readIsoMicrosBytes } from '../../schema/index.js'
import type { LeafStats } from './column-parts.js'
import { asciiEnd, asciiToken, num, numberAt, numValue, QUOTE, TEMPORAL_TEXT, written } from './scan-bytes.js'
import { longBounds } from './scan-bounds.js'
import { grow, Leaf, type ScanColumn } from './scan-leaves.js'

const INT_MIN = -(2 ** 31)
const INT_MAX = 2 ** 31 - 1
const TWO_32 = 4294967296
const LONG_MIN = -(2n ** 63n)
const LONG_MAX = 2n ** 63n - 1n

/** How a numeric column reads a value. */
export type NumberKind = 'int' | 'float' | 'double' | 'date' | 'timestamp'

const KIND: Record<string, NumberKind> = { int: 'int', float: 'float', double: 'double', date: 'date', timestamp: 'timestamp', timestamptz: 'timestamp' }

/** The kind of a primitive Iceberg type the scanner reads as an exact double, if it is one. */
export const numberKind = (type: string): NumberKind | undefined => KIND[type]

/** A double or float column's number at `i` (its value in `numValue`): the index after it, or -1 when the present path should judge it. */
function floating(b: Uint8Array, i: number, float: boolean): number {
  const at = numberAt(b, i)
  if (at < 0) return -1
  const v = numValue[0]!
  // An overflow, or an integer literal past 2^53: the present path's exact decoding decides.
  if (!Number.isFinite(v) || (num.integerLiteral && !Number.isSafeInteger(v))) return -1
  if (float && Math.fround(v) !== v) return -1
  return at
}

/**
 * A date or timestamp string at `i` (its opening quote) into `isoMicros[0]` (epoch days for a
 * date), with `written.pos` after it; false when the present path should judge it.
 */
function temporalText(b: Uint8Array, i: number, kind: NumberKind): boolean {
  if (kind === 'date') {
    const text = asciiToken(b, i + 1, TEMPORAL_TEXT)
    const days = text === undefined ? undefined : isoToEpochDays(text)
    if (days === undefined) return false
    isoMicros[0] = days
    return true
  }
  // A timestamp is read from its bytes: no string per value.
  const end = asciiEnd(b, i + 1, TEMPORAL_TEXT)
  if (end < 0) return false
  written.pos = end + 1
  return readIsoMicrosBytes(b, i + 1, end)
}

/** int, float, double, date, timestamp[tz]: every value an exact double, converted to the Arrow type at build. */
export class NumberColumn extends Leaf implements ScanColumn {
  values = new Float64Array(64)
  constructor(
    readonly kind: NumberKind,
    arrowType: arrow.DataType,
    stats: LeafStats,
    bounds: boolean,
  ) {
    super(arrowType, stats, bounds)
  }

  override reserve(rows: number): void {
    super.reserve(rows)
    if (rows > this.values.length) this.values = grow(this.values, rows)
  }

  value(b: Uint8Array, i: number): number {
    const kind = this.kind
    let v: number
    if (kind === 'double' || kind === 'float') {
      i = floating(b, i, kind === 'float')
      if (i < 0) return -1
      v = numValue[0]!
    } else if (b[i] === QUOTE && kind !== 'int') {
      if (!temporalText(b, i, kind)) return -1
      v = isoMicros[0]!
      i = written.pos
    } else {
      i = numberAt(b, i)
      if (i < 0 || !num.exactInteger) return -1
      v = numValue[0]!
      // A timestamp's number is epoch milliseconds.
      if (kind === 'timestamp') v *= 1000
      if (kind === 'timestamp' ? !Number.isSafeInteger(v) : v < INT_MIN || v > INT_MAX) return -1
    }
    this.push(v, true)
    return i
  }

  null(): void {
    this.push(0, false)
  }

  push(v: number, valid: boolean): void {
    const k = this.length++
    if (k >= this.values.length) this.values = grow(this.values, k + 1)
    this.values[k] = v
    this.valid.set(k, valid)
  }

  build(placeholders: number): arrow.Data {
    const n = this.length
    const values = this.values
    const nulls = this.count(n, placeholders)
    let min: number | undefined
    let max: number | undefined
    for (let i = 0; this.bounds && i < n; i++) {
      if (nulls > 0 && !this.valid.get(i)) continue
      const v = values[i]!
      if (min === undefined || v < min || (v === 0 && min === 0 && Object.is(v, -0))) min = v
      if (max === undefined || v > max || (v === 0 && max === 0 && Object.is(max, -0))) max = v
    }
    const s = this.stats
    const big = this.kind === 'timestamp'
    s.min = big && min !== undefined ? BigInt(min) : min
    s.max = big && max !== undefined ? BigInt(max) : max
    return arrow.makeData({ type: this.arrowType as arrow.Int, length: n, nullCount: nulls, nullBitmap: this.valid.slice(n), data: this.typed(n) as Int32Array })
  }

  typed(n: number): Int32Array | Float32Array | Float64Array | BigInt64Array {
    const values = this.values.subarray(0, n)
    if (this.kind === 'double') return values.slice()
    if (this.kind === 'float') return Float32Array.from(values)
    if (this.kind !== 'timestamp') return Int32Array.from(values)
    const out = new BigInt64Array(n)
    const words = new Int32Array(out.buffer)
    for (let i = 0; i < n; i++) {
      const high = Math.floor(values[i]! / TWO_32)
      words[2 * i] = values[i]! - high * TWO_32
      words[2 * i + 1] = high
    }
    return out
  }
}

/** long: two 32-bit words per value (low, high), from the double for up to 15 digits, from the literal's digits beyond. */
export class LongColumn extends Leaf implements ScanColumn {
  words = new Int32Array(128)

  override reserve(rows: number): void {
    super.reserve(rows)
    if (2 * rows > this.words.length) this.words = grow(this.words, 2 * rows)
  }

  value(b: Uint8Array, i: number): number {
    const at = numberAt(b, i)
    if (at < 0 || !num.integerLiteral) return -1
    const k = this.length++
    if (2 * k + 2 > this.words.length) this.words = grow(this.words, 2 * k + 2)
    if (num.exactInteger) {
      const v = numValue[0]!
      const high = Math.floor(v / TWO_32)
      this.words[2 * k] = v - high * TWO_32
      this.words[2 * k + 1] = high
    } else {
      const v = BigInt(Buffer.prototype.latin1Slice.call(b, num.start, at) as string)
      if (v < LONG_MIN || v > LONG_MAX) {
        this.length--
        return -1
      }
      this.words[2 * k] = Number(BigInt.asIntN(32, v))
      this.words[2 * k + 1] = Number(BigInt.asIntN(32, v >> 32n))
    }
    this.valid.set(k, true)
    return at
  }

  null(): void {
    const k = this.length++
    if (2 * k + 2 > this.words.length) this.words = grow(this.words, 2 * k + 2)
    this.words[2 * k] = 0
    this.words[2 * k + 1] = 0
    this.valid.set(k, false)
  }

  /** A value given as a bigint within int64, or a safe integer (not read from a record: the `_kafka` offset). */
  pushExact(v: bigint | number): void {
    const k = this.length++
    if (2 * k + 2 > this.words.length) this.words = grow(this.words, 2 * k + 2)
    const n = typeof v === 'number' ? v : Number(v)
    if (Number.isSafeInteger(n)) {
      const high = Math.floor(n / TWO_32)
      this.words[2 * k] = n - high * TWO_32
      this.words[2 * k + 1] = high
    } else {
      const big = BigInt(v)
      this.words[2 * k] = Number(BigInt.asIntN(32, big))
      this.words[2 * k + 1] = Number(BigInt.asIntN(32, big >> 32n))
    }
    this.valid.set(k, true)
  }

  build(placeholders: number): arrow.Data {
    const n = this.length
    const w = this.words
    const nulls = this.count(n, placeholders)
    const [min, max] = this.bounds ? longBounds(w, n, nulls > 0 ? this.valid : undefined) : [-1, -1]
    const s = this.stats
    const data = new BigInt64Array(w.slice(0, 2 * n).buffer)
    s.min = min < 0 ? undefined : data[min]
    s.max = max < 0 ? undefined : data[max]
    return arrow.makeData({ type: this.arrowType as arrow.Int64, length: n, nullCount: nulls, nullBitmap: this.valid.slice(n), data: data as never })
  }
}
