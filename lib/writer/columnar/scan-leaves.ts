/**
 * The scanner's leaf columns (scan.ts; numbers in scan-numbers.ts) and what they share: a value read from a record's bytes goes straight into a
 * growable typed array — no JS value per record — and the Arrow data and Iceberg statistics are
 * made once per file, in `build`, with what arrow-build.ts gives for the same values (columns.ts,
 * columns-bytes.ts: the same counts, the same -0 rule, bounds as bigint for 64-bit columns and
 * in code point order for strings). Statistics are computed at build, not while scanning, so
 * rolling a record back is setting a length.
 */
import * as arrow from 'apache-arrow'
import type { LeafStats } from './column-parts.js'
import { escapeAt, QUOTE, utf8Length, written } from './scan-bytes.js'
import { stringBounds } from './scan-bounds.js'

/** A column of the scanner: reads a value at `i` (the index after it, or -1), appends a null, rolls back to `n` rows, builds. */
export interface ScanColumn {
  length: number
  value(b: Uint8Array, i: number): number
  null(): void
  truncate(n: number): void
  /** Room for `rows` rows in all (a record's values in lists and string bytes aside): no growing while they are read. */
  reserve(rows: number): void
  /** Arrow data of the rows, the statistics filled; `placeholders` as arrow-build.ts counts them for repeated leaves. */
  build(placeholders: number): arrow.Data
}

/** A growable bitmap (validity, booleans): bits are set and cleared, so a rolled-back row leaves nothing behind. */
export class Bits {
  bytes = new Uint8Array(16)
  set(i: number, on: boolean): void {
    const k = i >> 3
    if (k >= this.bytes.length) this.bytes = grow(this.bytes, k + 1)
    if (on) this.bytes[k]! |= 1 << (i & 7)
    else this.bytes[k]! &= ~(1 << (i & 7))
  }
  get(i: number): boolean {
    return (this.bytes[i >> 3]! & (1 << (i & 7))) !== 0
  }
  reserve(n: number): void {
    if ((n + 7) >> 3 > this.bytes.length) this.bytes = grow(this.bytes, (n + 7) >> 3)
  }
  /** The first `n` bits, nothing set past them. */
  slice(n: number): Uint8Array {
    const out = this.bytes.slice(0, (n + 7) >> 3)
    if (n & 7) out[out.length - 1]! &= (1 << (n & 7)) - 1
    return out
  }
  /** How many of the first `n` bits are clear (whole bytes at a time). */
  zeros(n: number): number {
    let ones = 0
    const whole = n >> 3
    for (let k = 0; k < whole; k++) ones += ONES[this.bytes[k]!]!
    for (let i = whole << 3; i < n; i++) if (this.get(i)) ones++
    return n - ones
  }
}

/** Set bits per byte value. */
const ONES = Uint8Array.from({ length: 256 }, (_, v) => {
  let n = 0
  for (let x = v; x; x >>= 1) n += x & 1
  return n
})

export function grow<T extends Uint8Array | Int32Array | Float64Array>(a: T, need: number): T {
  const next = new (a.constructor as new (n: number) => T)(Math.max(need, a.length * 2))
  next.set(a)
  return next
}

/**
 * What every leaf column keeps: its rows, their validity, the Arrow type, the statistics it fills
 * at build and whether it tracks bounds. Rolling back is setting the row count.
 */
export abstract class Leaf {
  length = 0
  valid = new Bits()
  constructor(
    readonly arrowType: arrow.DataType,
    readonly stats: LeafStats,
    readonly bounds: boolean,
  ) {}

  truncate(n: number): void {
    this.length = n
  }

  reserve(rows: number): void {
    this.valid.reserve(rows)
  }

  /** The first `n` rows' value and null counts into the statistics (`placeholders` as arrow-build.ts counts them); returns the nulls. */
  protected count(n: number, placeholders: number): number {
    const nulls = this.valid.zeros(n)
    this.stats.valueCount += n + placeholders
    this.stats.nullCount += nulls + placeholders
    return nulls
  }
}

/** `offsets` (a variable-length column's: strings, lists) with row `k` ending at `end`, grown when full. */
export function endRow(offsets: Int32Array<ArrayBuffer>, k: number, end: number): Int32Array<ArrayBuffer> {
  if (k + 2 > offsets.length) offsets = grow(offsets, k + 2)
  offsets[k + 1] = end
  return offsets
}

export class BooleanColumn extends Leaf implements ScanColumn {
  bits = new Bits()

  override reserve(rows: number): void {
    super.reserve(rows)
    this.bits.reserve(rows)
  }

  value(b: Uint8Array, i: number): number {
    let v: boolean
    if (b[i] === 0x74 && b[i + 1] === 0x72 && b[i + 2] === 0x75 && b[i + 3] === 0x65) v = true
    else if (b[i] === 0x66 && b[i + 1] === 0x61 && b[i + 2] === 0x6c && b[i + 3] === 0x73 && b[i + 4] === 0x65) v = false
    else return -1
    const k = this.length++
    this.bits.set(k, v)
    this.valid.set(k, true)
    return i + (v ? 4 : 5)
  }

  null(): void {
    const k = this.length++
    this.bits.set(k, false)
    this.valid.set(k, false)
  }

  build(placeholders: number): arrow.Data {
    const n = this.length
    const nulls = this.count(n, placeholders)
    let seenTrue = false
    let seenFalse = false
    for (let i = 0; i < n; i++) {
      if (!this.valid.get(i)) continue
      if (this.bits.get(i)) seenTrue = true
      else seenFalse = true
    }
    const s = this.stats
    if (this.bounds && (seenTrue || seenFalse)) {
      s.min = !seenFalse
      s.max = seenTrue
    }
    return arrow.makeData({ type: this.arrowType as arrow.Bool, length: n, nullCount: nulls, nullBitmap: this.valid.slice(n), data: this.bits.slice(n) })
  }
}

/** A string: its UTF-8 copied after checking it, escapes decoded; anything malformed gives the record up. */
export class StringColumn extends Leaf implements ScanColumn {
  bytes = new Uint8Array(1024)
  offsets = new Int32Array(65)

  override reserve(rows: number): void {
    super.reserve(rows)
    if (rows + 1 > this.offsets.length) this.offsets = grow(this.offsets, rows + 1)
  }

  value(b: Uint8Array, i: number): number {
    if (b[i] !== QUOTE) return -1
    let pos = this.offsets[this.length]!
    i++
    // A value's UTF-8 is never longer than what is left of the record (an escape shrinks): one capacity check per value.
    if (pos + b.length - i > this.bytes.length) this.bytes = grow(this.bytes, pos + b.length - i)
    const out = this.bytes
    for (;;) {
      const c = b[i]
      if (c === QUOTE) break
      if (c === undefined) return -1
      if (c < 0x80) {
        if (c < 0x20) return -1
        if (c === 0x5c) {
          i = escapeAt(b, i + 1, out, pos)
          if (i < 0) return -1
          pos = written.pos
          continue
        }
        out[pos++] = c
        i++
        continue
      }
      const len = utf8Length(b, i)
      if (len === 0) return -1
      for (let j = 0; j < len; j++) out[pos++] = b[i + j]!
      i += len
    }
    this.close(pos, true)
    return i + 1
  }

  null(): void {
    this.close(this.offsets[this.length]!, false)
  }

  /** A value given as UTF-8 bytes (not read from a record: the `_kafka` topic). */
  pushBytes(text: Uint8Array): void {
    const pos = this.offsets[this.length]!
    if (pos + text.length > this.bytes.length) this.bytes = grow(this.bytes, pos + text.length)
    this.bytes.set(text, pos)
    this.close(pos + text.length, true)
  }

  close(end: number, valid: boolean): void {
    const k = this.length++
    this.offsets = endRow(this.offsets, k, end)
    this.valid.set(k, valid)
  }

  build(placeholders: number): arrow.Data {
    const n = this.length
    const { offsets, bytes } = this
    const nulls = this.count(n, placeholders)
    const [min, max] = this.bounds ? stringBounds(bytes, offsets, n, nulls > 0 ? this.valid : undefined) : [-1, -1]
    const s = this.stats
    const text = (k: number): string => Buffer.prototype.utf8Slice.call(bytes, offsets[k]!, offsets[k + 1]!) as string
    s.min = min < 0 ? undefined : text(min)
    s.max = max < 0 ? undefined : text(max)
    const data = bytes.slice(0, offsets[n]!)
    return arrow.makeData({ type: this.arrowType as arrow.Utf8, length: n, nullCount: nulls, nullBitmap: this.valid.slice(n), valueOffsets: offsets.slice(0, n + 1), data })
  }

  /** The first `n` values as text (null for a null), for the dictionary choice. */
  sample(n: number): (string | null)[] {
    const out: (string | null)[] = []
    for (let i = 0; i < n; i++) out.push(this.valid.get(i) ? (Buffer.prototype.latin1Slice.call(this.bytes, this.offsets[i]!, this.offsets[i + 1]!) as string) : null)
    return out
  }
}
