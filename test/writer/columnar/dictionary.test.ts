/**
 * Dictionary encoding only where it pays: low-cardinality string columns keep it; ids, measures
 * and unique strings are written without (smaller and faster, docs/benchmarks.md).
 */
import { parquetMetadata, parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import * as fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Schema } from '../../../lib/schema/types.js'
import { compileArrowBuilder, compileCoercer, encodeParquet, parquetSettings } from '../../../lib/writer/columnar/index.js'
import { fewDistinct } from '../../../lib/writer/columnar/parquet.js'

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'country', required: false, type: 'string' },
    { id: 2, name: 'event_id', required: false, type: 'string' },
    { id: 3, name: 'amount', required: false, type: 'double' },
  ],
}

describe('Parquet dictionary encoding', () => {
  it('fewDistinct: fewer than half of the first 2,000 values distinct (it may stop early, never answer otherwise)', () => {
    const value = fc.oneof(fc.constantFrom('a', 'b', null, 1), fc.string({ maxLength: 2 }), fc.nat({ max: 50 }))
    fc.assert(
      fc.property(fc.array(value, { maxLength: 2100 }), (values) => {
        const sample = values.slice(0, 2000)
        expect(fewDistinct(values)).toBe(sample.length > 0 && new Set(sample).size / sample.length < 0.5)
      }),
      { numRuns: 500 },
    )
  })
  it('is kept for a low-cardinality string column and dropped for unique strings and numbers, with the same rows read back', async () => {
    const coerce = compileCoercer(schema, { table: 'db.t' })
    const records = Array.from({ length: 5_000 }, (_, i) => ({ country: ['DE', 'FR', 'US'][i % 3], event_id: `e-${i}-${(i * 7919) % 10007}`, amount: i * 1.25 }))
    const { bytes } = await encodeParquet(schema, records.map((r) => coerce(r).row), { compression: 'zstd' })
    const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
    const columns = parquetMetadata(file).row_groups[0]!.columns.map((c) => c.meta_data!)
    const dictionary = (name: string) => {
      const meta = columns.find((c) => c.path_in_schema.join('.') === name)!
      return meta.encodings.some((e) => e.includes('DICTIONARY')) || meta.dictionary_page_offset !== undefined
    }
    expect(dictionary('country')).toBe(true)
    expect(dictionary('event_id')).toBe(false)
    expect(dictionary('amount')).toBe(false)
    const rows = (await parquetReadObjects({ file, compressors })) as { country: string; event_id: string; amount: number }[]
    expect(rows).toEqual(records)
  })

  it('is chosen while the rows are split exactly as from the Arrow table: top-level strings only, a missing value as null', () => {
    const wide: Schema = {
      type: 'struct',
      'schema-id': 0,
      fields: [
        { id: 1, name: 'a', required: false, type: 'string' },
        { id: 2, name: 'b', required: false, type: 'string' },
        { id: 3, name: 'n', required: false, type: 'long' },
        { id: 4, name: 's', required: false, type: { type: 'struct', fields: [{ id: 5, name: 'c', required: false, type: 'string' }] } },
      ],
    }
    const build = compileArrowBuilder(wide, { dictionary: fewDistinct })
    // Pools of 1–40 values over 0–120 rows, or around and past the 2,000-row sample: ratios on both sides of the threshold, columns missing from most rows.
    const column = fc.tuple(fc.integer({ min: 1, max: 40 }), fc.double({ min: 0, max: 1, noNaN: true }))
    const rows = fc.tuple(fc.oneof(fc.integer({ min: 0, max: 120 }), fc.integer({ min: 1_990, max: 2_600 })), column, column, fc.integer({ min: 0, max: 2 ** 31 })).map(([n, [pa, ma], [pb, mb], seed]) =>
      Array.from({ length: n }, (_, i) => {
        const r = (i * 7919 + seed) % 1000
        const row: Record<string, unknown> = { n: i, s: { c: `c${r % 3}` } }
        if (r / 1000 >= ma) row.a = `a${r % pa}`
        if (r / 1000 >= mb) row.b = r % 5 === 0 ? null : `b${(r * 31) % pb}`
        return row
      }),
    )
    let chosen = 0
    fc.assert(
      fc.property(rows, (rs) => {
        const { table, dictionary } = build(rs)
        expect(dictionary).toEqual(parquetSettings(table).dictionary)
        expect(dictionary.every((name) => name === 'a' || name === 'b')).toBe(true)
        chosen += dictionary.length
      }),
      { numRuns: 200 },
    )
    expect(chosen).toBeGreaterThan(50)
  })
})
