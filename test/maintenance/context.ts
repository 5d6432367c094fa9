/**
 * Tables with real Parquet data on the local endpoints, for compaction and expiry tests: each
 * `append` encodes rows with the writer's Parquet path, registers them as a pending batch and
 * commits it with the real committer. `readBack` reads the current snapshot WITHOUT Floe's
 * Iceberg code: manifest lists and manifests with a plain Avro reader, data with hyparquet.
 */
import { randomUUID } from 'node:crypto'
import { parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import { DynamoDbCatalog } from '../../lib/catalog/dynamodb.js'
import { parseTableId } from '../../lib/catalog/index.js'
import type { FileIO } from '../../lib/io/types.js'
import { testAws } from '../helpers/aws.js'
import type { FloeConfig } from '../../lib/config.js'
import { commitTable } from '../../lib/commit/table.js'
import { registerBatches } from '../../lib/control/batches.js'
import { readCheckpoints } from '../../lib/control/checkpoints.js'
import { parsePartitionBy } from '../../lib/iceberg/partition.js'
import type { DataFile, TableMetadata } from '../../lib/iceberg/types.js'
import { readManifest } from '../../lib/iceberg/manifest.js'
import { snapshotManifests } from '../../lib/iceberg/scan.js'
import type { Schema } from '../../lib/schema/types.js'
import { encodeParquet } from '../../lib/writer/columnar/index.js'
import { writeDataFile } from '../../lib/writer/files.js'
import { dataFilePath } from '../../lib/writer/index.js'
import type { MaintenanceDeps } from '../../lib/maintenance/types.js'
import { batchInput, range } from '../control/context.js'
import { testCommit, type TestCommit } from '../commit/context.js'
import { plainDecode } from '../helpers/plain-avro.js'

export const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'region', required: false, type: 'string' },
    { id: 3, name: 'ts', required: false, type: 'timestamptz' },
    { id: 4, name: 'tags', required: false, type: { type: 'list', 'element-id': 7, element: 'string', 'element-required': false } },
    { id: 5, name: 'payload', required: false, type: 'binary' },
    { id: 6, name: 'score', required: false, type: 'double' },
  ],
}

/** A row in the writer's coerced representation. */
export function row(id: number, region: string) {
  return {
    id: BigInt(id),
    region,
    ts: 1_700_000_000_000_000n + BigInt(id) * 1_001n,
    tags: id % 3 === 0 ? null : [`t${id % 7}`, `x${id}`],
    payload: id % 5 === 0 ? null : Buffer.from(`p-${id}`),
    score: id % 4 === 0 ? null : id / 8,
  }
}

/** One row as the independent reader sees it, for multiset comparison. */
export const rowKey = (r: Record<string, unknown>) =>
  JSON.stringify([String(r.id), r.region ?? null, r.ts === null || r.ts === undefined ? null : String(r.ts), r.tags ?? null, r.payload == null ? null : Buffer.from(r.payload as Uint8Array).toString(), r.score ?? null])

export interface MaintenanceTest {
  t: TestCommit
  deps: MaintenanceDeps
  /** Create a region-partitioned table with these properties. */
  table(properties?: Record<string, string>): Promise<string>
  /** Write one file per region group and commit them as one batch (one snapshot). */
  append(table: string, rows: ReturnType<typeof row>[]): Promise<DataFile[]>
  /** Rows of the current snapshot, read by plain Avro + hyparquet. */
  readBack(table: string): Promise<{ rows: string[]; files: { path: string; size: number; region: unknown }[] }>
}

/** `wrap` sees every table-file request (the catalog's too), e.g. to count them. */
export async function testMaintenance(overrides: Partial<FloeConfig> = {}, now?: () => number, wrap?: (io: FileIO) => FileIO): Promise<MaintenanceTest> {
  let t = await testCommit(overrides)
  if (wrap) {
    const io = wrap(t.deps.io)
    const catalog = new DynamoDbCatalog({ ddb: testAws().ddb, tableName: (t.catalog as DynamoDbCatalog).table, warehouse: t.config.warehouse, io })
    t = { ...t, catalog, deps: { ...t.deps, io, catalog, control: { ...t.deps.control, io } } }
  }
  const deps: MaintenanceDeps = { ...t.deps, now }
  const io = t.deps.io
  let offset = 0n
  return {
    t,
    deps,
    async table(properties = {}) {
      const name = `db.m_${randomUUID().slice(0, 8)}`
      await t.catalog.createTable(parseTableId(name), { schema: SCHEMA, spec: parsePartitionBy(SCHEMA, ['region']), properties })
      return name
    },
    async append(table, rows) {
      const { metadata } = await t.catalog.loadTable(parseTableId(table))
      const byRegion = new Map<string, typeof rows>()
      for (const r of rows) byRegion.set(r.region, [...(byRegion.get(r.region) ?? []), r])
      const files: DataFile[] = []
      let seq = 0
      for (const [region, group] of byRegion) {
        const encoded = await encodeParquet(SCHEMA, group, { properties: metadata.properties })
        files.push(await writeDataFile(io, dataFilePath(metadata, `region=${region}`, 'test', seq++), encoded, 0, [region]))
      }
      const key = 'events-0'
      const expected = await readCheckpoints(t.deps.control, t.config.pipeline, [{ topic: 'events', partition: 0 }])
      const first = expected.get(key) ?? offset
      const next = first + BigInt(rows.length)
      offset = next
      const outcome = await registerBatches(t.deps.control, {
        pipeline: t.config.pipeline,
        writerId: 'test-writer',
        expected,
        next: new Map([[key, next]]),
        batches: [batchInput(table, [range('events', 0, first, next)], files, 0, 0)],
      })
      if (outcome !== 'registered') throw new Error(`registration was ${outcome}`)
      const committed = await commitTable(t.deps, table)
      if (committed.status !== 'committed') throw new Error(`commit was ${committed.status}: ${committed.error?.message}`)
      return files
    },
    async readBack(table) {
      const { metadata } = await t.catalog.loadTable(parseTableId(table))
      const current = metadata.snapshots.find((s) => s['snapshot-id'] === metadata['current-snapshot-id'])
      const out = { rows: [] as string[], files: [] as { path: string; size: number; region: unknown }[] }
      if (!current) return out
      for (const m of (await plainDecode(await io.read(current['manifest-list']!))).records) {
        if (Number(m.content ?? 0) !== 0) continue
        for (const e of (await plainDecode(await io.read(m.manifest_path as string))).records) {
          if (Number(e.status) === 2) continue
          const df = e.data_file as Record<string, unknown>
          out.files.push({ path: df.file_path as string, size: Number(df.file_size_in_bytes), region: (df.partition as Record<string, unknown>).region })
        }
      }
      for (const f of out.files) {
        const bytes = await io.read(f.path)
        const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
        const rows = await parquetReadObjects({ file, compressors, utf8: false, parsers: { timestampFromMicroseconds: (v: bigint) => v } as never })
        for (const r of rows) out.rows.push(rowKey({ ...r, region: r.region === null || r.region === undefined ? null : Buffer.from(r.region as Uint8Array).toString(), tags: (r.tags as Uint8Array[] | null)?.map((x) => (x === null ? null : Buffer.from(x).toString())) ?? null }))
      }
      out.rows.sort()
      return out
    },
  }
}

/** Every file any snapshot of `md` reaches (manifest lists, manifests, live data files: a DELETED entry is a tombstone), checked to exist. */
export async function missingReferenced(io: FileIO, md: TableMetadata): Promise<string[]> {
  const missing: string[] = []
  for (const s of md.snapshots) {
    if (!(await io.exists(s['manifest-list']!))) missing.push(s['manifest-list']!)
    for (const m of await snapshotManifests(io, s)) {
      if (!(await io.exists(m.manifestPath))) missing.push(m.manifestPath)
      for (const e of await readManifest(io, m.manifestPath, { manifest: m })) if (e.status !== 2 && !(await io.exists(e.dataFile.filePath))) missing.push(e.dataFile.filePath)
    }
  }
  return [...new Set(missing)]
}

