/**
 * What every leaf builder shares (columns.ts, columns-bytes.ts): the statistics a leaf column
 * keeps, the validity bitmap, and the orders min/max use for strings and bytes.
 */
import type * as arrow from 'apache-arrow'

/** Statistics of one leaf column, in Parquet's counting (see arrow-build.ts for repeated fields). */
export interface LeafStats {
  id: number
  type: string
  valueCount: number
  nullCount: number
  /** Only for float and double. */
  nanCount?: number
  /** Smallest and largest non-null, non-NaN value (coerced representation), when bounds are tracked. */
  min?: unknown
  max?: unknown
}

/** Every count of `stats` back to zero and its bounds cleared, before a file's rows are built into them. */
export function resetStats(stats: readonly LeafStats[]): void {
  for (const s of stats) {
    s.valueCount = 0
    s.nullCount = 0
    s.min = undefined
    s.max = undefined
    if (s.nanCount !== undefined) s.nanCount = 0
  }
}

export type LeafBuilder = (values: unknown[], placeholders: number) => arrow.Data

/** Validity bitmap (bit set = valid) and null count of a column. */
export function validity(values: unknown[]): { nullBitmap: Uint8Array; nullCount: number } {
  const n = values.length
  const bitmap = new Uint8Array((n + 7) >> 3)
  let nulls = 0
  for (let i = 0; i < n; i++) {
    if (values[i] === null) nulls++
    else bitmap[i >> 3]! |= 1 << (i & 7)
  }
  return { nullBitmap: bitmap, nullCount: nulls }
}

export type Count = (values: unknown[], placeholders: number, nulls: number) => void

/** Compare strings by Unicode code point (UTF-8 byte order), which JS's UTF-16 `<` is not for astral characters. */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i)
    let y = b.charCodeAt(i)
    if (x === y) continue
    // Surrogates (astral code points) sort above U+E000..U+FFFF in code point order.
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000
    }
    return x - y
  }
  return a.length - b.length
}

/** Compare byte strings as unsigned bytes, lexicographically. */
export const compareBytes = (a: Uint8Array, b: Uint8Array): number => Buffer.compare(a, b)
