import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { parquetMetadata } from 'hyparquet'
import { describe, expect, it } from 'vitest'
import type { Schema } from '../../../lib/schema/types.js'
import { columnSizes, compileCoercer, encodeParquet, footerLayout, type FooterLayout, splitOffsets } from '../../../lib/writer/columnar/index.js'
import { fixturesDir } from '../../helpers/fixtures.js'

const ab = (b: Uint8Array) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer

function parquetFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) parquetFiles(path, out)
    else if (name.endsWith('.parquet') || name.endsWith('.parq')) out.push(path)
  }
  return out
}

/** hyparquet's whole FileMetaData cut to the facts footerLayout reads, numbers for BigInts. */
function fromHyparquet(file: Uint8Array): FooterLayout {
  const meta = parquetMetadata(ab(file))
  const num = (v: bigint | number | undefined) => (v === undefined ? undefined : Number(v))
  return {
    schema: meta.schema.map((e) => ({ ...(e.num_children !== undefined && { num_children: e.num_children }), ...(e.field_id !== undefined && { field_id: e.field_id }) })),
    row_groups: meta.row_groups.map((rg) => ({
      ...(rg.file_offset !== undefined && { file_offset: num(rg.file_offset) }),
      columns: rg.columns.map((c) => {
        const m = c.meta_data
        if (!m) return {}
        return { meta_data: { total_compressed_size: num(m.total_compressed_size)!, data_page_offset: num(m.data_page_offset)!, ...(m.dictionary_page_offset !== undefined && { dictionary_page_offset: num(m.dictionary_page_offset) }) } }
      }),
    })),
  }
}

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'name', required: false, type: 'string' },
    { id: 3, name: 'tags', required: false, type: { type: 'list', 'element-id': 6, element: 'string', 'element-required': false } },
    { id: 4, name: 'at', required: false, type: { type: 'struct', fields: [{ id: 7, name: 'x', required: false, type: 'double' }] } },
    { id: 5, name: 'u', required: false, type: 'uuid' },
  ],
}

describe('footerLayout: the footer facts Iceberg metrics need, read without decoding the whole footer', () => {
  const files = parquetFiles(fixturesDir('iceberg'))

  it('reads what hyparquet reads from every Parquet file other engines wrote (Spark, Trino, PyIceberg, DuckDB, …)', () => {
    expect(files.length).toBeGreaterThan(100)
    let groups = 0
    for (const path of files) {
      const file = readFileSync(path)
      const mine = footerLayout(file)
      expect(mine, path).toEqual(fromHyparquet(file))
      expect(columnSizes(mine), path).toEqual(columnSizes(parquetMetadata(ab(file))))
      expect(splitOffsets(mine), path).toEqual(splitOffsets(parquetMetadata(ab(file))))
      groups += mine.row_groups.length
    }
    expect(groups).toBeGreaterThan(150)
  })

  it("reads Floe's own files: several row groups, dictionary pages, nested columns, uuid-tagged footers", async () => {
    const coerce = compileCoercer(schema, { table: 't' })
    const rows = Array.from({ length: 300 }, (_, i) => coerce({ id: i, name: `n${i % 3}`, tags: i % 2 ? null : ['a', `t${i}`], at: { x: i / 3 }, u: '123e4567-e89b-12d3-a456-426614174000' }).row)
    const { bytes, metrics } = await encodeParquet(schema, rows, { rowGroupSize: 128 })
    const layout = footerLayout(bytes)
    expect(layout).toEqual(fromHyparquet(bytes))
    expect(layout.row_groups).toHaveLength(3)
    expect(layout.row_groups.some((rg) => rg.columns.some((c) => c.meta_data?.dictionary_page_offset !== undefined))).toBe(true)
    expect(metrics.columnSizes).toEqual(columnSizes(parquetMetadata(ab(bytes))))
    expect(metrics.splitOffsets).toEqual(splitOffsets(parquetMetadata(ab(bytes))))
  })

  it('refuses what is not a Parquet file, or a footer cut short, naming what it found', () => {
    expect(() => footerLayout(new TextEncoder().encode('not parquet at all'))).toThrow(/no PAR1 at its end \(18 bytes\)/)
    const file = readFileSync(files[0]!)
    const cut = new Uint8Array(file.length)
    cut.set(file)
    cut.fill(0xff, file.length - 8 - 40, file.length - 8) // the footer's last 40 bytes: varints that never end
    expect(() => footerLayout(cut)).toThrow(/Parquet footer/)
    const long = Uint8Array.from(file)
    new DataView(long.buffer).setUint32(long.length - 8, long.length, true)
    expect(() => footerLayout(long)).toThrow(`Parquet footer of ${long.length} bytes in a file of ${long.length}`)
  })
})
