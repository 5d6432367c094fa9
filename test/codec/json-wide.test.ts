/**
 * Wide records of a known shape (lib/codec/json-wide.ts) decode to exactly what JSON.parse gives
 * — same keys in the same order, same values — or, for a text that is not valid JSON, to the
 * same failure.
 */
import * as fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseJsonObject, parseJsonObjectFast } from '../../lib/codec/json.js'
import { parseWideObject as parseWide } from '../../lib/codec/json-wide.js'

/** The wide path's value alone (undefined when it does not take the text). */
const parseWideObject = (text: string): Record<string, unknown> | undefined => parseWide(text)?.value

const utf8 = (s: string) => new TextEncoder().encode(s)

/** A record of `n` keys `k000`…, values from `value(i)`. */
const record = (n: number, value: (i: number) => unknown): Record<string, unknown> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${String(i).padStart(3, '0')}`, value(i)]))

/** What JSON.parse gives for `text` (its value and key order), or parseJsonObject's failure. */
function reference(text: string): unknown {
  let value: Record<string, unknown>
  try {
    value = JSON.parse(text) as Record<string, unknown>
  } catch {
    return parseJsonObject(utf8(text))
  }
  return { ok: true, value, keys: Object.keys(value) }
}

/** The fast path's answer in reference's form; the layout it hands out with a wide value is that value's keys and values in `for…in` order. */
function fast(text: string): unknown {
  const got = parseJsonObjectFast(utf8(text))
  if (!got.ok) return got
  if ('values' in got) {
    expect(got.keys).toStrictEqual(Object.keys(got.value))
    expect(got.values).toStrictEqual(Object.values(got.value))
  }
  return { ok: true, value: got.value, keys: Object.keys(got.value) }
}

/** The fast path gives what the reference does: JSON.parse's value and key order, or the same failure. */
const expectSame = (text: string): void => expect(fast(text)).toStrictEqual(reference(text))

/** Teach the module the 200-key shape (a first record), then a second one compiles it. */
const shape = record(200, (i) => i)
expectSame(JSON.stringify(shape))
expectSame(JSON.stringify(shape))

describe('wide JSON records of a known shape', () => {
  it('come with their keys (one array per shape) and values in order', () => {
    const a = parseJsonObjectFast(utf8(JSON.stringify(record(200, (i) => i))))
    const b = parseJsonObjectFast(utf8(JSON.stringify(record(200, (i) => `s${i}`))))
    if (!('values' in a) || !('values' in b)) throw new Error('a known 200-key shape is decoded with its layout')
    expect(a.keys).toBe(b.keys)
    expect(b.values).toStrictEqual(Array.from({ length: 200 }, (_, i) => `s${i}`))
    expect('values' in parseJsonObjectFast(utf8(JSON.stringify(record(100, (i) => i))))).toBe(false)
  })

  it('are JSON.parse values once the shape was seen', () => {
    const text = JSON.stringify(record(200, (i) => (i % 3 === 0 ? `v${i}` : i % 3 === 1 ? i / 7 : i % 2 === 0)))
    expect(parseWideObject(text)).toStrictEqual(JSON.parse(text))
    expectSame(text)
  })

  it('are JSON.parse values for shapes parsed in three or more pieces', () => {
    for (const n of [129, 250, 401]) {
      // Keys of their own (`w…`): a shape is tried only for texts that start with its first key.
      const text = JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [`w${n}-${i}`, i % 2 === 0 ? { i, s: `,"w${n}-${i + 1}":` } : i])))
      expectSame(text)
      const got = parseWideObject(text)
      expect(got, `${n} keys`).toStrictEqual(JSON.parse(text))
      expect(Object.keys(got!)).toStrictEqual(Object.keys(JSON.parse(text)))
    }
  })

  it('give the same value as JSON.parse for any values, nested or escaped (property)', () => {
    const value = fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.constantFrom('a,"k001":1', '\\"', '}', '{"k001":2}', '"', 'é ∑ 😀', '\u2028', -0, 1e308, 5e-324, 2 ** 64),
      fc.record({ k001: fc.integer(), x: fc.string() }),
    )
    let taken = 0
    fc.assert(
      fc.property(fc.array(value, { minLength: 200, maxLength: 200 }), (values) => {
        const text = JSON.stringify(record(200, (i) => values[i]))
        if (parseWideObject(text) !== undefined) taken++
        expectSame(text)
      }),
      { numRuns: 150 },
    )
    // The scanner, not its fallback, decoded them.
    expect(taken).toBe(150)
  })

  it('fall back to JSON.parse (same value or same failure) for any other text of the shape', () => {
    const base = JSON.stringify(shape)
    const texts = [
      base.replace('"k001":1', '"k001" : 1'), // whitespace
      `  ${base}\n`,
      base.replace('"k005":5', '"k005":5,"k005":6'), // duplicate key
      base.replace('}', ',"k000":9}'), // duplicate of the first key at the end
      base.replace('"k007":7', '"k007":[1,"k008":2]'), // the next key inside a nested value: invalid
      base.replace('"k007":7', '"k007":{"k008":2}'), // the next key inside a nested value: valid
      base.replace('"k009":9', '"k009":"x,"k010":'), // an unescaped quote
      base.replace('"k011":11', '"k011":01'), // not a JSON number
      base.replace('"k011":11', '"k011":tru'),
      base.replace('"k011":11', '"k011":1e400'),
      base.replace('"k012":12', '"k012":"a\\"b\\\\"'),
      base.replace('"k013":13', '"k013":[1,2}'), // mismatched brackets
      base.replace('"k013":13', '"k013":"\\u00e9"'),
      base.replace('"k014":14,', ''), // a missing key
      base.replace('"k099":99', '"k099":{"k100":1}'), // the key a piece starts at, first inside a nested value: valid
      base.replace('"k099":99', '"k099":[{"a":1,"k100":2}]'),
      base.replace('"k099":99', '"k099":"a,"k100":'), // … after an unescaped quote
      base.replace(',"k100":100', ', "k100":100'), // whitespace where a piece starts
      base.replace(',"k100":100', ',"k100":100,"k100":101'), // a piece's first key twice
      base.replace('"k014":14', '"k\\u0031014":14'), // an escaped key
      base.slice(0, -1), // truncated
      `${base}x`,
      base.replace('"k199":199}', '"k199":199,}'),
      base.replace('"k199":199', '"k199":'),
    ]
    for (const text of texts) expectSame(text)
    expect(parseJsonObjectFast(utf8(texts[16]!)).ok).toBe(false)
  })

  it('keep JSON.parse for keys an object literal would treat otherwise (__proto__, array indices, escapes)', () => {
    for (const odd of ['__proto__', '7', 'a"b', 'tab\t']) {
      const withOdd = `${JSON.stringify(record(150, (i) => i)).slice(0, -1)},${JSON.stringify(odd)}:1}`
      expectSame(withOdd)
      expectSame(withOdd)
      expect(parseWideObject(withOdd)).toBeUndefined()
    }
  })

  it('leave narrow records and records in a new key order to JSON.parse', () => {
    expectSame('{"k000":1,"b":2}')
    const reordered = Object.fromEntries(Object.entries(shape).reverse())
    expect(parseWideObject(JSON.stringify(reordered))).toBeUndefined()
    expectSame(JSON.stringify(reordered))
    // Its keys are a shape now: the next record in that order takes the scanner.
    expect(parseWideObject(JSON.stringify(reordered))).toStrictEqual(reordered)
  })

  it('stop trying shapes for a while when wide records rarely share one, and then try again', () => {
    const known = JSON.stringify(shape)
    expectSame(known)
    expect(parseWideObject(known)).toBeDefined()
    // 16 wide records, each of a new shape (a different key missing): JSON.parse each time.
    for (let m = 0; m < 16; m++) expectSame(JSON.stringify(record(200, (i) => (i === 100 + m ? undefined : i))))
    expect(parseWideObject(known)).toBeUndefined()
    expectSame(known)
    for (let r = 0; r < 1100; r++) parseWideObject(known)
    // Tried again: the shape (evicted by the new ones) is learnt anew from one record.
    expectSame(known)
    expect(parseWideObject(known)).toStrictEqual(JSON.parse(known))
  })
})
