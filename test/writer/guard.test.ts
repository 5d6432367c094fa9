import { describe, expect, it } from 'vitest'
import { DEFAULT_LIMITS } from '../../lib/config.js'
import { checkRecord, recordColumns } from '../../lib/writer/guard.js'
import { layoutOf, WIDE_KEYS } from '../../lib/writer/columnar/layout.js'

const check = (v: Record<string, unknown>, declared = false) => checkRecord(v, DEFAULT_LIMITS, { declared })

describe('checkRecord', () => {
  it('passes ordinary records, long arrays of one column and Avro maps with many keys', () => {
    expect(check({ a: 1, b: { c: 'x', d: [1, 2, 3] }, e: null })).toBeUndefined()
    expect(check({ v: Array.from({ length: 100_000 }, (_, i) => i) })).toBeUndefined()
    expect(check({ m: new Map(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, i])) })).toBeUndefined()
  })

  it('names the field, the limit and the value', () => {
    let deep: unknown = 1
    for (let i = 0; i < 40; i++) deep = { x: deep }
    expect(check({ deep })).toMatch(/^field 'deep\.x\.x.*' nests deeper than FLOE_MAX_DEPTH=32$/)
    expect(check(Object.fromEntries(Array.from({ length: 1_001 }, (_, i) => [`k${i}`, i])))).toMatch(/more than FLOE_MAX_COLUMNS=1000 columns/)
    expect(check({ list: Array.from({ length: 1_001 }, (_, i) => ({ [`k${i}`]: 1 })) })).toMatch(/more than FLOE_MAX_COLUMNS=1000 columns \(the first past the limit: 'list\[\d+\]\.k\d+'\)/)
    expect(check({ ['x'.repeat(256)]: 1 })).toMatch(/is 256 characters, more than FLOE_MAX_FIELD_NAME_LENGTH=255/)
    expect(check({ s: 'ok \ud83d\ude00', t: 'bad \ud800' })).toMatch(/^field 't' holds a string that is not valid Unicode/)
    expect(check({ ['\udc00']: 1 })).toMatch(/is not valid Unicode/)
  })

  it('refuses infinite numbers only where the format has no such value (JSON), not in Avro', () => {
    expect(check({ n: Infinity })).toMatch(/field 'n' is Infinity/)
    expect(check({ n: -Infinity }, true)).toBeUndefined()
  })

  it('judges a wide record found by walking it (not decoded with its layout) by its own columns, once', () => {
    // The walk meets WIDE_KEYS keys, then reads the record again as a layout: counted from the
    // record's start, 200 columns fit a limit of 200 and the record keeps the layout it was read as.
    const wide = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`c${i}`, i]))
    expect(WIDE_KEYS).toBeLessThan(200)
    expect(checkRecord(wide, { ...DEFAULT_LIMITS, maxColumns: 200 }, { declared: false })).toBeUndefined()
    expect(layoutOf(wide)?.keys).toEqual(Object.keys(wide))
    const wider = { ...wide, c200: 1 }
    expect(checkRecord(wider, { ...DEFAULT_LIMITS, maxColumns: 200 }, { declared: false })).toMatch(/more than FLOE_MAX_COLUMNS=200 columns/)
  })

  it('stops early: 100,000 empty objects are refused without walking them all', () => {
    expect(check(Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, {}])))).toMatch(/FLOE_MAX_COLUMNS/)
  })
})

describe('recordColumns', () => {
  it('lists leaf paths, list elements and map values once', () => {
    expect([...recordColumns({ a: 1, b: { c: [{ d: 1 }, { d: 2, e: null }] }, m: new Map([['x', 1]]) })].sort()).toEqual(['a', 'b.c.element.d', 'm.value'])
  })
})
