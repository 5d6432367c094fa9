import { cpSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { icebergRead } from 'icebird'
import { describe, expect, it } from 'vitest'
import { appendFiles, filesWrittenBy } from '../../lib/iceberg/append.js'
import { decodeManifest, summarizePartitions } from '../../lib/iceberg/manifest.js'
import { boundBytes, MAX_MANIFESTS_READ_PER_COMMIT, MERGE_ENABLED, MIN_COUNT_TO_MERGE, mergeSettings, packEnd, TARGET_SIZE_BYTES } from '../../lib/iceberg/merge.js'
import { findCurrentMetadataPath, readTableMetadata } from '../../lib/iceberg/metadata-io.js'
import { currentSchema, currentSnapshot, newTableMetadata, specById } from '../../lib/iceberg/metadata.js'
import { liveDataFiles, liveEntries, snapshotManifests } from '../../lib/iceberg/scan.js'
import type { DataFile, ManifestEntry, ManifestFile, TableMetadata } from '../../lib/iceberg/types.js'
import { createFileIO } from '../../lib/io/index.js'
import type { FileIO } from '../../lib/io/types.js'
import type { Schema } from '../../lib/schema/types.js'
import { createTestBucket, testAws } from '../helpers/aws.js'
import { writeDailyEventsTable } from './daily-table.js'
import { ICEBERG, localIO, tableIO } from './fixture-tables.js'
import { plainDecode } from '../helpers/plain-avro.js'

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: false, type: 'long' },
    { id: 2, name: 'region', required: false, type: 'string' },
  ],
}
const regionSpec = { 'spec-id': 1, fields: [{ 'source-id': 2, 'field-id': 1000, name: 'region', transform: 'identity' }] }

const file = (n: number, over: Partial<DataFile> = {}): DataFile => ({
  content: 0,
  filePath: `data/f${String(n).padStart(4, '0')}.parquet`,
  fileFormat: 'PARQUET',
  specId: 0,
  partition: [],
  recordCount: 10 + n,
  fileSizeInBytes: 1000 + n,
  ...over,
})

const withProps = (md: TableMetadata, props: Record<string, string>): TableMetadata => ({ ...md, properties: { ...md.properties, ...props } })

const newTable = (props: Record<string, string> = {}, specs = false): TableMetadata => {
  const md = newTableMetadata({ location: mkdtempSync(join(tmpdir(), 'floe-merge-')), schema, properties: props })
  return specs ? { ...md, 'partition-specs': [...md['partition-specs'], regionSpec], 'last-partition-id': 1000 } : md
}

async function manifestsOf(io: FileIO, md: TableMetadata): Promise<ManifestFile[]> {
  return snapshotManifests(io, currentSnapshot(md)!)
}

/** Every manifest-list entry's counts and partition summaries equal what its manifest holds. */
async function expectListMatchesManifests(io: FileIO, md: TableMetadata): Promise<void> {
  for (const m of await manifestsOf(io, md)) {
    const { entries } = decodeManifest(await io.read(m.manifestPath), m.manifestPath, { manifest: m, spec: specById(md, m.partitionSpecId) })
    const of = (s: number) => entries.filter((e) => e.status === s)
    const rows = (s: number) => of(s).reduce((a, e) => a + BigInt(e.dataFile.recordCount), 0n)
    expect([m.addedFilesCount, m.existingFilesCount, m.deletedFilesCount, m.addedRowsCount, m.existingRowsCount, m.deletedRowsCount], m.manifestPath).toEqual([
      of(1).length,
      of(0).length,
      of(2).length,
      rows(1),
      rows(0),
      rows(2),
    ])
    // v2+: min_sequence_number is the lowest data sequence number of the live entries (v1 has none: 0).
    const seqs = entries.filter((e) => e.status !== 2).map((e) => e.sequenceNumber!)
    const lowest = md['format-version'] === 1 ? 0n : seqs.reduce((a, b) => (b < a ? b : a), m.sequenceNumber)
    expect(m.content === 1 || m.minSequenceNumber === lowest, `${m.manifestPath} min_sequence_number ${m.minSequenceNumber}, entries ${lowest}`).toBe(true)
    const spec = specById(md, m.partitionSpecId)
    expect(m.partitions).toEqual(summarizePartitions(spec, currentSchema(md), entries.map((e) => e.dataFile.partition), boundBytes))
  }
}

describe('packEnd (Java ListPacker, lookback 1, packed from the end)', () => {
  const w = (x: { w: number }) => x.w
  const items = (...ws: number[]) => ws.map((x, i) => ({ i, w: x }))
  it('keeps order and leaves the newest (first) bin under-filled', () => {
    expect(packEnd(items(5, 5, 5), 10, w).map((b) => b.map((x) => x.i))).toEqual([[0], [1, 2]])
    expect(packEnd(items(3, 5, 5, 5), 10, w).map((b) => b.map((x) => x.i))).toEqual([[0, 1], [2, 3]])
  })
  it('gives an item heavier than the target a bin of its own', () => {
    expect(packEnd(items(1, 20, 1, 1), 10, w).map((b) => b.map((x) => x.i))).toEqual([[0], [1], [2, 3]])
  })
})

describe('merge settings follow Iceberg-Java table properties', () => {
  it('defaults to enabled, 100 manifests, 8 MB; parses like Java; rejects a malformed count', () => {
    expect(mergeSettings(newTable())).toEqual({ enabled: true, minCountToMerge: 100, targetSizeBytes: 8388608, maxManifestsRead: MAX_MANIFESTS_READ_PER_COMMIT })
    expect(mergeSettings(newTable({ [MERGE_ENABLED]: 'FALSE', [MIN_COUNT_TO_MERGE]: '5', [TARGET_SIZE_BYTES]: '1024' }))).toMatchObject({
      enabled: false,
      minCountToMerge: 5,
      targetSizeBytes: 1024,
    })
    expect(mergeSettings(newTable({ [MERGE_ENABLED]: 'yes' })).enabled).toBe(false) // Boolean.parseBoolean
    expect(() => mergeSettings(newTable({ [MIN_COUNT_TO_MERGE]: 'ten' }))).toThrow(`property ${MIN_COUNT_TO_MERGE} must be an integer, got 'ten'`)
  })
})

describe('appendFiles merges manifests', () => {
  it('150 appends with default settings: the manifest count stays bounded and every file stays live once with its original ids', { timeout: 120_000 }, async () => {
    let md = newTable()
    const origin = new Map<string, { seq: bigint; snap: bigint }>()
    const counts: number[] = []
    for (let n = 1; n <= 150; n++) {
      md = await appendFiles(localIO, md, [file(n, { recordCount: n })])
      const snap = currentSnapshot(md)!
      origin.set(file(n).filePath, { seq: snap['sequence-number']!, snap: snap['snapshot-id'] })
      counts.push((await manifestsOf(localIO, md)).length)
    }
    // Java's rule: the bin holding the new manifest merges once it reaches min-count (100) manifests.
    expect(counts.slice(0, 99)).toEqual(Array.from({ length: 99 }, (_, i) => i + 1))
    expect(counts[99]).toBe(1)
    expect(counts.slice(100)).toEqual(Array.from({ length: 50 }, (_, i) => i + 2))
    expect(Math.max(...counts)).toBeLessThanOrEqual(100)

    const live = await liveDataFiles(localIO, md)
    expect(live).toHaveLength(150)
    expect(new Set(live.map((e) => e.dataFile.filePath)).size).toBe(150)
    for (const e of live) {
      const o = origin.get(e.dataFile.filePath)!
      expect([e.dataFile.filePath, e.snapshotId, e.sequenceNumber, e.fileSequenceNumber]).toEqual([e.dataFile.filePath, o.snap, o.seq, o.seq])
    }
    expect(currentSnapshot(md)!.summary['total-data-files']).toBe('150')
    await expectListMatchesManifests(localIO, md)

    // The merged manifest (written by append 100): 1 ADDED entry of that commit, 99 EXISTING with explicit ids.
    const merged = (await manifestsOf(localIO, md)).at(-1)!
    expect([merged.addedFilesCount, merged.existingFilesCount, merged.sequenceNumber, merged.minSequenceNumber]).toEqual([1, 99, 100n, 1n])
    const plain = await plainDecode(await localIO.read(merged.manifestPath))
    const ids = (plain.schema.fields as { name: string; 'field-id'?: number }[]).map((f) => [f.name, f['field-id']])
    expect(ids).toEqual([
      ['status', 0],
      ['snapshot_id', 1],
      ['sequence_number', 3],
      ['file_sequence_number', 4],
      ['data_file', 2],
    ])
    const first = plain.records.find((r) => (r.data_file as { file_path: string }).file_path === file(1).filePath)!
    expect([first.status, first.snapshot_id, first.sequence_number, first.file_sequence_number]).toEqual([0, String(origin.get(file(1).filePath)!.snap), '1', '1'])
    const added = plain.records.find((r) => (r.data_file as { file_path: string }).file_path === file(100).filePath)!
    expect([added.status, added.sequence_number, added.file_sequence_number]).toEqual([1, null, null])
  })

  it('reads only the manifests it merges', async () => {
    let md = newTable({ [MIN_COUNT_TO_MERGE]: '4' })
    for (let n = 1; n <= 3; n++) md = await appendFiles(localIO, md, [file(n)])
    const reads: string[] = []
    const io: FileIO = { ...localIO, read: (p: string) => (reads.push(p), localIO.read(p)) }
    const next = await appendFiles(io, md, [file(4)])
    const old = await manifestsOf(localIO, md)
    expect(reads.sort()).toEqual([currentSnapshot(md)!['manifest-list']!, ...old.map((m) => m.manifestPath)].sort())
    const now = await manifestsOf(localIO, next)
    expect(now).toHaveLength(1)
    // The merged manifest is the only one this commit wrote (the new files' manifest was merged before being written).
    expect(await filesWrittenBy(localIO, next)).toEqual([currentSnapshot(next)!['manifest-list'], now[0]!.manifestPath])
  })

  it('commit.manifest-merge.enabled=false keeps one manifest per append, carried unchanged', async () => {
    let md = newTable({ [MERGE_ENABLED]: 'false', [MIN_COUNT_TO_MERGE]: '2' })
    for (let n = 1; n <= 6; n++) md = await appendFiles(localIO, md, [file(n)])
    const list = await manifestsOf(localIO, md)
    expect(list.map((m) => [m.addedFilesCount, m.existingFilesCount])).toEqual(Array.from({ length: 6 }, () => [1, 0]))
    expect(list.map((m) => m.sequenceNumber)).toEqual([6n, 5n, 4n, 3n, 2n, 1n])
  })

  it('bins toward the target size: full bins merge whatever their count, the bin with the new manifest waits for min-count', async () => {
    let md = newTable({ [MERGE_ENABLED]: 'false' })
    for (let n = 1; n <= 5; n++) md = await appendFiles(localIO, md, [file(n)], { snapshotId: 1000n + BigInt(n) })
    const old = await manifestsOf(localIO, md) // m5..m1, newest first
    const len = old[0]!.manifestLength
    expect(old.every((m) => m.manifestLength === len)).toBe(true)
    const next = await appendFiles(localIO, withProps(md, { [MERGE_ENABLED]: 'true', [TARGET_SIZE_BYTES]: String(2 * len) }), [file(6)], { snapshotId: 1006n })
    const list = await manifestsOf(localIO, next)
    // Packed from the oldest: [m2 m1] and [m4 m3] merge (no new manifest in them); [new m5] is under min-count.
    const paths = async (m: ManifestFile) => (await decodeManifest(await localIO.read(m.manifestPath), m.manifestPath, { manifest: m })).entries.map((e) => e.dataFile.filePath)
    expect(await Promise.all(list.map(paths))).toEqual([[file(6).filePath], [file(5).filePath], [file(4).filePath, file(3).filePath], [file(2).filePath, file(1).filePath]])
    expect(list.map((m) => m.addedSnapshotId)).toEqual([1006n, 1005n, 1006n, 1006n])
    await expectListMatchesManifests(localIO, next)
  })

  it('an append without files treats the newest data manifest as Java treats its first manifest', async () => {
    let md = newTable({ [MERGE_ENABLED]: 'false' })
    for (let n = 1; n <= 3; n++) md = await appendFiles(localIO, md, [file(n)])
    const waits = await appendFiles(localIO, withProps(md, { [MERGE_ENABLED]: 'true', [MIN_COUNT_TO_MERGE]: '4' }), [])
    expect(await manifestsOf(localIO, waits)).toEqual(await manifestsOf(localIO, md))
    const merges = await appendFiles(localIO, withProps(md, { [MERGE_ENABLED]: 'true', [MIN_COUNT_TO_MERGE]: '3' }), [])
    expect((await manifestsOf(localIO, merges)).map((m) => [m.addedFilesCount, m.existingFilesCount])).toEqual([[0, 3]])
    expect((await liveDataFiles(localIO, merges)).map((e) => [e.dataFile.filePath, e.sequenceNumber])).toEqual([3, 2, 1].map((n) => [file(n).filePath, BigInt(n)]))
  })

  it('a backlog of manifests is merged a bounded number of reads per commit, newest bins first, until none is left', async () => {
    let md = newTable({ [MERGE_ENABLED]: 'false' })
    for (let n = 1; n <= 8; n++) md = await appendFiles(localIO, md, [file(n)], { snapshotId: 1000n + BigInt(n) })
    const len = (await manifestsOf(localIO, md))[0]!.manifestLength
    md = withProps(md, { [MERGE_ENABLED]: 'true', [TARGET_SIZE_BYTES]: String(2 * len) })
    // Bins from the oldest: [m2 m1] [m4 m3] [m6 m5] [m8 m7] [new]. A budget of 2 reads merges one bin per commit.
    const shape = async (t: TableMetadata) => (await manifestsOf(localIO, t)).map((m) => m.addedFilesCount + m.existingFilesCount)
    const reads: string[] = []
    const io: FileIO = { ...localIO, read: (p: string) => (reads.push(p), localIO.read(p)) }
    md = await appendFiles(io, md, [file(9)], { snapshotId: 1009n, maxManifestsMergeRead: 2 })
    expect(reads).toHaveLength(1 + 2) // the parent list and one bin
    expect(await shape(md)).toEqual([1, 2, 1, 1, 1, 1, 1, 1])
    // With the default budget the rest of the backlog merges in one commit: [m2 m1] [m4 m3] [m6 m5] and what follows.
    md = await appendFiles(localIO, md, [file(10)], { snapshotId: 1010n })
    const live = await liveDataFiles(localIO, md)
    expect(live.map((e) => [e.dataFile.filePath, e.sequenceNumber]).sort()).toEqual(Array.from({ length: 10 }, (_, i) => [file(i + 1).filePath, BigInt(i + 1)]).sort())
    expect((await shape(md)).slice(-3)).toEqual([2, 2, 2])
    await expectListMatchesManifests(localIO, md)
  })

  it('merges per partition spec: a table with two specs gets one merged manifest per spec', async () => {
    let md = newTable({ [MIN_COUNT_TO_MERGE]: '3' }, true)
    const regions = ['eu', 'us', null, 'ap']
    for (let n = 1; n <= 4; n++) md = await appendFiles(localIO, md, [file(n), file(100 + n, { specId: 1, partition: [regions[n - 1]!] })])
    const list = await manifestsOf(localIO, md)
    // Append 3 merged each spec's 3 manifests; append 4 added one more per spec.
    expect(list.map((m) => [m.partitionSpecId, m.addedFilesCount, m.existingFilesCount])).toEqual([
      [0, 1, 0],
      [1, 1, 0],
      [0, 1, 2],
      [1, 1, 2],
    ])
    expect(list[3]!.partitions).toEqual([{ containsNull: true, containsNan: false, lowerBound: new TextEncoder().encode('eu'), upperBound: new TextEncoder().encode('us') }])
    const live = await liveDataFiles(localIO, md)
    expect(live.map((e) => [e.dataFile.specId, e.dataFile.filePath]).sort()).toEqual(
      [1, 2, 3, 4].flatMap((n) => [[0, file(n).filePath], [1, file(100 + n).filePath]]).sort(),
    )
    expect(live.filter((e) => e.dataFile.specId === 1).map((e) => e.dataFile.partition).sort()).toEqual([['ap'], ['eu'], ['us'], [null]].sort())
    await expectListMatchesManifests(localIO, md)
  })
})

function copyTable(dir: string): Promise<{ io: FileIO; md: TableMetadata }> {
  const tmp = mkdtempSync(join(tmpdir(), 'floe-merge-fx-'))
  cpSync(join(ICEBERG, dir), tmp, { recursive: true })
  return findCurrentMetadataPath(localIO, tmp).then(async (local) => {
    const probe = await readTableMetadata(localIO, local)
    const io = tableIO(probe.location, tmp)
    return { io, md: await readTableMetadata(io, await findCurrentMetadataPath(io, probe.location)) }
  })
}

const key = (e: ManifestEntry) => JSON.stringify({ ...e, status: undefined }, (_, v) => (typeof v === 'bigint' ? `${v}n` : v instanceof Map ? [...v] : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v))

describe('merging manifests of other engines\' tables', () => {
  it.each([
    ['v2 partitioned (Spark)', 'icebird/test/files/hyperparam-iceberg/spark/rename_column'],
    ['v2 day(timestamptz) (Trino)', 'iceberg-cxx/tests/tables/day_timestamptz_partitioning'],
    ['v1 partitioned, embedded manifests (Spark)', 'duckdb-iceberg/data/persistent/iceberg_v1_deprecated/default/legacy_v1'],
    ['v1 gzip metadata (Spark)', 'duckdb-iceberg/data/persistent/iceberg/lineitem_iceberg_gz'],
  ])('%s: every old entry survives with its snapshot id, sequence numbers and metrics', async (_, dir) => {
    const { io, md } = await copyTable(dir)
    const fv = md['format-version']
    const before = await liveDataFiles(io, md)
    const spec = md['partition-specs'].find((s) => s['spec-id'] === md['default-spec-id'])!
    const partition = before.find((e) => e.dataFile.specId === spec['spec-id'])?.dataFile.partition ?? spec.fields.map(() => null)
    let next = withProps(md, { [MIN_COUNT_TO_MERGE]: '2' })
    next = await appendFiles(io, next, [file(1, { specId: spec['spec-id'], partition })])
    next = await appendFiles(io, next, [file(2, { specId: spec['spec-id'], partition })])
    const list = await manifestsOf(io, next)
    expect(list.some((m) => m.existingFilesCount > 0 && m.addedSnapshotId === currentSnapshot(next)!['snapshot-id'])).toBe(true)
    const after = await liveDataFiles(io, next)
    expect(after).toHaveLength(before.length + 2)
    const afterKeys = new Set(after.map(key))
    expect(before.map(key).filter((k) => !afterKeys.has(k))).toEqual([])
    expect(after.filter((e) => e.status === 1).map((e) => e.dataFile.filePath)).toEqual([file(2).filePath])
    const merged = list.find((m) => m.existingFilesCount > 0)!
    expect((await plainDecode(await io.read(merged.manifestPath))).records.length).toBe(merged.existingFilesCount + merged.addedFilesCount)
    const header = decodeManifest(await io.read(merged.manifestPath), merged.manifestPath).meta
    expect(header['format-version']).toBe(String(fv))
    expect(currentSnapshot(next)!['sequence-number']).toBe(fv === 1 ? undefined : md['last-sequence-number']! + 2n)
    await expectListMatchesManifests(io, next)
  })

  it('v3 (deletion vectors): merged data files keep their row ids, new rows get fresh ones, delete manifests are carried', async () => {
    const { io, md } = await copyTable('iceberg-cxx/tests/tables/deletion_vectors')
    expect(md['format-version']).toBe(3)
    const before = await liveDataFiles(io, md)
    const deletesBefore = (await liveEntries(io, md, { content: 'deletes' })).map((e) => e.dataFile.filePath).sort()
    let next = withProps(md, { [MIN_COUNT_TO_MERGE]: '2' })
    next = await appendFiles(io, next, [file(1)])
    next = await appendFiles(io, next, [file(2)])
    const after = await liveDataFiles(io, next)
    expect(after).toHaveLength(before.length + 2)
    const rowIds = new Map(after.map((e) => [e.dataFile.filePath, e.dataFile.firstRowId]))
    for (const e of before) expect(rowIds.get(e.dataFile.filePath)).toBe(e.dataFile.firstRowId)
    const ranges = after.map((e) => [e.dataFile.firstRowId!, e.dataFile.firstRowId! + BigInt(e.dataFile.recordCount)] as const).sort((a, b) => (a[0] < b[0] ? -1 : 1))
    expect(ranges.every((r, i) => i === 0 || ranges[i - 1]![1] <= r[0])).toBe(true)
    expect(ranges.at(-1)![1]).toBeLessThanOrEqual(next['next-row-id']!)
    expect((await liveEntries(io, next, { content: 'deletes' })).map((e) => e.dataFile.filePath).sort()).toEqual(deletesBefore)
    const list = await manifestsOf(io, next)
    expect(list.filter((m) => m.content === 0 && m.firstRowId === null)).toEqual([])
    await expectListMatchesManifests(io, next)
  })
})

describe('v3 manifests without first_row_id (v1 table upgraded to v3)', () => {
  it('are not merged before the list assigns their row ids, then merge keeping those ids', async () => {
    const { io, md } = await copyTable('duckdb-iceberg/data/persistent/iceberg_v1_repro/repro/merch_v1')
    const old = await manifestsOf(io, md)
    expect(old.length).toBeGreaterThan(0)
    expect(old.every((m) => m.firstRowId === null)).toBe(true)
    const base = withProps(md, { [MIN_COUNT_TO_MERGE]: '2' })
    const first = await appendFiles(io, base, [file(1)])
    // Nothing merged: the carried manifests had no row ids to write into EXISTING entries yet.
    expect((await manifestsOf(io, first)).map((m) => m.existingFilesCount > 0 && m.addedSnapshotId === currentSnapshot(first)!['snapshot-id'])).not.toContain(true)
    const ids = new Map((await liveDataFiles(io, first)).map((e) => [e.dataFile.filePath, e.dataFile.firstRowId]))
    const second = await appendFiles(io, first, [file(2)])
    const list = await manifestsOf(io, second)
    expect(list.filter((m) => m.existingFilesCount > 0 && m.addedSnapshotId === currentSnapshot(second)!['snapshot-id'])).toHaveLength(1)
    const after = await liveDataFiles(io, second)
    expect(after).toHaveLength(ids.size + 1)
    for (const e of after.filter((x) => x.dataFile.filePath !== file(2).filePath)) expect(e.dataFile.firstRowId).toBe(ids.get(e.dataFile.filePath))
    const ranges = after.map((e) => [e.dataFile.firstRowId!, e.dataFile.firstRowId! + BigInt(e.dataFile.recordCount)] as const).sort((a, b) => (a[0] < b[0] ? -1 : 1))
    expect(ranges.every((r, i) => i === 0 || ranges[i - 1]![1] <= r[0])).toBe(true)
    await expectListMatchesManifests(io, second)
  })
})

describe('a merged table on S3 (s3rver)', () => {
  it('is read by icebird over HTTP with every row of every append', { timeout: 60_000 }, async () => {
    const aws = testAws()
    const bucket = await createTestBucket('floe-merge')
    const io = createFileIO(aws.clients)
    const location = `s3://${bucket}/db/events`
    const { md, path } = await writeDailyEventsTable(io, location, ['2024-05-01', '2024-05-02', '2024-05-03', '2024-05-04'], { [MIN_COUNT_TO_MERGE]: '3' })
    // Append 3 merged three manifests (2 EXISTING entries + 1 ADDED); append 4 added one more.
    const list = await manifestsOf(io, md)
    expect(list.map((m) => [m.addedFilesCount, m.existingFilesCount])).toEqual([
      [1, 0],
      [1, 2],
    ])
    const http = `${aws.endpoints.s3.replace(/\/+$/, '')}/${bucket}/db/events`
    const from = `https://${bucket}.s3.amazonaws.com/db/events`
    const realFetch = globalThis.fetch
    globalThis.fetch = ((input: string | URL | Request, init?: RequestInit) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url
      return realFetch(url.startsWith(from) ? http + url.slice(from.length) : url, init)
    }) as typeof fetch
    try {
      const rows = (await icebergRead({ tableUrl: http, metadataFileName: path.slice(path.lastIndexOf('/') + 1) })) as Record<string, unknown>[]
      expect(rows.map((r) => `${String(r.id)}:${String(r.name)}`).sort()).toEqual(['0:r00', '10:r10', '11:r11', '1:r01', '20:r20', '21:r21', '30:r30', '31:r31'])
    } finally {
      globalThis.fetch = realFetch
    }
  })
})
