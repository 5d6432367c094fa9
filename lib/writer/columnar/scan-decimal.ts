/**
 * The double nearest a decimal literal of 16 to 19 digits without an exponent, read from its bytes
 * (scan-bytes.ts numberAt), or nothing where this cannot be sure and `Number()` of the text must say.
 * What `JSON.stringify` writes for most doubles has 16 or 17 digits (`i / 3` is 0.3333333333333333),
 * past Clinger's fast path (≤ 15 digits): making a string of each and parsing it was 4–10 % of the
 * scanner's profile (narrow and wide bench records).
 *
 * The digits are an integer W < 10^19, held exactly as a double-double (two doubles whose sum is
 * W: Dekker's exact product and Knuth's exact sum). W / 10^f (f ≤ 22: 10^f is an exact double)
 * is then q1 + q2: q1 the rounded quotient, q2 the exact remainder over 10^f, so q1 + q2 is the
 * quotient within ~2^-100 of it. Rounding q1 + q2 gives the correctly rounded quotient unless
 * it lies that close to a midpoint between two doubles; then, and for a power of two (whose lower
 * neighbour is nearer) or a value outside the normal range, it gives no answer.
 */

/** 10^k, exact as doubles up to 10^22. */
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k)
const SPLIT = 134217729 // 2^27 + 1
/** How close to a midpoint (as a share of half an ulp) is too close to trust: the error bound is ~2^-49 of it. */
const MARGIN = 2 ** -30

const f64 = new Float64Array(1)
const u32 = new Uint32Array(f64.buffer)
// Little-endian: the high word (sign, exponent, top of the mantissa) is u32[1].
const HI = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0
const LO = 1 - HI

/** The rounding error of `a * b` (a * b = fl(a * b) + the result, exactly): Dekker's product. */
function productError(a: number, b: number, p: number): number {
  let c = SPLIT * a
  const ah = c - (c - a)
  const al = a - ah
  c = SPLIT * b
  const bh = c - (c - b)
  const bl = b - bh
  return ah * bh - p + ah * bl + al * bh + al * bl
}

/** Half an ulp of a normal, non-power-of-two double `s`, or 0 where the midpoint test does not apply. */
function halfUlp(s: number): number {
  f64[0] = s
  const hi = u32[HI]!
  const exp = (hi >>> 20) & 0x7ff
  if (exp <= 54 || exp >= 0x7ff || ((hi & 0xfffff) === 0 && u32[LO] === 0)) return 0
  u32[HI] = (exp - 53) << 20
  u32[LO] = 0
  return f64[0]
}

/**
 * Where longDecimal puts its double: a typed array, since a returned double and a double stored
 * in an object's field are each a new heap number (measured on Node 20: 16 bytes per value, issue 20).
 */
export const decimal = new Float64Array(1)

/**
 * The double of the unsigned decimal in `b[from, end)` (digits and at most one dot: `digits`
 * of them in all, 16 to 19, `frac` after the dot, at most 22) into `decimal[0]`: true, or false
 * when it cannot be sure.
 */
export function longDecimal(b: Uint8Array, from: number, end: number, digits: number, frac: number): boolean {
  // W = hi * 10^9 + lo: the first digits - 9 digits, then the last 9.
  let hi = 0
  let lo = 0
  let k = 0
  const split = digits - 9
  for (let i = from; i < end; i++) {
    const c = b[i]!
    if (c === 0x2e) continue
    if (k++ < split) hi = hi * 10 + (c - 0x30)
    else lo = lo * 10 + (c - 0x30)
  }
  // W as wh + wl exactly: hi * 10^9 = ph + pl, then ph + lo = s + e, all exact.
  const ph = hi * 1e9
  const pl = productError(hi, 1e9, ph)
  const s = ph + lo
  const bv = s - ph
  const e = ph - (s - bv) + (lo - bv)
  const tail = e + pl // small integers: exact
  const wh = s + tail
  const wl = tail - (wh - s)
  const p10 = POW10[frac]!
  const q1 = wh / p10
  const pp = q1 * p10
  // W - q1 * 10^f: wh - pp is exact (they are within an ulp); the rest is far below q1's ulp.
  const r = wh - pp - productError(q1, p10, pp) + wl
  const q2 = r / p10
  const v = q1 + q2
  const t = q2 - (v - q1)
  const half = halfUlp(v)
  if (half === 0 || Math.abs(Math.abs(t) - half) <= half * MARGIN) return false
  decimal[0] = v
  return true
}
