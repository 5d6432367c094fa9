/**
 * Leaf builders of variable-width and byte-valued columns (string, binary, uuid, fixed[L],
 * decimal): offsets and data buffers filled in one pass with the column's statistics. The
 * fixed-width and boolean builders are in columns.ts, which picks a builder per type.
 */
import * as arrow from 'apache-arrow'
import { FloeError } from '../../errors.js'
import { compareBytes, compareCodePoints, validity, type Count, type LeafBuilder, type LeafStats } from './column-parts.js'

/** Values per native join + encode: large enough to amortise the calls, small enough to stay far below V8's string limit. */
const STRING_SLICE = 8192
const MAX_OFFSET = 2 ** 31 - 1

export function stringBuilder(arrowType: arrow.DataType, stats: LeafStats, bounds: boolean, count: Count): LeafBuilder {
  return (values, placeholders) => {
    const n = values.length
    const { nullBitmap, nullCount } = validity(values)
    const offsets = new Int32Array(n + 1)
    const parts: Buffer[] = []
    let pos = 0
    let min = stats.min as string | undefined
    let max = stats.max as string | undefined
    // Per slice: one native join and one UTF-8 encode; per-string byte lengths only when the slice is not ASCII.
    for (let from = 0; from < n; from += STRING_SLICE) {
      const to = Math.min(n, from + STRING_SLICE)
      const strings = values.slice(from, to).map((v) => (v === null ? '' : v)) as string[]
      const joined = strings.join('')
      const data = Buffer.from(joined, 'utf8')
      parts.push(data)
      const ascii = data.length === joined.length
      for (let i = from; i < to; i++) {
        const s = strings[i - from]!
        pos += ascii ? s.length : Buffer.byteLength(s, 'utf8')
        if (pos > MAX_OFFSET)
          throw new FloeError(`a string column passed 2 GiB in one Parquet chunk (${n} values); lower FLOE_TARGET_FILE_MB or FLOE_MEMORY_BUDGET_MB`)
        offsets[i + 1] = pos
        if (bounds && values[i] !== null) {
          // An ASCII string compares the same in UTF-16 and code point order against any string.
          if (min === undefined || (ascii ? s < min : compareCodePoints(s, min) < 0)) min = s
          if (max === undefined || (ascii ? s > max : compareCodePoints(s, max) > 0)) max = s
        }
      }
    }
    stats.min = min
    stats.max = max
    count(values, placeholders, nullCount)
    const data = parts.length === 1 ? parts[0]! : Buffer.concat(parts, pos)
    return arrow.makeData({ type: arrowType as arrow.Utf8, length: n, nullCount, nullBitmap, valueOffsets: offsets, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) })
  }
}

function trackBytes(stats: LeafStats, b: Uint8Array): void {
  if (stats.min === undefined || compareBytes(b, stats.min as Uint8Array) < 0) stats.min = b
  if (stats.max === undefined || compareBytes(b, stats.max as Uint8Array) > 0) stats.max = b
}

export function bytesBuilder(arrowType: arrow.DataType, stats: LeafStats, bounds: boolean, count: Count): LeafBuilder {
  return (values, placeholders) => {
    const n = values.length
    const { nullBitmap, nullCount } = validity(values)
    const offsets = new Int32Array(n + 1)
    let total = 0
    for (let i = 0; i < n; i++) {
      const v = values[i] as Uint8Array | null
      if (v !== null) total += v.length
      offsets[i + 1] = total
    }
    const data = new Uint8Array(total)
    for (let i = 0; i < n; i++) {
      const v = values[i] as Uint8Array | null
      if (v === null) continue
      data.set(v, offsets[i]!)
      if (bounds) trackBytes(stats, v)
    }
    count(values, placeholders, nullCount)
    return arrow.makeData({ type: arrowType as arrow.Binary, length: n, nullCount, nullBitmap, valueOffsets: offsets, data })
  }
}

export function fixedBytesBuilder(arrowType: arrow.DataType, width: number, stats: LeafStats, bounds: boolean, count: Count): LeafBuilder {
  return (values, placeholders) => {
    const n = values.length
    const { nullBitmap, nullCount } = validity(values)
    const data = new Uint8Array(n * width)
    for (let i = 0; i < n; i++) {
      const v = values[i] as Uint8Array | null
      if (v === null) continue
      data.set(v, i * width)
      if (bounds) trackBytes(stats, v)
    }
    count(values, placeholders, nullCount)
    return arrow.makeData({ type: arrowType as arrow.FixedSizeBinary, length: n, nullCount, nullBitmap, data })
  }
}

export function decimalBuilder(arrowType: arrow.DataType, stats: LeafStats, bounds: boolean, count: Count): LeafBuilder {
  return (values, placeholders) => {
    const n = values.length
    const { nullBitmap, nullCount } = validity(values)
    const words = new BigUint64Array(n * 2)
    let min = stats.min as bigint | undefined
    let max = stats.max as bigint | undefined
    for (let i = 0; i < n; i++) {
      const v = values[i] as bigint | null
      if (v === null) continue
      // 128-bit two's complement, little-endian: low 64 bits, then high 64 bits.
      words[2 * i] = BigInt.asUintN(64, v)
      words[2 * i + 1] = BigInt.asUintN(64, v >> 64n)
      if (bounds) {
        if (min === undefined || v < min) min = v
        if (max === undefined || v > max) max = v
      }
    }
    stats.min = min
    stats.max = max
    count(values, placeholders, nullCount)
    const data = new Uint32Array(words.buffer, words.byteOffset, n * 4)
    return arrow.makeData({ type: arrowType as arrow.Decimal, length: n, nullCount, nullBitmap, data })
  }
}
