import { cpSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { IcebergError } from '../../lib/errors.js'
import { appendFiles, filesWrittenBy, newSnapshotId } from '../../lib/iceberg/append.js'
import { decodeManifestList } from '../../lib/iceberg/manifest-list.js'
import { findCurrentMetadataPath, readTableMetadata } from '../../lib/iceberg/metadata-io.js'
import { currentSnapshot, newTableMetadata, parseTableMetadata, serializeTableMetadata } from '../../lib/iceberg/metadata.js'
import { liveDataFiles, snapshotManifests } from '../../lib/iceberg/scan.js'
import type { DataFile, TableMetadata } from '../../lib/iceberg/types.js'
import type { FileIO } from '../../lib/io/types.js'
import type { Schema } from '../../lib/schema/types.js'
import { ICEBERG, localIO, tableIO } from './fixture-tables.js'

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: false, type: 'long' },
    { id: 2, name: 'region', required: false, type: 'string' },
  ],
}

const file = (n: number, over: Partial<DataFile> = {}): DataFile => ({
  content: 0,
  filePath: `data/f${n}.parquet`,
  fileFormat: 'PARQUET',
  specId: 0,
  partition: [],
  recordCount: 10 * n,
  fileSizeInBytes: 100 * n,
  ...over,
})

/** A FileIO that counts reads, to show append cost does not grow with history. */
function counting(io: FileIO): FileIO & { reads: string[] } {
  const reads: string[] = []
  return Object.assign(Object.create(null) as object, io, { reads, read: (p: string) => (reads.push(p), io.read(p)) }) as FileIO & { reads: string[] }
}

function copyTable(dir: string): Promise<{ io: FileIO; md: TableMetadata; path: string }> {
  const tmp = mkdtempSync(join(tmpdir(), 'floe-append-'))
  cpSync(join(ICEBERG, dir), tmp, { recursive: true })
  return findCurrentMetadataPath(localIO, tmp).then(async (local) => {
    const probe = await readTableMetadata(localIO, local)
    const io = tableIO(probe.location, tmp)
    const path = await findCurrentMetadataPath(io, probe.location)
    return { io, md: await readTableMetadata(io, path), path }
  })
}

describe('appendFiles on a new table', () => {
  it('numbers sequences, totals the summary from the parent and carries manifests forward unchanged', async () => {
    const loc = mkdtempSync(join(tmpdir(), 'floe-new-'))
    const md0 = newTableMetadata({ location: loc, schema })
    const md1 = await appendFiles(localIO, md0, [file(1), file(2)], { nowMs: 1000, summary: { 'floe.offsets.p': '{"t-0":"5"}' } })
    const s1 = currentSnapshot(md1)!
    expect(s1['sequence-number']).toBe(1n)
    expect(md1['last-sequence-number']).toBe(1n)
    expect(s1.summary).toEqual({
      'floe.offsets.p': '{"t-0":"5"}',
      operation: 'append',
      'added-data-files': '2',
      'added-records': '30',
      'added-files-size': '300',
      'changed-partition-count': '1',
      'total-records': '30',
      'total-files-size': '300',
      'total-data-files': '2',
      'total-delete-files': '0',
      'total-position-deletes': '0',
      'total-equality-deletes': '0',
    })
    const md2 = await appendFiles(localIO, md1, [file(3)], { nowMs: 2000 })
    const s2 = currentSnapshot(md2)!
    expect(s2['parent-snapshot-id']).toBe(s1['snapshot-id'])
    expect(s2['sequence-number']).toBe(2n)
    expect(s2.summary['total-records']).toBe('60')
    expect(s2.summary['total-data-files']).toBe('3')
    expect(md2['snapshot-log']).toEqual([
      { 'timestamp-ms': 1000, 'snapshot-id': s1['snapshot-id'] },
      { 'timestamp-ms': 2000, 'snapshot-id': s2['snapshot-id'] },
    ])
    expect(md2.refs).toEqual({ main: { 'snapshot-id': s2['snapshot-id'], type: 'branch' } })
    const [m2, m1] = await snapshotManifests(localIO, s2)
    expect(await snapshotManifests(localIO, s1)).toEqual([m1])
    expect(m2).toMatchObject({ sequenceNumber: 2n, addedSnapshotId: s2['snapshot-id'], addedFilesCount: 1, addedRowsCount: 30n })
    const live = await liveDataFiles(localIO, md2)
    expect(live.map((e) => [e.dataFile.filePath, e.sequenceNumber, e.snapshotId])).toEqual([
      ['data/f3.parquet', 2n, s2['snapshot-id']],
      ['data/f1.parquet', 1n, s1['snapshot-id']],
      ['data/f2.parquet', 1n, s1['snapshot-id']],
    ])
    expect(parseTableMetadata(serializeTableMetadata(md2))).toEqual(md2)
  })

  it('lists the files an append wrote, for cleanup after a failed commit', async () => {
    const md0 = newTableMetadata({ location: mkdtempSync(join(tmpdir(), 'floe-written-')), schema })
    const md1 = await appendFiles(localIO, md0, [file(1)])
    const md2 = await appendFiles(localIO, md1, [file(2)])
    const written = await filesWrittenBy(localIO, md2)
    const snap = currentSnapshot(md2)!
    expect(written).toHaveLength(2)
    expect(written[0]).toBe(snap['manifest-list'])
    expect(written[1]).toMatch(/-m0\.avro$/)
    expect(await filesWrittenBy(localIO, md0)).toEqual([])
    expect(written).not.toContain((await snapshotManifests(localIO, currentSnapshot(md1)!))[0]!.manifestPath)
  })

  it('reads only the parent manifest list, however long the history', async () => {
    let md = newTableMetadata({ location: mkdtempSync(join(tmpdir(), 'floe-cost-')), schema })
    for (let i = 1; i <= 5; i++) md = await appendFiles(localIO, md, [file(i)])
    const io = counting(localIO)
    await appendFiles(io, md, [file(6)])
    expect(io.reads).toEqual([currentSnapshot(md)!['manifest-list']])
  })

  it('writes one manifest per partition spec, each with its spec id and partition summaries', async () => {
    const base = newTableMetadata({ location: mkdtempSync(join(tmpdir(), 'floe-specs-')), schema })
    const md = {
      ...base,
      'partition-specs': [...base['partition-specs'], { 'spec-id': 1, fields: [{ 'source-id': 2, 'field-id': 1000, name: 'region', transform: 'identity' }] }],
      'last-partition-id': 1000,
    }
    const next = await appendFiles(localIO, md, [
      file(1),
      file(2, { specId: 1, partition: ['eu'] }),
      file(3, { specId: 1, partition: ['us'] }),
      file(4, { specId: 1, partition: [null] }),
    ])
    expect(currentSnapshot(next)!.summary['changed-partition-count']).toBe('4')
    const manifests = await snapshotManifests(localIO, currentSnapshot(next)!)
    expect(manifests.map((m) => [m.partitionSpecId, m.addedFilesCount])).toEqual([
      [0, 1],
      [1, 3],
    ])
    expect(manifests[1]!.partitions).toEqual([
      { containsNull: true, containsNan: false, lowerBound: new TextEncoder().encode('eu'), upperBound: new TextEncoder().encode('us') },
    ])
    const live = await liveDataFiles(localIO, next)
    expect(live.map((e) => e.dataFile.partition)).toEqual([[], ['eu'], ['us'], [null]])
  })

  it('refuses delete files, unknown specs and reused snapshot ids with clear errors', async () => {
    const md = newTableMetadata({ location: mkdtempSync(join(tmpdir(), 'floe-bad-')), schema })
    await expect(appendFiles(localIO, md, [file(1, { content: 1 })])).rejects.toThrow('appendFiles takes data files only; data/f1.parquet has content 1')
    await expect(appendFiles(localIO, md, [file(1, { specId: 7 })])).rejects.toThrow(/no partition spec with id 7/)
    const next = await appendFiles(localIO, md, [file(1)], { snapshotId: 42n })
    await expect(appendFiles(localIO, next, [file(2)], { snapshotId: 42n })).rejects.toThrow(IcebergError)
  })

  it('refuses to append to an encrypted table rather than write plaintext manifests', async () => {
    const text = readFileSync(`${ICEBERG}/apache-iceberg-rust/crates/iceberg/testdata/table_metadata/TableMetadataV3ValidEncryption.json`, 'utf8')
    await expect(appendFiles(localIO, parseTableMetadata(text), [file(1)])).rejects.toThrow(/is encrypted/)
  })

  it('draws random positive 63-bit snapshot ids', () => {
    const ids = Array.from({ length: 200 }, () => newSnapshotId())
    expect(ids.every((id) => id > 0n && id < 2n ** 63n)).toBe(true)
    expect(new Set(ids).size).toBe(200)
    expect(ids.some((id) => id > 2n ** 53n)).toBe(true)
  })
})

describe('appendFiles on copies of fixture tables', () => {
  it('keeps other branches, tags and statistics intact (Spark table with test-branch and EOW-01)', async () => {
    const { io, md } = await copyTable('iceberg-cxx/tests/warehouse/gperov/test')
    const next = await appendFiles(io, md, [file(1)])
    const { main, ...others } = next.refs
    const { main: oldMain, ...oldOthers } = md.refs
    expect(Object.keys(oldOthers).sort()).toEqual(['EOW-01', 'test-branch'])
    expect(others).toEqual(oldOthers)
    expect(main!['snapshot-id']).toBe(currentSnapshot(next)!['snapshot-id'])
    expect(oldMain!['snapshot-id']).toBe(currentSnapshot(next)!['parent-snapshot-id'])
  })

  it('keeps Trino statistics entries', async () => {
    const { io, md } = await copyTable('iceberg-cxx/tests/tables/no_partitioning')
    const next = await appendFiles(io, md, [file(1)])
    expect(md.statistics).toHaveLength(1)
    expect(next.statistics).toEqual(md.statistics)
  })

  it('gives a v3 table row lineage: first-row-id from next-row-id, manifests and files inherit ids', async () => {
    const { io, md } = await copyTable('iceberg-cxx/tests/tables/deletion_vectors')
    expect(md['format-version']).toBe(3)
    const before = md['next-row-id']!
    const next = await appendFiles(io, md, [file(1), file(2)])
    const snap = currentSnapshot(next)!
    expect(snap['first-row-id']).toBe(before)
    expect(snap['added-rows']).toBe(30n)
    expect(next['next-row-id']).toBe(before + 30n)
    const list = decodeManifestList(await io.read(snap['manifest-list']!), 'list')
    expect(list[0]!.firstRowId).toBe(before)
    expect(list.filter((m) => m.content === 0 && m.firstRowId === null)).toEqual([])
    const ours = (await liveDataFiles(io, next)).filter((e) => e.snapshotId === snap['snapshot-id'])
    expect(ours.map((e) => e.dataFile.firstRowId)).toEqual([before, before + 10n])
  })

  it('assigns row ids to carried data manifests without first_row_id (v1 table upgraded to v3), as Java does', async () => {
    const { io, md } = await copyTable('duckdb-iceberg/data/persistent/iceberg_v1_repro/repro/merch_v1')
    expect(md['format-version']).toBe(3)
    const old = await snapshotManifests(io, currentSnapshot(md)!)
    expect(old.every((m) => m.firstRowId === null)).toBe(true)
    const next = await appendFiles(io, md, [file(1)])
    const snap = currentSnapshot(next)!
    const list = await snapshotManifests(io, snap)
    // New manifest first (10 rows), then each carried data manifest gets the next block.
    let expected = md['next-row-id'] ?? 0n
    for (const m of list) {
      expect(m.firstRowId).toBe(expected)
      expected += m.addedRowsCount + m.existingRowsCount
    }
    expect(next['next-row-id']).toBe(expected)
    expect(snap['added-rows']).toBe(expected - (md['next-row-id'] ?? 0n))
    const ids = (await liveDataFiles(io, next)).map((e) => [e.dataFile.firstRowId, e.dataFile.recordCount] as const)
    const ranges = ids.map(([id, n]) => [id!, id! + BigInt(n)] as const).sort((a, b) => (a[0] < b[0] ? -1 : 1))
    expect(ranges.every((r, i) => i === 0 || ranges[i - 1]![1] <= r[0])).toBe(true) // no overlapping row ids
  })

  it('appends to a v1 table with embedded manifests as a v1 manifest list', async () => {
    const { io, md } = await copyTable('duckdb-iceberg/data/persistent/iceberg_v1_deprecated/default/legacy_v1')
    expect(currentSnapshot(md)!.manifests).toHaveLength(1)
    const next = await appendFiles(io, md, [file(1, { partition: ['x'] })])
    const snap = currentSnapshot(next)!
    expect(snap).not.toHaveProperty('sequence-number')
    expect(next).not.toHaveProperty('last-sequence-number')
    const manifests = await snapshotManifests(io, snap)
    expect(manifests.map((m) => m.manifestPath).slice(1)).toEqual(currentSnapshot(md)!.manifests)
    expect((await liveDataFiles(io, next)).length).toBe((await liveDataFiles(io, md)).length + 1)
  })
})
