import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { IcebergError } from '../../lib/errors.js'
import {
  findCurrentMetadataPath,
  metadataVersion,
  newMetadataPath,
  readTableMetadata,
  writeTableMetadata,
  writeVersionHint,
} from '../../lib/iceberg/metadata-io.js'
import { newTableMetadata } from '../../lib/iceberg/metadata.js'
import { ICEBERG, localIO } from './fixture-tables.js'

const duck = `${ICEBERG}/duckdb-iceberg/data/persistent`

describe('finding the current metadata file', () => {
  it('follows an integer version hint to vN.metadata.json', async () => {
    const dir = `${ICEBERG}/icebird/test/files/hyperparam-iceberg/java/bunnies`
    expect(await findCurrentMetadataPath(localIO, dir)).toBe(`${dir}/metadata/v5.metadata.json`)
  })

  it('follows a hint that holds a file stem (DuckDB)', async () => {
    expect(await findCurrentMetadataPath(localIO, `${duck}/is_null_is_not_null`)).toBe(
      `${duck}/is_null_is_not_null/metadata/00001-43ceeb9a-cd0d-4556-b1e2-513b5bf88ff8.metadata.json`,
    )
    expect(await findCurrentMetadataPath(localIO, `${duck}/big_query_error`)).toBe(`${duck}/big_query_error/metadata/v1749025517.metadata.json`)
  })

  it('follows an integer hint to a gzip vN.gz.metadata.json and reads it', async () => {
    const path = await findCurrentMetadataPath(localIO, `${duck}/iceberg/lineitem_iceberg_gz`)
    expect(path).toBe(`${duck}/iceberg/lineitem_iceberg_gz/metadata/v2.gz.metadata.json`)
    const md = await readTableMetadata(localIO, path)
    expect(md['format-version']).toBe(1)
    expect(md.properties['write.metadata.compression-codec']).toBe('gzip')
  })

  it('without a hint picks the highest NNNNN-<uuid> version', async () => {
    const dir = `${ICEBERG}/iceberg-cxx/tests/tables/dangling_deletes`
    expect(await findCurrentMetadataPath(localIO, dir)).toMatch(/\/metadata\/00011-[^/]+\.metadata\.json$/)
  })

  it('without a hint takes a lone hand-named file (vfinal.metadata.json)', async () => {
    const dir = `${duck}/equality_delete_cross_partition/warehouse/ns/t`
    expect(await findCurrentMetadataPath(localIO, dir)).toBe(`${dir}/metadata/vfinal.metadata.json`)
  })

  it('fails clearly when there is no metadata', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'floe-nometa-'))
    await expect(findCurrentMetadataPath(localIO, empty)).rejects.toThrow(IcebergError)
    await expect(findCurrentMetadataPath(localIO, empty)).rejects.toThrow(/no table metadata under .*\/metadata\//)
  })

  it('reads zstd metadata when a decoder is installed, or says what is missing', async () => {
    const path = `${ICEBERG}/apache-iceberg-go/table/testdata/TableMetadataV2Valid.zstd.metadata.json`
    const outcome = await readTableMetadata(localIO, path).then(
      (md) => `parsed v${md['format-version']}`,
      (err: Error) => err.message,
    )
    expect(['parsed v2', `${path}: zstd-compressed table metadata needs the 'fzstd' package, which is not installed`]).toContain(outcome)
  })
})

describe('metadata file names and writes', () => {
  it('numbers new files one above the previous version', () => {
    const md = newTableMetadata({ location: 's3://b/db/t', schema: { type: 'struct', 'schema-id': 0, fields: [] } })
    expect(newMetadataPath(md)).toMatch(/^s3:\/\/b\/db\/t\/metadata\/00000-[0-9a-f-]{36}\.metadata\.json$/)
    expect(newMetadataPath(md, 's3://b/db/t/metadata/00041-x.metadata.json')).toMatch(/\/00042-[0-9a-f-]{36}\.metadata\.json$/)
    expect(newMetadataPath(md, 's3://b/db/t/metadata/v7.metadata.json')).toMatch(/\/00008-/)
    const custom = { ...md, properties: { 'write.metadata.path': 's3://other/meta/' } }
    expect(newMetadataPath(custom)).toMatch(/^s3:\/\/other\/meta\/00000-/)
    const gzip = { ...md, properties: { 'write.metadata.compression-codec': 'gzip' } }
    expect(newMetadataPath(gzip, 's3://b/db/t/metadata/v2.gz.metadata.json')).toMatch(/\/00003-[0-9a-f-]{36}\.gz\.metadata\.json$/)
    expect(metadataVersion('x/v3.gz.metadata.json')).toBe(3)
    expect(metadataVersion('x/00012-1c9a.gz.metadata.json')).toBe(12)
    expect(metadataVersion('x/vfinal.metadata.json')).toBeUndefined()
  })

  it('writes plain or gzip JSON and a version hint the finder follows', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'floe-meta-'))
    const md = newTableMetadata({ location: dir, schema: { type: 'struct', 'schema-id': 0, fields: [] } })
    const plain = `${dir}/metadata/00000-a.metadata.json`
    await writeTableMetadata(localIO, plain, md)
    expect(JSON.parse(readFileSync(plain, 'utf8'))['table-uuid']).toBe(md['table-uuid'])
    const gz = `${dir}/metadata/v1.gz.metadata.json`
    await writeTableMetadata(localIO, gz, md)
    expect(JSON.parse(gunzipSync(readFileSync(gz)).toString())['format-version']).toBe(2)
    await writeVersionHint(localIO, md, gz)
    expect(readFileSync(`${dir}/metadata/version-hint.text`, 'utf8')).toBe('1')
    expect(await findCurrentMetadataPath(localIO, dir)).toBe(gz)
  })

  it('keeps version-hint.text an integer with a vN.metadata.json beside it, as Hadoop-catalog readers need', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'floe-meta-'))
    const md = newTableMetadata({ location: dir, schema: { type: 'struct', 'schema-id': 0, fields: [] } })
    // A Hadoop-style table (v1, v2) that Floe then commits to with catalog-style names.
    await writeTableMetadata(localIO, `${dir}/metadata/v2.metadata.json`, { ...md, 'last-updated-ms': 1 })
    const floe = `${dir}/metadata/00003-6f1d.metadata.json`
    await writeTableMetadata(localIO, floe, md)
    await writeVersionHint(localIO, md, floe)
    expect(readFileSync(`${dir}/metadata/version-hint.text`, 'utf8')).toBe('3')
    expect(JSON.parse(readFileSync(`${dir}/metadata/v3.metadata.json`, 'utf8'))).toEqual(JSON.parse(readFileSync(floe, 'utf8')))
    expect(await findCurrentMetadataPath(localIO, dir)).toBe(`${dir}/metadata/v3.metadata.json`)
    // A hand-named file has no number: its stem is the hint (DuckDB's iceberg_scan reads that).
    const odd = `${dir}/metadata/final.metadata.json`
    await writeTableMetadata(localIO, odd, md)
    await writeVersionHint(localIO, md, odd)
    expect(readFileSync(`${dir}/metadata/version-hint.text`, 'utf8')).toBe('final')
    expect(await findCurrentMetadataPath(localIO, dir)).toBe(odd)
  })

  it('reads a metadata file named by its own path (inspect on a file)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'floe-meta-'))
    cpSync(`${ICEBERG}/apache-iceberg/core/src/test/resources/TableMetadataV2Valid.json`, `${dir}/x.metadata.json`)
    writeFileSync(`${dir}/ignored.txt`, 'x')
    expect(await findCurrentMetadataPath(localIO, `${dir}/x.metadata.json`)).toBe(`${dir}/x.metadata.json`)
  })
})
