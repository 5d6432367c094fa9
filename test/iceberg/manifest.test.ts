import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { IcebergError } from '../../lib/errors.js'
import { readAvroFile } from '../../lib/iceberg/avro.js'
import { decodeManifest, encodeManifest } from '../../lib/iceberg/manifest.js'
import { decodeManifestList, encodeManifestList } from '../../lib/iceberg/manifest-list.js'
import type { ManifestFile, PartitionSpec } from '../../lib/iceberg/types.js'
import type { Schema } from '../../lib/schema/types.js'
import { ICEBERG, allFixtureFiles, rel } from './fixture-tables.js'
import { fieldsWithoutIds, plainDecode } from '../helpers/plain-avro.js'

const BROKEN_AVRO: Record<string, string> = {
  'iceberg-cxx/tests/metadata/broken1.avro': 'cannot decode Avro: truncated header',
  'iceberg-cxx/tests/metadata/broken2.avro': 'not an Avro container file',
  'iceberg-cxx/tests/metadata/empty.avro': 'empty file',
  'apache-iceberg-rust/crates/iceberg/testdata/manifests_lists/manifest-list-v3-encrypted.avro': 'encrypted',
}

const avroFiles = allFixtureFiles().filter((f) => f.endsWith('.avro'))
const kindOf = (schema: unknown): 'list' | 'manifest' | 'other' => {
  const names = ((schema as { fields?: { name: string }[] }).fields ?? []).map((f) => f.name)
  return names.includes('manifest_path') ? 'list' : names.includes('data_file') ? 'manifest' : 'other'
}

describe('every Avro file in the fixtures', () => {
  for (const file of avroFiles.filter((f) => BROKEN_AVRO[rel(f)] !== undefined)) {
    it(`rejects ${rel(file)} with a clear IcebergError`, () => {
      const bytes = readFileSync(file)
      expect(() => decodeManifestList(bytes, file)).toThrow(IcebergError)
      expect(() => decodeManifestList(bytes, file)).toThrow(BROKEN_AVRO[rel(file)]!)
    })
  }

  const good = avroFiles.filter((f) => BROKEN_AVRO[rel(f)] === undefined)
  it('finds manifest lists and manifests from every writer', () => {
    const kinds = good.map((f) => kindOf(readAvroFile(readFileSync(f), f).schema))
    expect(kinds.filter((k) => k === 'list').length).toBeGreaterThan(50)
    expect(kinds.filter((k) => k === 'manifest').length).toBeGreaterThan(50)
  })

  for (const file of good) {
    it(`decodes ${rel(file)} by field id`, () => {
      const bytes = readFileSync(file)
      const raw = readAvroFile(bytes, file)
      const kind = kindOf(raw.schema)
      const decoded = kind === 'list' ? decodeManifestList(bytes, file) : kind === 'manifest' ? decodeManifest(bytes, file).entries : raw.records
      expect(decoded).toHaveLength(raw.records.length)
      const paths = kind === 'list' ? (decoded as ManifestFile[]).map((m) => m.manifestPath) : kind === 'manifest' ? decodeManifest(bytes, file).entries.map((e) => e.dataFile.filePath) : []
      expect(paths.filter((p) => typeof p !== 'string' || p === '')).toEqual([])
    })
  }
})

describe('manifest lists from different writers', () => {
  const list = (p: string) => decodeManifestList(readFileSync(`${ICEBERG}/${p}`), p)

  it('reads the count fields before and after the Iceberg 1.5 rename alike', () => {
    const before = list('apache-iceberg-rust/crates/iceberg/testdata/manifests_lists/manifest-list-v2-1.avro')[0]!
    const after = list('apache-iceberg-rust/crates/iceberg/testdata/manifests_lists/manifest-list-v2-2.avro')[0]!
    expect(before.addedFilesCount).toBe(1)
    expect(after.addedFilesCount).toBe(1)
    expect(before.addedSnapshotId).toBe(6653143792592159268n)
    expect(after.addedRowsCount).toBe(1n)
  })

  it("reads DuckDB's v3 list without a format-version header: first_row_id and a delete manifest", () => {
    const [data, deletes] = list('apache-iceberg-go/testdata/duckdb_v3_manifest_list.avro')
    expect(data).toMatchObject({ content: 0, firstRowId: 0n, addedRowsCount: 100n, sequenceNumber: 1n })
    expect(deletes).toMatchObject({ content: 1, firstRowId: 100n, sequenceNumber: 2n })
  })

  it("reads iceberg-cxx's list that writes both the old and new count names", () => {
    const [m] = list('iceberg-cxx/tests/metadata/snap-2dfe8bdb-200b-1006-9bb5-0242ac110002.avro')
    expect(m).toMatchObject({ addedFilesCount: 6, addedRowsCount: 10000n, addedSnapshotId: 5231658854638766100n })
  })

  it("reads BigQuery's alphabetically ordered list", () => {
    const dir = 'duckdb-iceberg/data/persistent/big_query_error/metadata'
    const [m] = list(`${dir}/24f5f399-c7ec-488d-a9d3-f0aceb454be2-4830b289af0338e2-f-manifest-list-00000-of-00001.avro`)
    expect(m!.manifestPath).toMatch(/-f-00000-of-00001\.avro$/)
    expect(m!.addedFilesCount + m!.existingFilesCount).toBe(1)
  })

  it('keeps a snapshot id above 2^53 exact', () => {
    const p = 'icebird/test/files/snap-8656952484400131532-1-a85973e4-4009-4cba-875e-5278a2c6027d.avro'
    expect(list(p)[0]!.addedSnapshotId).toBe(8656952484400131532n)
  })
})

describe('written manifests and lists', () => {
  const schema: Schema = {
    type: 'struct',
    'schema-id': 3,
    fields: [
      { id: 1, name: 'id', required: true, type: 'long' },
      { id: 2, name: 'ts', required: false, type: 'timestamptz' },
      { id: 3, name: 'amount', required: false, type: 'decimal(12, 2)' },
      { id: 4, name: 'user-name', required: false, type: 'string' },
    ],
  }
  const spec: PartitionSpec = {
    'spec-id': 1,
    fields: [
      { 'source-id': 2, 'field-id': 1000, name: 'ts_day', transform: 'day' },
      { 'source-id': 3, 'field-id': 1001, name: 'amount', transform: 'identity' },
      { 'source-id': 4, 'field-id': 1002, name: 'user-name', transform: 'identity' },
      { 'source-id': 1, 'field-id': 1003, name: 'id_bucket', transform: 'bucket[16]' },
    ],
  }
  const file = {
    content: 0 as const,
    filePath: 's3://b/t/data/ts_day=2024-05-01/a.parquet',
    fileFormat: 'PARQUET' as const,
    specId: 1,
    partition: [19844, -12345n, 'zoë', 7],
    recordCount: 3,
    fileSizeInBytes: 1234,
    valueCounts: new Map([[1, 3]]),
    lowerBounds: new Map([[1, Uint8Array.of(1, 0, 0, 0, 0, 0, 0, 0)]]),
    splitOffsets: [4],
  }
  const big = 9_007_199_254_740_993n // 2^53 + 1

  it('a manifest decodes with plain avsc, carries field ids everywhere and Java header keys', async () => {
    const bytes = encodeManifest({ formatVersion: 2, spec, schema, content: 0 }, [
      { status: 1, snapshotId: big, sequenceNumber: null, fileSequenceNumber: null, dataFile: file },
    ])
    const plain = await plainDecode(bytes)
    expect(fieldsWithoutIds(plain.schema)).toEqual([])
    expect(plain.meta['avro.codec']).toBe('deflate')
    expect(plain.meta['format-version']).toBe('2')
    expect(plain.meta['partition-spec-id']).toBe('1')
    expect(plain.meta['schema-id']).toBe('3')
    expect(plain.meta.content).toBe('data')
    expect(JSON.parse(plain.meta['partition-spec']!)).toEqual(spec.fields)
    expect(JSON.parse(plain.meta.schema!)).toEqual(schema)
    const entry = plain.records[0]!
    const dataFile = entry.data_file as Record<string, unknown>
    expect(entry.snapshot_id).toBe(big.toString())
    expect(dataFile.file_path).toBe(file.filePath)
    expect(dataFile.record_count).toBe('3')
    const partition = dataFile.partition as Record<string, unknown>
    expect(partition.ts_day).toBe(19844)
    expect(partition.user_x2Dname).toBe('zoë') // Avro-safe name, as Java makes it
    expect(partition.id_bucket).toBe(7)
    // decimal(12, 2) is fixed[6]: -12345 as big-endian two's complement
    expect([...(partition.amount as Buffer)]).toEqual([0xff, 0xff, 0xff, 0xff, 0xcf, 0xc7])
  })

  it('a manifest reads back identically, with inheritance from its list entry', () => {
    const bytes = encodeManifest({ formatVersion: 2, spec, schema, content: 0 }, [
      { status: 1, snapshotId: big, sequenceNumber: null, fileSequenceNumber: null, dataFile: file },
    ])
    const manifest = { addedSnapshotId: big, sequenceNumber: 7n, partitionSpecId: 1 } as ManifestFile
    const [e] = decodeManifest(bytes, 'm', { manifest, spec }).entries
    expect(e).toEqual({ status: 1, snapshotId: big, sequenceNumber: 7n, fileSequenceNumber: 7n, dataFile: file })
  })

  it('a manifest list decodes with plain avsc and carries field ids', async () => {
    const m: ManifestFile = {
      manifestPath: 's3://b/t/metadata/x-m0.avro',
      manifestLength: 100,
      partitionSpecId: 1,
      content: 0,
      sequenceNumber: 7n,
      minSequenceNumber: 7n,
      addedSnapshotId: big,
      addedFilesCount: 1,
      existingFilesCount: 0,
      deletedFilesCount: 0,
      addedRowsCount: 3n,
      existingRowsCount: 0n,
      deletedRowsCount: 0n,
      partitions: [{ containsNull: false, containsNan: false, lowerBound: Uint8Array.of(1), upperBound: Uint8Array.of(2) }],
      keyMetadata: null,
      firstRowId: null,
    }
    const bytes = encodeManifestList(2, { snapshotId: big, parentSnapshotId: 5n, sequenceNumber: 7n }, [m])
    const plain = await plainDecode(bytes)
    expect(fieldsWithoutIds(plain.schema)).toEqual([])
    expect(plain.meta).toMatchObject({ 'snapshot-id': big.toString(), 'parent-snapshot-id': '5', 'sequence-number': '7', 'format-version': '2' })
    expect(plain.records[0]).toMatchObject({ manifest_path: m.manifestPath, added_snapshot_id: big.toString(), added_files_count: 1, sequence_number: '7' })
    expect(decodeManifestList(bytes, 'l')).toEqual([m])
  })

  it('a partition value of the wrong type fails naming the file and field', () => {
    const bad = { ...file, partition: ['2024-05-01', -12345n, 'x', 7] }
    const run = () => encodeManifest({ formatVersion: 2, spec, schema, content: 0 }, [{ status: 1, snapshotId: 1n, dataFile: bad }])
    expect(run).toThrow(IcebergError)
    expect(run).toThrow(/s3:\/\/b\/t\/data\/ts_day=2024-05-01\/a\.parquet.*data_file\.partition\.ts_day = "2024-05-01"/)
  })

  it('v1 manifests and lists use the v1 schema (block_size_in_bytes, optional counts, no sequence numbers)', async () => {
    const unpartitioned: PartitionSpec = { 'spec-id': 0, fields: [] }
    const bytes = encodeManifest({ formatVersion: 1, spec: unpartitioned, schema, content: 0 }, [
      { status: 1, snapshotId: 5n, dataFile: { ...file, specId: 0, partition: [] } },
    ])
    const plain = await plainDecode(bytes)
    const df = plain.records[0]!.data_file as Record<string, unknown>
    expect(df.block_size_in_bytes).toBe(String(64 * 1024 * 1024))
    expect(df).not.toHaveProperty('content')
    expect(plain.records[0]).not.toHaveProperty('sequence_number')
    const list = await plainDecode(encodeManifestList(1, { snapshotId: 5n, sequenceNumber: 0n }, []))
    expect(list.schema.fields.map((f) => f.name)).toContain('added_data_files_count')
    expect(list.meta).not.toHaveProperty('sequence-number')
  })
})
