/**
 * Wide JSON objects without dictionary mode (issue 20). JSON.parse builds an object of ≥ 128
 * keys in V8's dictionary mode: 3× slower to parse than two objects of 100 keys, and every key
 * enumeration and read afterwards is a hash lookup (measured: a 200-key record 52 µs, its values
 * as an array 9 µs). A record whose text has the same top-level keys in the same order as an
 * earlier wide record (a "shape") is cut before every hundredth key or so — at the shape's
 * `,"key":`, found natively — into objects of fewer than 128 keys, each parsed by JSON.parse
 * itself (fast properties), and their values gathered by an object literal compiled once per
 * shape: one hidden class with fast properties.
 *
 * Same value as JSON.parse(text): each piece (`{` + the text between two cuts + `}`) parsing as
 * one JSON object means the cut was at the top level, outside any string or nested value, so
 * the text is that object's members joined by those commas — a valid object whose members are
 * the pieces', in order; each piece must have exactly the shape's keys for its span, in order (a
 * shape has no duplicate, escaped, array-index or `__proto__` key), so no key repeats. Anything
 * else — another key, whitespace at a cut, a cut found inside a nested value, a malformed text —
 * returns undefined and the caller takes JSON.parse.
 *
 * The values are gathered first, in key order, by reads compiled per shape (each piece of a
 * shape has one hidden class, so every read is monomorphic), and handed out with the keys: what
 * `for…in` over the object gives, which the writer's guard and coercer would otherwise read
 * back from the object by name, 200 keyed reads per record.
 */
/** Keys from which JSON.parse's object is in dictionary mode (V8's threshold). */
const WIDE = 128
/** Most keys per piece: under WIDE, so JSON.parse keeps each piece's properties fast. */
const PIECE = 100
/** Shapes kept, most recent first. */
const MAX_SHAPES = 8

interface Shape {
  keys: string[]
  /** `"key"` per key, as the text writes it (JSON.stringify of a key with nothing to escape). */
  quoted: string[]
  /** Where each piece but the first starts: its first key's index… */
  starts: number[]
  /** …and the `,"key":` that precedes it in the text (the cut). */
  cuts: string[]
  /** The values in key order from the pieces, and the object literal of the shape's keys from them: compiled when a second record has the shape. */
  compiled: { gather: (pieces: Record<string, unknown>[]) => unknown[]; make: (values: unknown[]) => Record<string, unknown> } | undefined
}

/** A wide record's value (JSON.parse's, with fast properties) and its keys and values in enumeration order (`keys` is the shape's: one array for every record of it). */
export interface WideObject {
  ok: true
  value: Record<string, unknown>
  keys: readonly string[]
  values: unknown[]
}

const shapes: Shape[] = []

/**
 * Wide records in a row that JSON.parse decoded (no known shape fitted), and records left to
 * JSON.parse alone after too many: a producer whose records rarely share a shape (sparse
 * fields, more shapes than kept) would pay a failed scan and a new shape per record (measured:
 * 2× JSON.parse's cost with 16 shapes in turn), so after MAX_MISSES the shapes are not tried
 * for PAUSE records, then tried again.
 */
let misses = 0
let paused = 0
const MAX_MISSES = 16
const PAUSE = 1024

/** JSON.parse of one piece when it is an object with exactly the shape's keys `from`…`to` in order, else undefined. */
function piece(text: string, shape: Shape, from: number, to: number): Record<string, unknown> | undefined {
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined
  const keys = Object.keys(v)
  if (keys.length !== to - from) return undefined
  for (let k = 0; k < keys.length; k++) if (keys[k] !== shape.keys[from + k]) return undefined
  return v as Record<string, unknown>
}

/** The pieces of `s` for `shape` (each JSON.parse's object of its span of keys), or undefined. */
function pieces(s: string, shape: Shape): Record<string, unknown>[] | undefined {
  const { cuts, starts } = shape
  const out = new Array<Record<string, unknown>>(cuts.length + 1)
  let at = 0
  let from = 0
  for (let p = 0; p < cuts.length; p++) {
    const cut = s.indexOf(cuts[p]!, at)
    if (cut < 0) return undefined
    const text = p === 0 ? `${s.slice(0, cut)}}` : `{${s.slice(at, cut)}}`
    const v = piece(text, shape, from, starts[p]!)
    if (v === undefined) return undefined
    out[p] = v
    at = cut + 1
    from = starts[p]!
  }
  const last = piece(`{${s.slice(at)}`, shape, from, shape.keys.length)
  if (last === undefined) return undefined
  out[cuts.length] = last
  return out
}

/** JSON.parse(s) for a text of a known wide shape (fast properties), with its layout; undefined when it is not one (then JSON.parse). */
export function parseWideObject(s: string): WideObject | undefined {
  if (paused > 0) {
    paused--
    return undefined
  }
  if (shapes.length === 0) return undefined
  // Only a shape whose first key starts the text is tried.
  const n = shapes.findIndex((shape) => s.startsWith(shape.quoted[0]!, 1))
  if (n < 0) return undefined
  const shape = shapes[n]!
  const parts = pieces(s, shape)
  if (parts === undefined) return undefined
  if (n > 0) shapes.unshift(...shapes.splice(n, 1))
  misses = 0
  const { gather, make } = (shape.compiled ??= compile(shape))
  const values = gather(parts)
  return { ok: true, value: make(values), keys: shape.keys, values }
}

/**
 * `p => [p0["k0"], …]`: the values in key order from the pieces; `v => ({ "k0": v[0], … })`: the
 * shape's object from them, one hidden class.
 */
function compile(shape: Shape): NonNullable<Shape['compiled']> {
  const bounds = [...shape.starts, shape.keys.length]
  let p = 0
  const reads = shape.quoted.map((q, i) => {
    while (i >= bounds[p]!) p++
    return `p${p}[${q}]`
  })
  const locals = bounds.map((_, i) => `p${i} = p[${i}]`).join(', ')
  const members = shape.quoted.map((q, i) => `${q}: v[${i}]`)
  // oxlint-disable-next-line no-new-func -- the source is JSON.stringify-quoted keys and indices
  const gather = new Function('p', `const ${locals}; return [${reads.join(', ')}]`) as NonNullable<Shape['compiled']>['gather']
  // oxlint-disable-next-line no-new-func -- the same
  const make = new Function('v', `return { ${members.join(', ')} }`) as NonNullable<Shape['compiled']>['make']
  return { gather, make }
}

/**
 * After JSON.parse gave `v` for `s` (parseWideObject did not): its keys become a shape when it
 * is wide and every key is plain. The shape's reads and object literal are compiled when a second record
 * has it, so a producer sending every record in a new key order compiles nothing.
 */
export function noteWideObject(s: string, v: Record<string, unknown>): void {
  if (s.length < WIDE * 6 || paused > 0) return
  const keys = Object.keys(v)
  if (keys.length < WIDE) return
  if (++misses >= MAX_MISSES) {
    misses = 0
    paused = PAUSE
    return
  }
  const quoted = keys.map((k) => JSON.stringify(k))
  // A key JSON.stringify escapes could be written otherwise in the text; an array index enumerates first; `__proto__` in a literal is the prototype.
  if (quoted.some((q, i) => q.length !== keys[i]!.length + 2) || keys.some((k) => k === '__proto__' || /^(?:0|[1-9]\d*)$/.test(k))) return
  // Pieces of equal size under PIECE keys: 200 keys → 2 × 100, 250 → 3 × 84.
  const size = Math.ceil(keys.length / Math.ceil(keys.length / PIECE))
  const starts = Array.from({ length: Math.ceil(keys.length / size) - 1 }, (_, p) => (p + 1) * size)
  shapes.unshift({ keys, quoted, starts, cuts: starts.map((i) => `,${quoted[i]}:`), compiled: undefined })
  if (shapes.length > MAX_SHAPES) shapes.pop()
}
