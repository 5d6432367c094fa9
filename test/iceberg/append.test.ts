/**
 * Round trip on copies of real tables (served by s3rver): append a snapshot with a new Parquet
 * file, then (a) our reader sees old + new records, (b) icebird (an independent reader, over
 * HTTP) reads the same rows as hyparquet reading the live files directly, (c) the new manifest
 * list and manifest decode with plain avsc and carry field ids.
 */
import { randomUUID } from 'node:crypto'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { PutObjectCommand } from '@aws-sdk/client-s3'
import { parquetMetadata, parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import { icebergRead } from 'icebird'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { appendFiles } from '../../lib/iceberg/append.js'
import { parseJson } from '../../lib/iceberg/json.js'
import { findCurrentMetadataPath, newMetadataPath, readTableMetadata, writeTableMetadata } from '../../lib/iceberg/metadata-io.js'
import { appendMetadataLog, currentSchema, currentSnapshot, defaultSpec, serializeTableMetadata } from '../../lib/iceberg/metadata.js'
import { liveDataFiles, snapshotManifests } from '../../lib/iceberg/scan.js'
import { applyTransform } from '../../lib/iceberg/transforms.js'
import type { DataFile, TableMetadata } from '../../lib/iceberg/types.js'
import { createFileIO, withPathMap } from '../../lib/io/index.js'
import type { FileIO } from '../../lib/io/types.js'
import type { NestedField } from '../../lib/schema/types.js'
import { coerceRecord, encodeParquet } from '../../lib/writer/columnar/index.js'
import { createTestBucket, testAws } from '../helpers/aws.js'
import { writeDailyEventsTable } from './daily-table.js'
import { ICEBERG } from './fixture-tables.js'
import { fieldsWithoutIds, plainDecode } from '../helpers/plain-avro.js'

const TABLES = [
  { name: 'v2 unpartitioned (Trino)', dir: 'iceberg-cxx/tests/tables/no_partitioning' },
  { name: 'v2 partitioned bucket[4] + identity, renamed column (Spark)', dir: 'icebird/test/files/hyperparam-iceberg/spark/rename_column' },
  { name: 'v2 partitioned day(timestamptz) (Trino)', dir: 'iceberg-cxx/tests/tables/day_timestamptz_partitioning' },
  { name: 'v1 partitioned, snapshot with embedded manifests (Spark)', dir: 'duckdb-iceberg/data/persistent/iceberg_v1_deprecated/default/legacy_v1' },
  { name: 'v1 unpartitioned, gzip metadata (Spark)', dir: 'duckdb-iceberg/data/persistent/iceberg/lineitem_iceberg_gz' },
]

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : [join(dir, n)]))
}

/** A sample input value per Iceberg type, in the JSON-ish shapes the coercer accepts. */
function sample(f: NestedField, i: number): unknown {
  const t = f.type as string
  if (t === 'int' || t === 'long') return 900_000 + i
  if (t === 'string') return `floe-${i}`
  if (t === 'boolean') return i % 2 === 0
  if (t === 'float' || t === 'double') return 0.5 + i
  if (t === 'date') return '2024-05-01'
  if (t.startsWith('timestamp')) return '2024-05-01T12:34:56Z'
  if (t.startsWith('decimal')) return '12.34'
  throw new Error(`no sample for ${t}`)
}

// icebird fetches https://<bucket>.s3.amazonaws.com/<key> for s3:// paths and the path itself
// for relative ones: route both to the s3rver copy (the only shim; icebird itself is unchanged).
const routes: [string, string][] = []
const realFetch = globalThis.fetch
beforeAll(() => {
  globalThis.fetch = ((input: string | URL | Request, init?: RequestInit) => {
    let url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url
    for (const [from, to] of routes) if (url.startsWith(from)) url = to + url.slice(from.length)
    return realFetch(url, init)
  }) as typeof fetch
})
afterAll(() => {
  globalThis.fetch = realFetch
})

// Numbers to 12 significant digits: icebird scales decimals in floating point (24710.350000000002).
async function readText(io: FileIO, path: string): Promise<string> {
  const bytes = await io.read(path)
  return (bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : Buffer.from(bytes)).toString('utf8')
}

const show = (v: unknown) =>
  JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? `${x}` : typeof x === 'number' ? Number(x.toPrecision(12)) : x instanceof Date ? x.toISOString() : x))
const sortRows = (rows: Record<string, unknown>[]) => rows.map(show).sort()

describe.each(TABLES)('append to a copy of $name', ({ dir }) => {
  const aws = testAws()
  const local = join(ICEBERG, dir)
  let io: FileIO
  let base: TableMetadata
  let basePath: string
  let next: TableMetadata
  let nextPath: string
  let added: DataFile
  let bucket: string

  beforeAll(async () => {
    bucket = await createTestBucket('floe-append')
    for (const f of files(local)) {
      await aws.s3.send(new PutObjectCommand({ Bucket: bucket, Key: `t/${relative(local, f)}`, Body: readFileSync(f) }))
    }
    const target = `s3://${bucket}/t`
    // Read the metadata's own location (s3a://warehouse/..., data/persistent/..., ./lineitem...) from the copy.
    const probe = await readTableMetadata(createFileIO(aws.clients), await findCurrentMetadataPath(createFileIO(aws.clients), target))
    const loc = probe.location.replace(/\/+$/, '')
    const map: [string, string][] = [[loc, target]]
    if (loc.startsWith('./')) map.push([loc.slice(2), target])
    io = withPathMap(createFileIO(aws.clients), map)
    const http = `${aws.endpoints.s3.replace(/\/+$/, '')}/${bucket}/t`
    const s3 = /^s3a?:\/\/([^/]+)(\/.*)?$/.exec(loc)
    routes.push(s3 ? [`https://${s3[1]}.s3.amazonaws.com${s3[2] ?? ''}`, http] : [loc, http])
    if (loc.startsWith('./')) routes.push([loc.slice(2), http])

    basePath = await findCurrentMetadataPath(io, loc)
    base = await readTableMetadata(io, basePath)
    const schema = currentSchema(base)
    const spec = defaultSpec(base)
    // Three rows sharing one partition tuple (all sample values of a column are equal or bucket alike).
    const rows = [0, 2, 4].map((i) => coerceRecord(schema, Object.fromEntries(schema.fields.map((f) => [f.name, sample(f, i % 2)])), { table: dir }).row)
    const parquet = await encodeParquet(schema, rows, { properties: base.properties })
    const partition = spec.fields.map((pf) => {
      const source = schema.fields.find((f) => f.id === pf['source-id'])!
      return applyTransform(pf.transform, source.type as string, rows[0]![source.name])
    })
    const filePath = `${loc}/data/floe-${randomUUID()}.parquet`
    await io.write(filePath, parquet.bytes)
    added = { content: 0, filePath, fileFormat: 'PARQUET', specId: spec['spec-id'], partition, recordCount: parquet.recordCount, fileSizeInBytes: parquet.bytes.length, ...parquet.metrics }
    next = await appendFiles(io, base, [added], { summary: { 'floe.test': 'round-trip' } })
    nextPath = newMetadataPath(next, basePath)
    const { metadata } = appendMetadataLog(next, { path: basePath, lastUpdatedMs: base['last-updated-ms'] })
    await writeTableMetadata(io, nextPath, metadata)
  })

  it('(a) our reader sees the old records plus the new ones, and the summary totals add up', async () => {
    const reread = await readTableMetadata(io, nextPath)
    const before = await liveDataFiles(io, base)
    const after = await liveDataFiles(io, reread)
    const count = (es: typeof after) => es.reduce((a, e) => a + e.dataFile.recordCount, 0)
    expect(after).toHaveLength(before.length + 1)
    expect(count(after)).toBe(count(before) + 3)
    const snap = currentSnapshot(reread)!
    expect(snap.summary).toMatchObject({ operation: 'append', 'added-data-files': '1', 'added-records': '3', 'floe.test': 'round-trip' })
    const parentTotal = currentSnapshot(base)?.summary['total-records']
    expect(snap.summary['total-records']).toBe(parentTotal === undefined ? undefined : String(BigInt(parentTotal) + 3n))
    expect(reread['metadata-log'].at(-1)?.['metadata-file']).toBe(basePath)
    expect(after.find((e) => e.dataFile.filePath === added.filePath)?.dataFile.partition).toEqual(added.partition)
  })

  it('keeps every snapshot id (all above 2^53) exact through read → append → write', async () => {
    const text = await readText(io, nextPath)
    const reread = await readTableMetadata(io, nextPath)
    expect(base.snapshots.length).toBeGreaterThan(0)
    for (const s of base.snapshots) {
      expect(s['snapshot-id'] > 2n ** 53n).toBe(true)
      expect(text).toContain(`"snapshot-id": ${s['snapshot-id']}`)
    }
    expect(reread.snapshots.slice(0, -1)).toEqual(base.snapshots)
    expect(currentSnapshot(reread)!['parent-snapshot-id']).toBe(currentSnapshot(base)!['snapshot-id'])
  })

  it('keeps the format version (v1 stays v1-valid, v2 gets the next sequence number) and gzip metadata stays gzip', async () => {
    expect(nextPath.endsWith('.gz.metadata.json')).toBe(basePath.endsWith('.gz.metadata.json'))
    const raw = parseJson(await readText(io, nextPath)) as Record<string, unknown>
    const snap = currentSnapshot(next)!
    expect(raw['format-version']).toBe(base['format-version'])
    expect(base['format-version'] === 1 ? [raw.schema !== undefined, raw['partition-spec'] !== undefined, snap['sequence-number']] : [snap['sequence-number']]).toEqual(
      base['format-version'] === 1 ? [true, true, undefined] : [base['last-sequence-number']! + 1n],
    )
    expect(serializeTableMetadata(next)).toContain('"main"')
    expect(next.refs.main!['snapshot-id']).toBe(snap['snapshot-id'])
  })

  it('(b) icebird reads over HTTP the same rows as the live data files hold', async () => {
    const http = `${aws.endpoints.s3.replace(/\/+$/, '')}/${bucket}/t`
    const name = nextPath.slice(nextPath.lastIndexOf('/') + 1)
    // icebird cannot gunzip metadata (.gz.metadata.json, kept for gzip tables): hand it the JSON it would have fetched.
    const metadata = nextPath.endsWith('.gz.metadata.json') ? JSON.parse(await readText(io, nextPath)) : undefined
    const viaIcebird = await icebergRead({ tableUrl: http, metadataFileName: name, metadata })
    const direct: Record<string, unknown>[] = []
    const ours: Record<string, unknown>[] = []
    const fields = currentSchema(next).fields
    const names = fields.map((f) => f.name)
    for (const e of await liveDataFiles(io, next)) {
      const bytes = await io.read(e.dataFile.filePath)
      const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
      const rows = (await parquetReadObjects({ file, compressors })) as Record<string, unknown>[]
      // Columns by Parquet field id (a renamed column keeps its id), else by name.
      const byId = new Map(parquetMetadata(file).schema.filter((el) => el.field_id !== undefined).map((el) => [el.field_id!, el.name]))
      const mapped = rows.map((r) => Object.fromEntries(fields.map((f) => [f.name, r[byId.get(f.id) ?? f.name]])))
      direct.push(...mapped)
      if (e.dataFile.filePath === added.filePath) ours.push(...mapped)
    }
    const icebirdRows = (viaIcebird as Record<string, unknown>[]).map((r) => Object.fromEntries(names.map((n) => [n, r[n]])))
    expect(icebirdRows).toHaveLength(direct.length)
    const a = sortRows(icebirdRows)
    const b = sortRows(direct)
    expect(a.filter((row, i) => row !== b[i]).slice(0, 3)).toEqual([])
    const mine = new Set(ours.map(show))
    expect(ours).toHaveLength(3)
    expect(icebirdRows.filter((r) => mine.has(show(r)))).toHaveLength(3)
  })

  it('(c) the new manifest list and manifest decode with plain avsc and carry field ids', async () => {
    const snap = currentSnapshot(next)!
    const list = await plainDecode(await io.read(snap['manifest-list']!))
    expect(fieldsWithoutIds(list.schema)).toEqual([])
    const ours = (await snapshotManifests(io, snap)).filter((m) => m.addedSnapshotId === snap['snapshot-id'])
    expect(ours).toHaveLength(1)
    expect(list.records.map((r) => r.manifest_path)).toContain(ours[0]!.manifestPath)
    const manifest = await plainDecode(await io.read(ours[0]!.manifestPath))
    expect(fieldsWithoutIds(manifest.schema)).toEqual([])
    expect(manifest.records).toHaveLength(1)
    expect((manifest.records[0]!.data_file as Record<string, unknown>).file_path).toBe(added.filePath)
    expect((manifest.records[0]!.data_file as Record<string, unknown>).record_count).toBe('3')
  })
})

describe('a new Floe table (no fixture) written twice', () => {
  it('is read by icebird over HTTP with every row of both appends', async () => {
    const aws = testAws()
    const bucket = await createTestBucket('floe-new')
    const io = createFileIO(aws.clients)
    const location = `s3://${bucket}/db/events`
    const { md, path } = await writeDailyEventsTable(io, location, ['2024-05-01', '2024-05-02'])
    expect(path).toMatch(/\/metadata\/00002-[0-9a-f-]+\.metadata\.json$/)
    const http = `${aws.endpoints.s3.replace(/\/+$/, '')}/${bucket}/db/events`
    routes.push([`https://${bucket}.s3.amazonaws.com/db/events`, http])
    const rows = (await icebergRead({ tableUrl: http, metadataFileName: path.slice(path.lastIndexOf('/') + 1) })) as Record<string, unknown>[]
    expect(rows.map((r) => `${String(r.id)}:${String(r.name)}`).sort()).toEqual(['0:r00', '10:r10', '11:r11', '1:r01'])
    expect(currentSnapshot(md)!.summary['total-records']).toBe('4')
    expect(md['metadata-log']).toHaveLength(2)
  })
})
