/**
 * Columns of a scanner whose schema was inferred from a batch's first records (the writer's
 * scanner lane, for a table the batch creates: lib/writer/scan-tables.ts). Such a scanner may keep
 * a batch only if inference over every record of it would give that same schema, so beyond what a
 * column reads exactly it refuses any value lib/schema's inference types differently from the
 * column (infer.ts `primKind`): a string column refuses text that is a zoned date-time (inferred
 * timestamptz), a timestamptz column reads only such text — no epoch numbers, no text without a
 * zone or a time. Numbers, booleans, structs and lists need nothing more: a long column reads
 * integer literals only (inferred long), a double column numbers (inferred double once any is
 * fractional, as one of the first records' was), a boolean column `true` and `false`, and a
 * struct no key its schema lacks. Each struct notes the first row each of its keys came in
 * (`firstKey`), for `keysInOrder`; a key first seen in a row rolled back is forgotten with it
 * (StructColumn.truncate). A refused record still ends the lane's use of the scanner: a probed
 * table is read all or nothing (scan-lane.ts releases it at its first).
 */
import { fastIsoMicros, isZonedTimestampText } from '../../schema/index.js'
import { asciiEnd, isDigit, QUOTE, TEMPORAL_TEXT } from './scan-bytes.js'
import { StringColumn } from './scan-leaves.js'
import { KafkaColumn, StructColumn } from './scan-nested.js'
import { NumberColumn } from './scan-numbers.js'

/** The shortest zoned date-time parseDateTime takes, `YYYY-MM-DDTHH:MMZ`: shorter text is never one. */
const SHORTEST_ZONED = 17

export class InferredStringColumn extends StringColumn {
  override value(b: Uint8Array, i: number): number {
    const from = this.offsets[this.length]!
    const at = super.value(b, i)
    if (at < 0) return at
    const to = this.offsets[this.length]!
    // The caller rolls the record back: the value just added goes with it.
    if (to - from >= SHORTEST_ZONED && isZonedTimestampText(Buffer.prototype.utf8Slice.call(this.bytes, from, to) as string)) return -1
    return at
  }
}

export class InferredTimestampColumn extends NumberColumn {
  override value(b: Uint8Array, i: number): number {
    if (b[i] !== QUOTE) return -1
    const end = asciiEnd(b, i + 1, TEMPORAL_TEXT)
    if (end < 0) return -1
    // Inference's timestamptz: zoned, with a time, exact in microseconds. What JSON.stringify writes of a Date is all three (its range is checked as it is read).
    if (!isZulu(b, i + 1, end)) {
      const text = Buffer.prototype.latin1Slice.call(b, i + 1, end) as string
      if (!isZonedTimestampText(text) || fastIsoMicros(text) === undefined) return -1
    }
    return super.value(b, i)
  }
}

const DIGITS_AT = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]

/** `YYYY-MM-DDTHH:MM:SSZ` or `YYYY-MM-DDTHH:MM:SS.mmmZ` at `b[o..end)`: a zoned date-time to lib/schema's parser whenever its fields are in range. */
function isZulu(b: Uint8Array, o: number, end: number): boolean {
  const n = end - o
  if ((n !== 20 && n !== 24) || b[end - 1] !== 0x5a || b[o + 4] !== 0x2d || b[o + 7] !== 0x2d || b[o + 10] !== 0x54 || b[o + 13] !== 0x3a || b[o + 16] !== 0x3a) return false
  for (const k of DIGITS_AT) if (!isDigit(b[o + k]!)) return false
  return n === 20 || (b[o + 19] === 0x2e && isDigit(b[o + 20]!) && isDigit(b[o + 21]!) && isDigit(b[o + 22]!))
}

/**
 * Whether `struct`'s fields (and its nested structs' fields) first appeared in its rows in schema
 * order. Inference orders a struct's fields by the first record that has each key (a null too) —
 * and the scanner reads a record's keys in schema order only — so over the rows scanned it gives
 * the schema's order exactly when no field's key first came in a later row than the next field's.
 * The `_kafka` column is no key of a value: it stays last.
 */
export function keysInOrder(struct: StructColumn): boolean {
  const first = struct.firstKey
  if (first === undefined) return false
  let last = -1
  for (let k = 0; k < struct.children.length; k++) {
    const child = struct.children[k]!
    if (child instanceof KafkaColumn) continue
    if (first[k]! < 0 || first[k]! < last || (child instanceof StructColumn && !keysInOrder(child))) return false
    last = first[k]!
  }
  return true
}
