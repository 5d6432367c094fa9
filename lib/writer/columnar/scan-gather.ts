/**
 * Some of a scanner's rows copied, column by column, into an empty twin of its columns (the same
 * schema compiled again: scan.ts `select`), for a file of those rows alone: a partitioned table's
 * rows split by partition value (lib/writer scan-partition.ts). The twin then builds as the
 * scanner builds — statistics, dictionary choice, Arrow data — so a file of gathered rows is the
 * file the same records scanned alone in that order would give. A copy of typed-array slots, not
 * a second reading of the records' JSON: nothing in it can refuse a row.
 */
import { Bits, BooleanColumn, grow, Leaf, StringColumn, type ScanColumn } from './scan-leaves.js'
import { KafkaColumn, ListColumn, StructColumn } from './scan-nested.js'
import { LongColumn, NumberColumn } from './scan-numbers.js'

/** `rows` of `from` (indexes below its length, in the order given) appended to `to`, a column of the same type compiled from the same schema. */
export function gather(to: ScanColumn, from: ScanColumn, rows: Int32Array): void {
  if (to.constructor !== from.constructor) throw new Error(`scan-gather: a ${from.constructor.name} into a ${to.constructor.name}`)
  if (to instanceof StructColumn) return gatherStruct(to, from as StructColumn, rows)
  if (to instanceof KafkaColumn) return gatherStruct(to.inner, (from as KafkaColumn).inner, rows)
  if (to instanceof ListColumn) return gatherList(to, from as ListColumn, rows)
  if (!(to instanceof Leaf) || !(from instanceof Leaf)) throw new Error(`scan-gather: no gather for ${to.constructor.name}`)
  if (to instanceof NumberColumn) gatherNumbers(to, from as NumberColumn, rows)
  else if (to instanceof LongColumn) gatherLongs(to, from as LongColumn, rows)
  else if (to instanceof StringColumn) gatherStrings(to, from as StringColumn, rows)
  else if (to instanceof BooleanColumn) gatherBits(to.bits, to.length, (from as BooleanColumn).bits, rows)
  else throw new Error(`scan-gather: no gather for ${to.constructor.name}`)
  gatherBits(to.valid, to.length, from.valid, rows)
  to.length += rows.length
}

/** Bits `rows` of `from` set at `at`, `at + 1`, … of `to`. */
function gatherBits(to: Bits, at: number, from: Bits, rows: Int32Array): void {
  to.reserve(at + rows.length)
  for (let k = 0; k < rows.length; k++) to.set(at + k, from.get(rows[k]!))
}

function gatherStruct(to: StructColumn, from: StructColumn, rows: Int32Array): void {
  for (let k = 0; k < to.children.length; k++) gather(to.children[k]!, from.children[k]!, rows)
  gatherBits(to.valid, to.length, from.valid, rows)
  to.length += rows.length
}

/** A list's rows, and their elements (in row order) gathered into its element column. */
function gatherList(to: ListColumn, from: ListColumn, rows: Int32Array): void {
  const src = from.offsets
  let count = 0
  for (const r of rows) count += src[r + 1]! - src[r]!
  const elements = new Int32Array(count)
  const n = to.length
  if (n + rows.length + 1 > to.offsets.length) to.offsets = grow(to.offsets, n + rows.length + 1)
  const offsets = to.offsets
  let end = offsets[n]!
  let e = 0
  for (let k = 0; k < rows.length; k++) {
    const r = rows[k]!
    for (let j = src[r]!; j < src[r + 1]!; j++) elements[e++] = j
    end += src[r + 1]! - src[r]!
    offsets[n + k + 1] = end
  }
  gather(to.element, from.element, elements)
  gatherBits(to.valid, n, from.valid, rows)
  to.length += rows.length
}

function gatherNumbers(to: NumberColumn, from: NumberColumn, rows: Int32Array): void {
  const n = to.length
  if (n + rows.length > to.values.length) to.values = grow(to.values, n + rows.length)
  const out = to.values
  const src = from.values
  for (let k = 0; k < rows.length; k++) out[n + k] = src[rows[k]!]!
}

function gatherLongs(to: LongColumn, from: LongColumn, rows: Int32Array): void {
  const n = to.length
  if (2 * (n + rows.length) > to.words.length) to.words = grow(to.words, 2 * (n + rows.length))
  const out = to.words
  const src = from.words
  for (let k = 0; k < rows.length; k++) {
    const r = rows[k]!
    out[2 * (n + k)] = src[2 * r]!
    out[2 * (n + k) + 1] = src[2 * r + 1]!
  }
}

function gatherStrings(to: StringColumn, from: StringColumn, rows: Int32Array): void {
  const n = to.length
  const src = from.offsets
  let size = 0
  for (const r of rows) size += src[r + 1]! - src[r]!
  let pos = to.offsets[n]!
  if (pos + size > to.bytes.length) to.bytes = grow(to.bytes, pos + size)
  if (n + rows.length + 1 > to.offsets.length) to.offsets = grow(to.offsets, n + rows.length + 1)
  const out = to.bytes
  const bytes = from.bytes
  for (let k = 0; k < rows.length; k++) {
    const r = rows[k]!
    const end = src[r + 1]!
    // Most values are a few bytes: a loop, not a subarray object per value.
    if (end - src[r]! > 64) {
      out.set(bytes.subarray(src[r]!, end), pos)
      pos += end - src[r]!
    } else for (let j = src[r]!; j < end; j++) out[pos++] = bytes[j]!
    to.offsets[n + k + 1] = pos
  }
}
