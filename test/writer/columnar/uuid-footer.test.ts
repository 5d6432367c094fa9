import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { parquetMetadata, parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import { describe, expect, it } from 'vitest'
import type { Schema } from '../../../lib/schema/types.js'
import { compileCoercer, encodeParquet } from '../../../lib/writer/columnar/index.js'
import { decodeStruct, encodeStruct } from '../../../lib/writer/columnar/thrift-compact.js'
import { tagUuidColumns } from '../../../lib/writer/columnar/uuid-footer.js'
import { fixturesDir } from '../../helpers/fixtures.js'

const ab = (b: Uint8Array) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer

function parquetFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) parquetFiles(path, out)
    else if (name.endsWith('.parquet')) out.push(path)
  }
  return out
}

const footerOf = (file: Uint8Array) => {
  const len = new DataView(file.buffer, file.byteOffset + file.length - 8, 4).getUint32(0, true)
  return file.subarray(file.length - 8 - len, file.length - 8)
}

describe('Thrift compact protocol, generic and lossless', () => {
  const files = parquetFiles(fixturesDir('iceberg'))
  it('finds Parquet files other engines wrote', () => expect(files.length).toBeGreaterThan(20))
  it('decodes and re-encodes every fixture footer to the same bytes', () => {
    for (const path of files) {
      const footer = footerOf(readFileSync(path))
      const { struct, end } = decodeStruct(footer)
      expect(end, path).toBe(footer.length)
      expect(Buffer.from(encodeStruct(struct)).equals(Buffer.from(footer)), path).toBe(true)
    }
  })
})

describe('uuid columns carry Parquet\'s UUID logical type', () => {
  const schema: Schema = {
    type: 'struct',
    'schema-id': 0,
    fields: [
      { id: 1, name: 'id', required: true, type: 'uuid' },
      { id: 2, name: 'hash', required: false, type: 'fixed[16]' },
      { id: 3, name: 'nested', required: false, type: { type: 'struct', fields: [{ id: 4, name: 'ref', required: false, type: 'uuid' }] } },
    ],
  }
  const ids = ['123e4567-e89b-12d3-a456-426614174000', 'f81d4fae-7dec-11d0-a765-00a0c91e6bf6']

  it('tags top-level and nested uuid columns, not other fixed[16] columns, and readers decode them as uuids', async () => {
    const coerce = compileCoercer(schema, { table: 't' })
    const rows = ids.map((id) => coerce({ id, hash: Buffer.alloc(16, 1).toString('base64'), nested: { ref: id } }).row)
    const { bytes, recordCount } = await encodeParquet(schema, rows)
    expect(recordCount).toBe(2)
    const meta = parquetMetadata(ab(bytes))
    const logical = Object.fromEntries(meta.schema.map((e) => [e.name, e.logical_type?.type]))
    expect(logical).toMatchObject({ id: 'UUID', hash: undefined, ref: 'UUID' })
    expect(meta.schema.find((e) => e.name === 'id')).toMatchObject({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: 16, field_id: 1 })
    const read = (await parquetReadObjects({ file: ab(bytes), compressors })) as { id: string; nested: { ref: string } }[]
    expect(read.map((r) => [r.id, r.nested.ref])).toEqual(ids.map((id) => [id, id]))
  })

  it('leaves a file without uuid fields, or already tagged, byte for byte as it was', async () => {
    const { bytes } = await encodeParquet(schema, [compileCoercer(schema, { table: 't' })({ id: ids[0] }).row])
    expect(tagUuidColumns(bytes, new Set([1, 4]))).toBe(bytes)
    expect(tagUuidColumns(bytes, new Set())).toBe(bytes)
  })
})
