/**
 * The byte level of the JSON scanner (scan.ts): whitespace, literals, keys, numbers and string
 * contents read from a record's UTF-8 bytes. Every reader returns the index after what it read,
 * or -1 when the bytes are not what it accepts — the scanner then gives the record up, and the
 * present path (strict UTF-8, JSON.parse, the coercer) decides what it is. So a reader may
 * refuse more than JSON does, never accept what JSON.parse refuses or read a value differently.
 *
 * A record is scanned as its own view (a subarray ending where the record ends): a read past
 * its end is `undefined`, which no comparison here accepts.
 */
import { decimal, longDecimal } from './scan-decimal.js'

export const QUOTE = 0x22
export const COMMA = 0x2c
export const COLON = 0x3a
const BACKSLASH = 0x5c
const MINUS = 0x2d
const PLUS = 0x2b
const DOT = 0x2e
const ZERO = 0x30
const NINE = 0x39

/** The index of the first byte at or after `i` that is not JSON whitespace. */
export function skip(b: Uint8Array, i: number): number {
  for (;;) {
    const c = b[i]
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i
    i++
  }
}

/** A `null` literal at `i`: the index after it, or -1. */
export const nullAt = (b: Uint8Array, i: number): number => (b[i] === 0x6e && b[i + 1] === 0x75 && b[i + 2] === 0x6c && b[i + 3] === 0x6c ? i + 4 : -1)

/** The value of the last number `numberAt` read (a typed array: a double stored in an object's field is a new heap number each time, scan-decimal.ts). */
export const numValue = new Float64Array(1)

/** The last number `numberAt` read: what it was (its value in `numValue`). */
export const num = {
  /** An integer literal (no fraction, no exponent) of at most 15 digits: `numValue[0]` is that integer, exactly. */
  exactInteger: false,
  /** An integer literal of any length (its text is `start` up to the index numberAt returned). */
  integerLiteral: false,
  start: 0,
}

const POW10 = Array.from({ length: 16 }, (_, k) => 10 ** k)
/** A digit's code (a read past the record's end is undefined, which no comparison takes). */
export const isDigit = (c: number): boolean => c >= ZERO && c <= NINE
/** Longest date or timestamp text the scanner reads (the schema's parsers accept up to 35: `2024-01-01T00:00:00.000000000+00:00`). */
export const TEMPORAL_TEXT = 40

/**
 * A JSON number at `i` (RFC 8259's grammar: no leading zeros, no `+`, digits after a dot and in
 * an exponent). Up to 15 digits without an exponent its value is the integer of its digits
 * divided by a power of ten, both exact doubles, so the quotient is the correctly rounded value
 * (Clinger's fast path); up to 19 digits it is scan-decimal.ts's exact quotient where that is
 * sure; otherwise it is `Number()` of its text — what JSON.parse gives every time.
 */
export function numberAt(b: Uint8Array, i: number): number {
  const start = i
  const neg = b[i] === MINUS
  if (neg) i++
  let c = b[i]!
  let m = 0
  let digits = 0
  if (c === ZERO) {
    digits = 1
    c = b[++i]!
    if (isDigit(c)) return -1
  } else {
    if (!isDigit(c) || c === ZERO) return -1
    while (isDigit(c)) {
      m = m * 10 + (c - ZERO)
      digits++
      c = b[++i]!
    }
  }
  let frac = 0
  if (c === DOT) {
    c = b[++i]!
    if (!isDigit(c)) return -1
    while (isDigit(c)) {
      m = m * 10 + (c - ZERO)
      frac++
      c = b[++i]!
    }
  }
  let exponent = false
  if (c === 0x65 || c === 0x45) {
    exponent = true
    c = b[++i]!
    if (c === MINUS || c === PLUS) c = b[++i]!
    if (!isDigit(c)) return -1
    while (isDigit(c)) c = b[++i]!
  }
  num.start = start
  num.integerLiteral = frac === 0 && !exponent
  if (exponent || digits + frac > 15) {
    if (!exponent && digits + frac <= 19 && frac <= 22 && longDecimal(b, neg ? start + 1 : start, i, digits + frac, frac)) numValue[0] = neg ? -decimal[0]! : decimal[0]!
    else numValue[0] = Number(Buffer.prototype.latin1Slice.call(b, start, i))
    num.exactInteger = false
    return i
  }
  const v = frac === 0 ? m : m / POW10[frac]!
  numValue[0] = neg ? -v : v
  num.exactInteger = frac === 0
  return i
}

/**
 * The length of the well-formed UTF-8 sequence at `i` whose lead byte is ≥ 0x80, or 0 when it is
 * not one (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF) — what a strict
 * decoder (TextDecoder with `fatal`) refuses.
 */
export function utf8Length(b: Uint8Array, i: number): number {
  const c = b[i]!
  const c1 = b[i + 1]
  if (c1 === undefined) return 0
  if (c >= 0xc2 && c <= 0xdf) return cont(c1) ? 2 : 0
  if (c >= 0xe0 && c <= 0xef) {
    const ok = c === 0xe0 ? c1 >= 0xa0 && c1 <= 0xbf : c === 0xed ? c1 >= 0x80 && c1 <= 0x9f : cont(c1)
    return ok && cont(b[i + 2]) ? 3 : 0
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const ok = c === 0xf0 ? c1 >= 0x90 && c1 <= 0xbf : c === 0xf4 ? c1 >= 0x80 && c1 <= 0x8f : cont(c1)
    return ok && cont(b[i + 2]) && cont(b[i + 3]) ? 4 : 0
  }
  return 0
}

/** A UTF-8 continuation byte (module level: a closure per call costs a keepNames wrapper in the bundle). */
const cont = (x: number | undefined): boolean => x !== undefined && (x & 0xc0) === 0x80

/** Where the last `escapeAt` wrote up to. */
export const written = { pos: 0 }

const SIMPLE_ESCAPES: Record<number, number> = { 0x22: 0x22, 0x5c: 0x5c, 0x2f: 0x2f, 0x62: 0x08, 0x66: 0x0c, 0x6e: 0x0a, 0x72: 0x0d, 0x74: 0x09 }

function hex4(b: Uint8Array, i: number): number {
  let v = 0
  for (let k = 0; k < 4; k++) {
    const c = b[i + k]
    const d = c === undefined ? -1 : c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1
    if (d < 0) return -1
    v = v * 16 + d
  }
  return v
}

/**
 * The escape after a backslash at `i`, written as UTF-8 to `out` at `pos` (`written.pos` after
 * it): the index after the escape, or -1. A lone surrogate is refused: it has no UTF-8 form, so
 * it could not be stored exactly (the guard dead-letters it).
 */
export function escapeAt(b: Uint8Array, i: number, out: Uint8Array, pos: number): number {
  const simple = SIMPLE_ESCAPES[b[i]!]
  if (simple !== undefined) {
    out[pos] = simple
    written.pos = pos + 1
    return i + 1
  }
  if (b[i] !== 0x75) return -1
  let cp = hex4(b, i + 1)
  i += 5
  if (cp < 0 || (cp >= 0xdc00 && cp <= 0xdfff)) return -1
  if (cp >= 0xd800 && cp <= 0xdbff) {
    if (b[i] !== BACKSLASH || b[i + 1] !== 0x75) return -1
    const low = hex4(b, i + 2)
    if (low < 0xdc00 || low > 0xdfff) return -1
    cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00)
    i += 6
  }
  if (cp < 0x80) out[pos++] = cp
  else if (cp < 0x800) {
    out[pos++] = 0xc0 | (cp >> 6)
    out[pos++] = 0x80 | (cp & 0x3f)
  } else if (cp < 0x10000) {
    out[pos++] = 0xe0 | (cp >> 12)
    out[pos++] = 0x80 | ((cp >> 6) & 0x3f)
    out[pos++] = 0x80 | (cp & 0x3f)
  } else {
    out[pos++] = 0xf0 | (cp >> 18)
    out[pos++] = 0x80 | ((cp >> 12) & 0x3f)
    out[pos++] = 0x80 | ((cp >> 6) & 0x3f)
    out[pos++] = 0x80 | (cp & 0x3f)
  }
  written.pos = pos
  return i
}

/**
 * The closing quote of a string token of printable ASCII without escapes that starts at `i`
 * (after its opening quote) and is at most `max` characters long; -1 for anything else.
 */
export function asciiEnd(b: Uint8Array, i: number, max: number): number {
  const start = i
  for (;;) {
    const c = b[i]
    if (c === QUOTE) return i
    if (c === undefined || c < 0x20 || c >= 0x80 || c === BACKSLASH || i - start >= max) return -1
    i++
  }
}

/** The string token of `asciiEnd` as text (a date for lib/schema's parser), with `written.pos` the index after its closing quote; undefined for anything else. */
export function asciiToken(b: Uint8Array, i: number, max: number): string | undefined {
  const end = asciiEnd(b, i, max)
  if (end < 0) return undefined
  written.pos = end + 1
  return Buffer.prototype.latin1Slice.call(b, i, end) as string
}
