/**
 * Wide JSON objects without dictionary mode (issue 20). JSON.parse builds an object of ≥ 128
 * keys in V8's dictionary mode: 3× slower to parse than two objects of 100 keys, and every key
 * enumeration and read afterwards is a hash lookup (measured: a 200-key record 52 µs, its values
 * as an array 9 µs). A record whose text has the same top-level keys in the same order as an
 * earlier wide record (a "shape"), written compactly (no whitespace between keys, as producers
 * write JSON), is parsed instead as the array of its values — the text between the keys, checked
 * here for JSON's structure and then parsed by JSON.parse itself — and built as an object literal
 * compiled once per shape: one hidden class with fast properties.
 *
 * Same value as JSON.parse(text): the same keys in the same order (the shape's, matched literally
 * in the text; a shape has no duplicate, escaped, array-index or `__proto__` key), each value
 * JSON.parse's parse of exactly its own text (a value is a string, a scalar of JSON's scalar
 * characters, or a bracket-balanced nested value, so the array's elements are exactly these; the
 * array must parse to as many elements as the shape has keys). Anything else — another key, an
 * escape in a key, a malformed text — returns undefined and the caller takes JSON.parse.
 */

/** Keys from which JSON.parse's object is in dictionary mode (V8's threshold). */
const WIDE = 128
/** Shapes kept, most recent first. */
const MAX_SHAPES = 8

interface Shape {
  /** `"key"` per key, as the text writes it (JSON.stringify of a key with nothing to escape). */
  quoted: string[]
  /** `,"key":` per key (the first unused): what precedes each value but the first in a compact text. */
  delimiters: string[]
  /** The object literal of the shape's keys, compiled when a second record has the shape. */
  build: ((values: unknown[]) => Record<string, unknown>) | undefined
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

const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

/** JSON's scalar characters: digits, `-+.`, `eE`, and the letters of true, false, null. */
const SCALAR = new Uint8Array(128)
for (const c of '0123456789-+.eEtrufalsn') SCALAR[c.charCodeAt(0)] = 1

/**
 * True when `part` is one whole JSON token or bracket-balanced value, so that joined with commas
 * into an array it is exactly one element (JSON.parse then checks it is a valid value): a string
 * with no unescaped quote but its last character, a scalar of JSON's scalar characters, or an
 * object or array whose brackets (outside strings) first balance at its last character.
 */
function whole(part: string): boolean {
  const n = part.length
  if (n === 0) return false
  const c = part.charCodeAt(0)
  if (c === 0x22) return part.indexOf('\\') < 0 ? part.indexOf('"', 1) === n - 1 : stringEnd(part, 0) === n
  if (c === 0x7b || c === 0x5b) return nestedEnd(part) === n
  for (let j = 0; j < n; j++) {
    const d = part.charCodeAt(j)
    if (d >= 128 || SCALAR[d] !== 1) return false
  }
  return true
}

/** Past the closing quote of the string opening at `i`, or -1. */
function stringEnd(s: string, i: number): number {
  for (let j = i + 1; j < s.length; j++) {
    const c = s.charCodeAt(j)
    if (c === 0x5c) j++
    else if (c === 0x22) return j + 1
  }
  return -1
}

/** Past the bracket where the depth of `s`'s opening bracket is back to 0 (strings skipped), or -1. */
function nestedEnd(s: string): number {
  let depth = 0
  for (let j = 0; j < s.length; j++) {
    const c = s.charCodeAt(j)
    if (c === 0x22) {
      j = stringEnd(s, j) - 1
      if (j < 0) return -1
    } else if (c === 0x7b || c === 0x5b) depth++
    else if ((c === 0x7d || c === 0x5d) && --depth === 0) return j + 1
  }
  return -1
}

/**
 * The value texts of a compact `s` whose keys are exactly `shape`'s, in order, or undefined:
 * each value runs to the next `,"key":` (found natively; it cannot occur inside a string, whose
 * quotes are escaped, and one inside a nested value leaves a part that is not whole).
 */
function valueTexts(s: string, shape: Shape): string[] | undefined {
  const { quoted } = shape
  const n = quoted.length
  const parts = new Array<string>(n)
  if (s.charCodeAt(0) !== 0x7b || !s.startsWith(quoted[0]!, 1) || s.charCodeAt(quoted[0]!.length + 1) !== 0x3a) return undefined
  let i = quoted[0]!.length + 2
  for (let k = 1; k < n; k++) {
    const next = shape.delimiters[k]!
    const at = s.indexOf(next, i)
    if (at < 0) return undefined
    const part = s.slice(i, at)
    if (!whole(part)) return undefined
    parts[k - 1] = part
    i = at + next.length
  }
  let close = s.length - 1
  while (close > i && isSpace(s.charCodeAt(close))) close--
  if (s.charCodeAt(close) !== 0x7d) return undefined
  const last = s.slice(i, close)
  if (!whole(last)) return undefined
  parts[n - 1] = last
  return parts
}

/** JSON.parse(s) for a text of a known wide shape (fast properties); undefined when it is not one (then JSON.parse). */
export function parseWideObject(s: string): Record<string, unknown> | undefined {
  if (paused > 0) {
    paused--
    return undefined
  }
  if (shapes.length === 0) return undefined
  // Only a shape whose first key starts the text is tried.
  const n = shapes.findIndex((shape) => s.startsWith(shape.quoted[0]!, 1))
  if (n < 0) return undefined
  const shape = shapes[n]!
  const parts = valueTexts(s, shape)
  if (parts === undefined) return undefined
  let values: unknown
  try {
    values = JSON.parse(`[${parts.join(',')}]`)
  } catch {
    return undefined
  }
  if (!Array.isArray(values) || values.length !== parts.length) return undefined
  if (n > 0) shapes.unshift(...shapes.splice(n, 1))
  misses = 0
  // oxlint-disable-next-line no-new-func -- the source is JSON.stringify-quoted keys and indices
  const build = (shape.build ??= new Function('v', `return { ${shape.quoted.map((q, i) => `${q}: v[${i}]`).join(', ')} }`) as NonNullable<Shape['build']>)
  return build(values)
}

/**
 * After JSON.parse gave `v` for `s` (parseWideObject did not): its keys become a shape when it
 * is wide and every key is plain. The shape's object literal is compiled when a second record
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
  shapes.unshift({ quoted, delimiters: quoted.map((q) => `,${q}:`), build: undefined })
  if (shapes.length > MAX_SHAPES) shapes.pop()
}
