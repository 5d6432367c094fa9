/**
 * Compaction's reader: a file written before a column was added reads that column as the field's
 * v3 `initial-default` (what every Iceberg reader returns for it), not as null — otherwise a
 * compacted file would change the column's values for every old row.
 */
import { describe, expect, it } from 'vitest'
import { CompactionUnsupportedError, openRows } from '../../lib/maintenance/read-rows.js'
import type { StructType } from '../../lib/schema/types.js'
import { encodeParquet } from '../../lib/writer/columnar/index.js'

const OLD: StructType = {
  type: 'struct',
  fields: [{ id: 1, name: 'id', required: true, type: 'long' }],
}

const inMemory = (bytes: Uint8Array) => ({
  byteLength: bytes.byteLength,
  slice: async (start: number, end?: number) => bytes.slice(start, end).buffer as ArrayBuffer,
})

async function oldFile() {
  const { bytes } = await encodeParquet(OLD, [{ id: 1n }, { id: 2n }])
  return inMemory(bytes)
}

describe('compaction reads columns a file lacks', () => {
  it('as the field initial-default, converted exactly, and null without one', async () => {
    const current: StructType = {
      ...OLD,
      fields: [
        ...OLD.fields,
        { id: 2, name: 'region', required: true, type: 'string', 'initial-default': 'eu-west-1', 'write-default': 'us-east-1' },
        { id: 3, name: 'weight', required: false, type: 'long', 'initial-default': 42 },
        { id: 4, name: 'day', required: false, type: 'date', 'initial-default': '2026-12-01' },
        { id: 5, name: 'note', required: false, type: 'string' },
      ],
    }
    const source = await openRows(await oldFile(), current, 'old.parquet')
    const rows = await source.read(0, 2)
    expect(rows.map((r) => r.id)).toEqual([1n, 2n])
    // initial-default, not write-default (that one is for records written from now on).
    expect(rows.map((r) => r.region)).toEqual(['eu-west-1', 'eu-west-1'])
    expect(rows.map((r) => r.day)).toEqual([20788, 20788])
    expect(rows.map((r) => r.note)).toEqual([null, null])
    expect(rows.map((r) => r.weight)).toEqual([42n, 42n])
  })

  it('a required column the file lacks, with no initial-default, is not compacted', async () => {
    const current: StructType = { ...OLD, fields: [...OLD.fields, { id: 2, name: 'region', required: true, type: 'string' }] }
    await expect(openRows(await oldFile(), current, 'old.parquet')).rejects.toThrow(CompactionUnsupportedError)
  })

  it('an initial-default that is not a value of its type is not compacted, and the error names the column', async () => {
    const current: StructType = { ...OLD, fields: [...OLD.fields, { id: 2, name: 'n', required: false, type: 'int', 'initial-default': 'seven' }] }
    await expect(openRows(await oldFile(), current, 'old.parquet')).rejects.toThrow(/column n: initial-default "seven"/)
  })
})
