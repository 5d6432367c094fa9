/**
 * Wide records read once (issue 20, "one walk"): JSON.parse builds an object of ≥ 128 keys in
 * dictionary mode, so every property read is a hash lookup and every key enumeration collects
 * and sorts its keys anew (20k records of 200 keys: `for…in` alone ~10 µs per record, the
 * coercer's 200 reads by name ~5 µs). The guard (guard.ts), which must enumerate every key
 * anyway, keeps what it read: the record's keys and values in enumeration order (its "layout").
 * A record lib/codec decoded as a known wide shape (json-wide.ts) comes with its layout, which
 * decode.ts keeps before the guard runs: the guard then reads the values from it, not by name.
 * The coercer (struct-code.ts) then reads the values from that array by a per-layout plan
 * (field → position), and knows the layout's unknown keys without enumerating the record again.
 *
 * Same values, same order, same verdicts: a layout is only a copy of what `for…in` over the
 * (never mutated) decoded value gives. Records of the same shape share one keys array (compared
 * key by key, interned strings), so plans are made once per shape. Kept by value object in a
 * WeakMap: released with the value (decode.ts releases it once coerced).
 */

/** From this many top-level keys on a record is walked through its layout (V8's dictionary-mode threshold for JSON.parse objects). */
export const WIDE_KEYS = 128

export interface Layout {
  /** The record's own keys in `for…in` order; the same array for every record of that shape. */
  keys: readonly string[]
  /** `values[j]` is the record's value at `keys[j]`. */
  values: unknown[]
}

const layouts = new WeakMap<object, Layout>()
/** False until a layout is kept: a process that sees no wide record pays no WeakMap lookup. */
let kept = false

/** A shape of records: their keys in enumeration order, and what the guard checks of the names (once per shape, not per record). */
export interface Shape {
  keys: readonly string[]
  /** The longest key's length. */
  longest: number
  /** Every key well-formed UTF-16 (no lone surrogate). */
  wellFormed: boolean
}

/** Recent shapes, most recent first. */
const shapes: Shape[] = []
const MAX_SHAPES = 8

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed()

/** The shape of `keys` (Object.keys of a record): an earlier record's, when it had the same keys in the same order. */
export function shapeOf(keys: readonly string[]): Shape {
  for (let s = 0; s < shapes.length; s++) {
    const shape = shapes[s]!
    if (sameKeys(shape.keys, keys)) return shape
  }
  const shape = { keys, longest: keys.reduce((m, k) => Math.max(m, k.length), 0), wellFormed: keys.every(isWellFormed) }
  shapes.unshift(shape)
  if (shapes.length > MAX_SHAPES) shapes.pop()
  return shape
}

export function keepLayout(record: object, keys: readonly string[], values: unknown[]): void {
  kept = true
  layouts.set(record, { keys, values })
}

export const layoutOf = (record: object): Layout | undefined => (kept ? layouts.get(record) : undefined)

/** Per struct field, where its value is in a layout (-1: absent); and the positions of the keys the struct does not know, in order. */
export interface LayoutPlan {
  at: Int32Array
  unknown: Int32Array
}

export function layoutPlan(names: readonly string[], known: ReadonlySet<string>, keys: readonly string[]): LayoutPlan {
  const position = new Map<string, number>()
  keys.forEach((k, j) => position.set(k, j))
  const unknown: number[] = []
  keys.forEach((k, j) => {
    if (!known.has(k)) unknown.push(j)
  })
  return { at: Int32Array.from(names, (name) => position.get(name) ?? -1), unknown: Int32Array.from(unknown) }
}
