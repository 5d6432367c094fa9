import * as fc from 'fast-check'
import { isLosslessNumber } from 'lossless-json'
import { describe, expect, it } from 'vitest'
import { parseJsonObject } from '../../lib/codec/json.js'
import { compileCoercer } from '../../lib/writer/columnar/index.js'

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

  it('any finite double written by JSON.stringify decodes to the same double (an integer literal past 2^53: to its exact value)', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (d) => {
        const text = JSON.stringify(d)
        const v = parsed(`{"d": ${text}}`)
        expect(v.d).toBe(/^-?\d+$/.test(text) && !Number.isSafeInteger(d) ? BigInt(text) : d === 0 ? 0 : d)
      }),
      { numRuns: 2000 },
    )
  })

  it('integer literals past 2^53 are bigint even when they print back as a double (2^53 + 2, 1152921504606847000)', () => {
    const v = parsed('{"a": 9007199254740994, "b": 1152921504606847000, "c": -1152921504606847000, "d": 1152921504606846976, "e": 1e18, "f": 1.5e17}')
    expect(v).toEqual({ a: 9007199254740994n, b: 1152921504606847000n, c: -1152921504606847000n, d: 2n ** 60n, e: 1e18, f: 1.5e17 })
  })
})

describe('json integers past 2^53 into columns', () => {
  const coerce = compileCoercer(
    { type: 'struct', fields: [{ id: 1, name: 'l', required: false, type: 'long' }, { id: 2, name: 'd', required: false, type: 'double' }] },
    { table: 'db.events' },
  )
  const row = (json: string) => coerce(parsed(json)).row
  const refused = (json: string) => {
    try {
      coerce(parsed(json))
    } catch (err) {
      return (err as Error).message
    }
    throw new Error(`expected ${json} to be refused`)
  }

  it('a long column gets every such literal exactly, also those a double would round (the lossless path)', () => {
    for (const lit of ['9007199254740993', '9007199254740994', '1152921504606846976', '1152921504606847000', '-9223372036854775808', '9223372036854775807'])
      expect(row(`{"l": ${lit}}`).l, lit).toBe(BigInt(lit))
    expect(refused('{"l": 9223372036854775808}')).toBe("table db.events: field 'l' expected long, got bigint 9223372036854775808")
  })

  it('a double column takes a literal the double holds exactly or prints back as itself, and refuses one whose digits it would lose', () => {
    expect(row('{"d": 1152921504606846976}').d).toBe(2 ** 60) // 2^60, exact
    expect(row('{"d": 1152921504606847000}').d).toBe(2 ** 60) // what JSON.stringify(2 ** 60) writes
    expect(row('{"d": 9007199254740994}').d).toBe(2 ** 53 + 2)
    expect(refused('{"d": 9007199254740993}')).toBe("table db.events: field 'd' expected double (exactly), got bigint 9007199254740993")
    expect(refused('{"d": 1152921504606846977}')).toMatch(/field 'd' expected double \(exactly\), got bigint 1152921504606846977$/)
  })
})
