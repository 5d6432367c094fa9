/**
 * scan-bounds.ts against the plain definition: the first row holding the least (greatest) valid
 * value, int64 compared as bigints, strings as their UTF-8 bytes — for values that take the fast
 * comparisons (ids within ±2^53, prefixes that differ) and the ones that do not (any int64,
 * shared prefixes, values shorter than 4 bytes, zero bytes, multi-byte characters, nulls).
 */
import * as fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { longBounds, stringBounds } from '../../../lib/writer/columnar/scan-bounds.js'
import { Bits } from '../../../lib/writer/columnar/scan-leaves.js'

/** The first valid row holding the least and the greatest value by `cmp`, or -1. */
function naive<T>(values: (T | null)[], cmp: (a: T, b: T) => number): [number, number] {
  let min = -1
  let max = -1
  values.forEach((v, i) => {
    if (v === null) return
    if (min < 0 || cmp(v, values[min]!) < 0) min = i
    if (max < 0 || cmp(v, values[max]!) > 0) max = i
  })
  return [min, max]
}

function validity(values: unknown[]): Bits | undefined {
  if (values.every((v) => v !== null)) return undefined
  const bits = new Bits()
  values.forEach((v, i) => bits.set(i, v !== null))
  return bits
}

const INT64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })
const ID = fc.bigInt({ min: -(2n ** 53n) + 1n, max: 2n ** 53n - 1n })
const long = fc.oneof(ID, ID, INT64, fc.constantFrom(0n, -1n, 2n ** 53n, -(2n ** 53n), 2n ** 31n, -(2n ** 31n), 2n ** 60n, 2n ** 60n + 1n, -(2n ** 60n), -(2n ** 60n) - 1n))

describe('scanner bounds', () => {
  it('longs: the rows of the least and greatest int64, fast for safe integers and exact for any', () => {
    fc.assert(
      fc.property(fc.array(fc.option(long, { freq: 6 }), { maxLength: 40 }), (values) => {
        const words = new Int32Array(2 * values.length + 2)
        const view = new BigInt64Array(words.buffer)
        values.forEach((v, i) => (view[i] = v ?? 0n))
        expect(longBounds(words, values.length, validity(values))).toEqual(naive(values, (a, b) => (a < b ? -1 : a > b ? 1 : 0)))
      }),
      { numRuns: 3000 },
    )
  })

  it('strings: the rows of the least and greatest UTF-8 bytes, whatever their prefixes', () => {
    const text = fc.oneof(
      fc.string({ unit: fc.constantFrom('a', 'b', '\u0000', '\u00ff', 'é', '𝄞', 'z'), maxLength: 6 }),
      fc.string({ unit: 'grapheme', maxLength: 8 }),
      fc.constantFrom('', 'a', 'ab', 'abc', 'abcd', 'abcde', 'abc\u0000', 'ab\u0000', 's-1', 's-12', 's-123'),
    )
    fc.assert(
      fc.property(fc.array(fc.option(text, { freq: 6 }), { maxLength: 40 }), (values) => {
        const encoded = values.map((v) => Buffer.from(v ?? '', 'utf8'))
        const offsets = new Int32Array(values.length + 1)
        encoded.forEach((b, i) => (offsets[i + 1] = offsets[i]! + b.length))
        const bytes = new Uint8Array(offsets[values.length]! + 8)
        encoded.forEach((b, i) => bytes.set(b, offsets[i]!))
        const buffers = values.map((v, i) => (v === null ? null : encoded[i]!))
        expect(stringBounds(bytes, offsets, values.length, validity(values))).toEqual(naive(buffers, Buffer.compare))
      }),
      { numRuns: 3000 },
    )
  })
})
