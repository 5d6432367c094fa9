/**
 * Dictionary encoding only where it pays: low-cardinality string columns keep it; ids, measures
 * and unique strings are written without (smaller and faster, docs/benchmarks.md).
 */
import { parquetMetadata, parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import { describe, expect, it } from 'vitest'
import type { Schema } from '../../../lib/schema/types.js'
import { compileCoercer, encodeParquet } from '../../../lib/writer/columnar/index.js'

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
})
