/**
 * The range of a scanner's top-level column over its rows, for a partitioned table's lane
 * (lib/writer/scan-partition.ts `laneFiles`): the least and greatest value in the writer's value
 * representation — the one partitionTuple reads from a coerced row (int and date as numbers,
 * long as a bigint, timestamp µs as a safe-integer number, string as text) — or null when every
 * row is null. Undefined when some rows are null and others not (two partition values), or the
 * column is one this does not read (float, double, boolean, nested): the lane then gives its
 * records to the present path.
 *
 * Bounds are taken as the statistics take them (scan-bounds.ts): int64 signed, strings in code
 * point order, so a transform that keeps order (identity, truncate, year, month, day, hour) gives
 * every row the same partition value exactly when it gives the least and the greatest the same.
 */
import { longBounds, stringBounds } from './scan-bounds.js'
import { StringColumn, type ScanColumn } from './scan-leaves.js'
import { LongColumn, NumberColumn } from './scan-numbers.js'

/** [least, greatest] of a column's values, or null: every row null. */
export type ColumnRange = readonly [unknown, unknown] | null

export function columnRange(col: ScanColumn, n: number): ColumnRange | undefined {
  if (n === 0 || !(col instanceof NumberColumn || col instanceof LongColumn || col instanceof StringColumn)) return undefined
  const nulls = col.valid.zeros(n)
  if (nulls === n) return null
  if (nulls > 0) return undefined
  if (col instanceof NumberColumn) return col.kind === 'float' || col.kind === 'double' ? undefined : numberRange(col.values, n)
  if (col instanceof LongColumn) {
    const [min, max] = longBounds(col.words, n, undefined)
    const longs = new BigInt64Array(col.words.buffer, col.words.byteOffset, n)
    return [longs[min]!, longs[max]!]
  }
  const [min, max] = stringBounds(col.bytes, col.offsets, n, undefined)
  const text = (k: number): string => Buffer.prototype.utf8Slice.call(col.bytes, col.offsets[k]!, col.offsets[k + 1]!) as string
  return [text(min), text(max)]
}

/**
 * Each row's value of a column columnRange reads, in the same representation (null where the row
 * is null), for a table whose rows span several partition values (scan-partition.ts): undefined
 * for a column it does not read.
 */
export function columnValues(col: ScanColumn): ((row: number) => unknown) | undefined {
  if (col instanceof NumberColumn) {
    if (col.kind === 'float' || col.kind === 'double') return undefined
    const values = col.values
    return (row) => (col.valid.get(row) ? values[row]! : null)
  }
  if (col instanceof LongColumn) {
    const longs = new BigInt64Array(col.words.buffer, col.words.byteOffset, col.words.length >> 1)
    return (row) => (col.valid.get(row) ? longs[row]! : null)
  }
  if (col instanceof StringColumn) {
    const { bytes, offsets } = col
    return (row) => (col.valid.get(row) ? (Buffer.prototype.utf8Slice.call(bytes, offsets[row]!, offsets[row + 1]!) as string) : null)
  }
  return undefined
}

/** Int, date and timestamp values are exact integers (scan-numbers.ts): no -0 or NaN to order. */
function numberRange(values: Float64Array, n: number): [number, number] {
  let min = values[0]!
  let max = min
  for (let i = 1; i < n; i++) {
    const v = values[i]!
    if (v < min) min = v
    else if (v > max) max = v
  }
  // An int or date read from `-0` stays -0 here, as in the present path's row: -0 and 0 are one
  // partition value (one buffer key, path and Avro int), whichever of them a tuple holds.
  return [min, max]
}
