/**
 * needsLiterals (lib/codec/json.ts): where it says a record's literals need not be read, inference
 * from JSON.parse's value types every field as inference from the literals does (`1.0` a double,
 * `1` a long) — so a table created or evolved from records that skip parseJsonLiterals gets the
 * same schema.
 */
import * as fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { needsLiterals, parseJsonLiterals, parseJsonObject } from '../../lib/codec/json.js'
import { inferSchema } from '../../lib/schema/infer.js'

const utf8 = (s: string) => new TextEncoder().encode(s)

/** Number literals as producers write them: integers, points, trailing zeros, exponents, signs, long runs. */
const literal = fc.oneof(
  fc.integer({ min: -1e6, max: 1e6 }).map(String),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
  fc.tuple(fc.integer({ min: -999, max: 999 }), fc.stringMatching(/^[0-9]{1,4}$/)).map(([a, b]) => `${a}.${b}`),
  fc.tuple(fc.integer({ min: -99, max: 99 }), fc.constantFrom('e3', 'E-2', 'e+1', '.5e2', '.0e0')).map(([a, e]) => `${a}${e}`),
  fc.constantFrom('-0', '-0.0', '0.000', '1.0', '12345678901234567', '0.1000000000000000055511151231257827'),
)
const text = fc.stringMatching(/^[a-z0-9 .e\\"-]{0,12}$/).map((s) => JSON.stringify(s))
const leaf = fc.oneof(literal, text, fc.constantFrom('true', 'false', 'null'))
const value: fc.Arbitrary<string> = fc.letrec<{ v: string }>((tie) => ({
  v: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, fc.array(tie('v'), { maxLength: 3 }).map((a) => `[${a.join(',')}]`), fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('v'), { maxKeys: 3 }).map(obj)),
})).v
function obj(d: Record<string, string>): string {
  return `{${Object.entries(d).map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`
}
const record = fc.dictionary(fc.constantFrom('x', 'y', 'z', 'n'), value, { maxKeys: 4 }).map(obj)

describe('needsLiterals', () => {
  it('is true for integral numbers written with a point or exponent and for long integer literals, false otherwise', () => {
    expect(needsLiterals(utf8('{"a":1.0}'))).toBe(true)
    expect(needsLiterals(utf8('{"a":-0.0}'))).toBe(true)
    expect(needsLiterals(utf8('{"a":1e3}'))).toBe(true)
    expect(needsLiterals(utf8('{"a":12345678901234567}'))).toBe(true)
    expect(needsLiterals(utf8('{"a":1,"b":1.5,"c":-33.583333333333336,"d":"1.0","e":true}'))).toBe(false)
    expect(needsLiterals(utf8('{"a":"x\\"1.0","b":[1,2.25]}'))).toBe(false)
  })

  it('where it is false, inference from the decoded values equals inference from the literals (any batch of records)', () => {
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 6 }), (texts) => {
        const bytes = texts.map(utf8)
        const decoded = bytes.map((b) => {
          const r = parseJsonObject(b)
          if (!r.ok) throw new Error(r.reason)
          return r.value
        })
        const literals = bytes.map((b, i) => parseJsonLiterals(b) ?? decoded[i]!)
        const mixed = bytes.map((b, i) => (needsLiterals(b) ? literals[i]! : decoded[i]!))
        const fromLiterals = tryInfer(literals)
        expect(tryInfer(mixed)).toEqual(fromLiterals)
      }),
      { numRuns: 500 },
    )
  })
})

function tryInfer(values: Record<string, unknown>[]): unknown {
  try {
    return inferSchema(values)
  } catch (err) {
    return (err as Error).message
  }
}
