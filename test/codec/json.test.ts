import * as fc from 'fast-check'
import { isLosslessNumber } from 'lossless-json'
import { describe, expect, it } from 'vitest'
import { parseJsonObject } from '../../lib/codec/json.js'

const utf8 = (s: string) => new TextEncoder().encode(s)
const parsed = (s: string) => {
  const r = parseJsonObject(utf8(s))
  if (!r.ok) throw new Error(r.reason)
  return r.value
}

describe('json numbers', () => {
  it('a double printed in full (17 significant digits) is a plain number: it prints back as the same text', () => {
    const v = parsed('{"score": 33.583333333333336, "neg": -33.583333333333336, "big": 1.2345678901234568e+21}')
    expect(v.score).toBe(33.583333333333336)
    expect(v.neg).toBe(-33.583333333333336)
    expect(v.big).toBe(1.2345678901234568e21)
  })

  it('digits a double would lose keep their exact text, also beside numbers that fit', () => {
    const v = parsed('{"score": 33.583333333333336, "exact": 0.10000000000000001, "neg": -1234567890.123456789}')
    expect(v.score).toBe(33.583333333333336)
    expect(isLosslessNumber(v.exact) && (v.exact as { value: string }).value).toBe('0.10000000000000001')
    expect(isLosslessNumber(v.neg) && (v.neg as { value: string }).value).toBe('-1234567890.123456789')
  })

  it('integers past 2^53 are bigint; long digit runs inside strings stay strings', () => {
    const v = parsed('{"id": 12345678901234567890, "small": 1234567890123456, "s": "s-12345678901234567"}')
    expect(v.id).toBe(12345678901234567890n)
    expect(v.small).toBe(1234567890123456)
    expect(v.s).toBe('s-12345678901234567')
  })

  it('any finite double written by JSON.stringify decodes to the same double', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (d) => {
        const v = parsed(JSON.stringify({ d }))
        expect(v.d).toBe(d === 0 ? 0 : d)
      }),
      { numRuns: 2000 },
    )
  })
})
