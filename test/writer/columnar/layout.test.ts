/**
 * One walk for wide records (columnar/layout.ts): the guard keeps the keys and values it read,
 * and the coercer reads a record from that layout instead of the dictionary-mode object. Over
 * random wide and hostile records parsed from JSON text (deep nesting, long names, lone
 * surrogates in names and values, 1e400, integers beyond 2^53, unknown fields, `__proto__`
 * keys, keys in any order, missing required fields), the guard's verdict and the coercion (row,
 * key order, size, unknown fields, error or exact-decoding request) are what the separate walks
 * give: the same record on a prototype that is not Object.prototype takes the old path (the
 * guard's `for…in`, the coercer's reads by name and key count), as any non-plain record does.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import * as fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { DEFAULT_LIMITS, type RecordLimits } from '../../../lib/config.js'
import type { Schema } from '../../../lib/schema/types.js'
import { compileCoercer, type Coercer } from '../../../lib/writer/columnar/coerce.js'
import { keepLayout, layoutOf, WIDE_KEYS } from '../../../lib/writer/columnar/layout.js'
import { parseJsonObjectFast } from '../../../lib/codec/json.js'
import { inspectRecord } from '../../../lib/writer/guard.js'

const TYPES = ['long', 'double', 'string', 'boolean', 'decimal(9, 2)', 'timestamptz'] as const
const names = Array.from({ length: 200 }, (_, c) => `c${String(c).padStart(3, '0')}`)
const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    ...names.map((name, c) => ({ id: c + 1, name, required: c % 37 === 5, type: TYPES[c % TYPES.length]! })),
    { id: 201, name: 'inner', required: false, type: { type: 'struct', fields: [{ id: 202, name: 'a', required: false, type: 'long' }] } },
    { id: 203, name: 'tags', required: false, type: { type: 'list', 'element-id': 204, element: 'string', 'element-required': false } },
    { id: 205, name: 'n', required: false, type: 'int', 'write-default': 7 },
  ],
}

/** Literals written into the JSON text as they are (JSON.parse turns 1e400 into Infinity and rounds 2^53 + 1). */
const raw = fc.constantFrom('1e400', '-1e400', '9007199254740993', '-12345678901234567890', '1.0', '12.50')
const scalar = fc.oneof(
  fc.integer().map((n) => JSON.stringify(n)),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
  fc.string({ maxLength: 6 }).map((s) => JSON.stringify(s)),
  fc.constantFrom('"bad \\ud800"', '"ok \\ud83d\\ude00"', '"2024-05-01T10:00:00Z"', 'true', 'false', 'null', '"12.5"'),
  raw,
)
/** Nested values: objects (a `__proto__` key too), arrays, and depth beyond the limit. */
const nested: fc.Arbitrary<string> = fc.letrec<{ v: string }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('v'), { maxLength: 3 }).map((xs) => `[${xs.join(',')}]`),
    fc.dictionary(fc.constantFrom('a', 'b', '__proto__'), tie('v'), { maxKeys: 3 }).map((d) => `{${Object.entries(d).map(([k, x]) => `${JSON.stringify(k)}:${x}`).join(',')}}`),
  ),
})).v
const deep = fc.integer({ min: 1, max: 8 }).map((d) => '{"x":'.repeat(d) + '1' + '}'.repeat(d))
const value = fc.oneof({ weight: 8, arbitrary: scalar }, { weight: 2, arbitrary: nested }, { weight: 1, arbitrary: deep })
/** Names: the schema's, unknown ones, long ones, a lone surrogate, `__proto__`, other case. */
const extraName = fc.oneof(
  fc.constantFrom('inner', 'tags', 'n', '__proto__', 'C001', 'extra', '\\udc00x', 'x'.repeat(30), 'constructor'),
  fc.string({ minLength: 1, maxLength: 8 }).map((s) => JSON.stringify(s).slice(1, -1)),
)

/** A record's JSON text: most schema fields (in schema order or shuffled), values of every kind, and extra names. */
const recordText = fc
  .record({
    keep: fc.array(fc.boolean(), { minLength: 200, maxLength: 200 }),
    shuffle: fc.boolean(),
    seed: fc.integer(),
    values: fc.array(value, { minLength: 200, maxLength: 200 }),
    plain: fc.integer({ min: 0, max: 99 }).map((p) => p / 100),
    overrides: fc.array(fc.tuple(fc.nat(199), value), { maxLength: 2 }),
    extras: fc.array(fc.tuple(extraName, value), { maxLength: 4 }),
  })
  .map(({ keep, shuffle, seed, values, plain, overrides, extras }) => {
    // Most records plain but for a few values (the common case, and one bad value), some hostile throughout.
    const mostlyPlain = plain > 0.3
    const chosen = mostlyPlain ? values.map((_, c) => plainValue(c)) : values
    if (mostlyPlain) for (const [c, v] of overrides) chosen[c] = v
    const entries = names.map((name, c) => [name, chosen[c]!] as const).filter((_, c) => keep[c] || plain > 0.45)
    if (shuffle) entries.sort((a, b) => hash(a[0], seed) - hash(b[0], seed))
    const all = [...entries.map(([k, v]) => [JSON.stringify(k), v] as const), ...(mostlyPlain && plain < 0.8 ? [] : extras).map(([k, v]) => [`"${k}"`, v] as const)]
    return `{${all.map(([k, v]) => `${k}:${v}`).join(',')}}`
  })

const plainValue = (c: number): string => ['17', '2.5', '"v1"', 'true', '"3.25"', '"2024-05-01T10:00:00Z"'][c % 6]!
const hash = (s: string, seed: number): number => [...s].reduce((h, ch) => (Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0), seed >>> 0)

/** The same own keys and values on a prototype that is not Object.prototype: the guard's and the coercer's separate walks. */
function separate(r: Record<string, unknown>): Record<string, unknown> {
  const copy = Object.create(Object.create(null)) as Record<string, unknown>
  for (const k of Object.keys(r)) Object.defineProperty(copy, k, { value: r[k], enumerable: true, writable: true, configurable: true })
  return copy
}

function coerced(coerce: Coercer, r: unknown, fast: boolean): unknown {
  try {
    const c = coerce(r, fast)
    return { row: c.row, keys: JSON.stringify(Object.keys(c.row)), unknown: c.unknown, bytes: c.bytes }
  } catch (err) {
    return { error: (err as Error).message ?? String(err) }
  }
}

const limits: RecordLimits = { ...DEFAULT_LIMITS, maxDepth: 5, maxColumns: 400, maxFieldNameLength: 20 }

describe('one walk for wide records', () => {
  const exact = compileCoercer(schema, { table: 't', longsAsNumbers: true })
  const ci = compileCoercer(schema, { table: 't', caseInsensitive: true, longsAsNumbers: true })

  it('judges and coerces a record as the separate guard and coercer do', () => {
    let laid = 0
    fc.assert(
      fc.property(recordText, fc.boolean(), fc.boolean(), (text, fast, caseInsensitive) => {
        const r = JSON.parse(text) as Record<string, unknown>
        const old = separate(r)
        const verdict = inspectRecord(r, limits, { declared: false })
        expect(verdict).toEqual(inspectRecord(old, limits, { declared: false }))
        const layout = layoutOf(r)
        expect(layoutOf(old)).toBeUndefined()
        // Kept only for wide records the guard passed: a copy of their own keys and values, in order.
        if (layout !== undefined) laid++
        expect(layout === undefined || (Object.keys(r).length >= WIDE_KEYS && verdict.problem === undefined)).toBe(true)
        expect(layout?.keys ?? Object.keys(r)).toEqual(Object.keys(r))
        expect(layout?.values ?? Object.values(r)).toEqual(Object.values(r))
        const coerce = caseInsensitive ? ci : exact
        expect(coerced(coerce, r, fast)).toEqual(coerced(coerce, old, fast))
      }),
      { numRuns: 400 },
    )
    // The property above says nothing if no record took the new path.
    expect(laid).toBeGreaterThan(80)
  })

  it('judges and coerces a record decoded with its layout (lib/codec json-wide.ts) as the separate walks do', () => {
    let decodedLaid = 0
    fc.assert(
      fc.property(recordText, fc.boolean(), (text, fast) => {
        const bytes = new TextEncoder().encode(text)
        // The first record of a shape teaches it; the second is decoded with its keys and values.
        parseJsonObjectFast(bytes)
        const d = parseJsonObjectFast(bytes)
        if (!d.ok) return
        // As lib/writer/decode.ts does with a decoded layout.
        if ('values' in d) {
          keepLayout(d.value, d.keys, d.values)
          decodedLaid++
        }
        const old = separate(JSON.parse(text) as Record<string, unknown>)
        expect(inspectRecord(d.value, limits, { declared: false })).toEqual(inspectRecord(old, limits, { declared: false }))
        expect(coerced(exact, d.value, fast)).toEqual(coerced(exact, old, fast))
      }),
      { numRuns: 300 },
    )
    expect(decodedLaid).toBeGreaterThan(60)
  })

  it('keeps the layout of a plain wide record, with its keys shared by records of the same shape', () => {
    const text = (i: number) => JSON.stringify(Object.fromEntries(names.map((n, c) => [n, c % 6 === 2 ? `v${i}` : c % 6 === 3 ? i % 2 === 0 : i])))
    const a = JSON.parse(text(1)) as Record<string, unknown>
    const b = JSON.parse(text(2)) as Record<string, unknown>
    expect(inspectRecord(a, DEFAULT_LIMITS, { declared: false })).toEqual({ unsafeInteger: false })
    expect(inspectRecord(b, DEFAULT_LIMITS, { declared: false })).toEqual({ unsafeInteger: false })
    expect(layoutOf(a)!.values).toEqual(Object.values(a))
    expect(layoutOf(a)!.keys).toBe(layoutOf(b)!.keys)
    const unknown = JSON.parse(text(3).replace('{', '{"zz":1,')) as Record<string, unknown>
    expect(inspectRecord(unknown, DEFAULT_LIMITS, { declared: false }).problem).toBeUndefined()
    expect(exact(unknown).unknown).toEqual([{ path: 'zz', value: 1 }])
  })

  it('a producer whose every record has a new key order leaves nothing behind: plans go with their shapes', () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const run = (from: number, count: number) => {
      for (let i = from; i < from + count; i++) {
        // Every record a shape of its own: the schema's keys rotated, plus a key no record shares.
        const keys = [...names.slice(i % 200), ...names.slice(0, i % 200), `u${i}`]
        const valueOf = (k: string) => (k.startsWith('u') ? 200 : Number(k.slice(1)) % 6 === 2 ? 'v' : Number(k.slice(1)) % 6 === 3 ? true : Number(k.slice(1)))
        const r = JSON.parse(JSON.stringify(Object.fromEntries(keys.map((k) => [k, valueOf(k)])))) as Record<string, unknown>
        expect(inspectRecord(r, DEFAULT_LIMITS, { declared: false }).problem).toBeUndefined()
        expect(exact(r).unknown).toEqual([{ path: `u${i}`, value: 200 }])
      }
    }
    run(0, 500) // warm: the coercer's code and the shape cache exist
    gc()
    const before = process.memoryUsage().heapUsed
    run(500, 5_000)
    gc()
    // A plan and a keys array kept per shape would be ~2.5 KB each: 12 MB for these 5,000 shapes.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(4 * 2 ** 20)
  })
})
