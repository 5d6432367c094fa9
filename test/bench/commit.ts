/**
 * Commit cost: wall time and S3 / DynamoDB requests (counted with SDK middleware) for one
 * committer run that commits B pending batches into a table that already has H snapshots.
 *
 * History, built cheaply but readable: for each H, H real Avro manifests (one fake data file
 * each) and ONE real manifest list listing all H of them — what a table looks like after H fast
 * appends with no manifest compaction — are written once to s3rver. Each measured table gets
 * metadata with H crafted snapshots (each with a full Floe summary, `floe.offsets.<pipeline>`
 * included), the newest pointing at that manifest list; older snapshots name manifest lists that
 * are not written (time travel to them would fail; the committer never reads them). The
 * metadata-log starts empty. Pending batches are registered with lib/control registerBatches,
 * one per call (one writer invocation each), each with one small fake-but-valid DataFile.
 */
import { randomUUID } from 'node:crypto'
import type { AwsClients } from '../../lib/clients.js'
import { createCatalog, ensureNamespace } from '../../lib/catalog/index.js'
import { runCommitter } from '../../lib/commit/committer.js'
import { loadConfig, type FloeConfig } from '../../lib/config.js'
import { registerBatches } from '../../lib/control/batches.js'
import { createControlContext } from '../../lib/control/context.js'
import { encodeDataFile } from '../../lib/iceberg/datafile-json.js'
import { encodeManifest } from '../../lib/iceberg/manifest.js'
import { encodeManifestList } from '../../lib/iceberg/manifest-list.js'
import type { DataFile, ManifestFile, Snapshot, TableMetadata } from '../../lib/iceberg/types.js'
import { createFileIO } from '../../lib/io/index.js'
import type { FileIO } from '../../lib/io/types.js'
import { ensureBucket } from '../../lib/local/init.js'
import type { Schema } from '../../lib/schema/types.js'
import { mapBounded } from '../../lib/concurrency.js'
import { median, RequestCounter, round } from './common.js'

export interface CommitResult {
  snapshots: number
  batches: number
  runs: number
  ms: number
  s3: Record<string, number>
  ddb: Record<string, number>
  s3Requests: number
  ddbRequests: number
  wcu: number
  rcu: number
  metadataBytes: number
  /** Where the time went: reads and manifest writes up to the swap, the catalog swap, the marks after it (ms). */
  phases?: { prepare: number; swap: number; mark: number }
}

const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: false, type: 'long' },
    { id: 2, name: 'ts', required: false, type: 'timestamptz' },
    { id: 3, name: 'city', required: false, type: 'string' },
  ],
}

const fakeFile = (location: string, tag: string): DataFile => ({
  content: 0,
  filePath: `${location}/data/${tag}.parquet`,
  fileFormat: 'PARQUET',
  specId: 0,
  partition: [],
  recordCount: 1000,
  fileSizeInBytes: 40_000,
  columnSizes: new Map([[1, 9000], [2, 9000], [3, 20_000]]),
  valueCounts: new Map([[1, 1000], [2, 1000], [3, 1000]]),
  nullValueCounts: new Map([[1, 0], [2, 0], [3, 0]]),
})

interface History {
  snapshots: number
  listPath: string
  manifests: ManifestFile[]
}

/** H manifests and the manifest list of the newest snapshot, written once per H. */
async function writeHistory(io: FileIO, root: string, h: number): Promise<History> {
  const dir = `${root}/history-${h}`
  const spec = { 'spec-id': 0, fields: [] }
  const manifests = await mapBounded(
    Array.from({ length: h }, (_, k) => k),
    32,
    async (k): Promise<ManifestFile> => {
      const snapshotId = BigInt(k + 1)
      const bytes = encodeManifest({ formatVersion: 2, spec, schema: SCHEMA, content: 0 }, [
        { status: 1, snapshotId, sequenceNumber: null, fileSequenceNumber: null, dataFile: fakeFile(dir, `h${k}`) },
      ])
      const path = `${dir}/metadata/m-${k}.avro`
      await io.write(path, bytes)
      return {
        manifestPath: path,
        manifestLength: bytes.length,
        partitionSpecId: 0,
        content: 0,
        sequenceNumber: BigInt(k + 1),
        minSequenceNumber: BigInt(k + 1),
        addedSnapshotId: snapshotId,
        addedFilesCount: 1,
        existingFilesCount: 0,
        deletedFilesCount: 0,
        addedRowsCount: 1000n,
        existingRowsCount: 0n,
        deletedRowsCount: 0n,
        partitions: [],
        keyMetadata: null,
      }
    },
  )
  manifests.reverse() // newest first, as appends leave them
  const listPath = `${dir}/metadata/snap-${h}-1-${randomUUID()}.avro`
  await io.write(listPath, encodeManifestList(2, { snapshotId: BigInt(h), parentSnapshotId: h > 1 ? BigInt(h - 1) : undefined, sequenceNumber: BigInt(h) }, manifests))
  return { snapshots: h, listPath, manifests }
}

/** Metadata of `base` with the crafted history on top. */
function withHistory(base: TableMetadata, hist: History, pipeline: string): TableMetadata {
  const t0 = Date.now() - hist.snapshots * 60_000
  const snapshots: Snapshot[] = []
  for (let k = 1; k <= hist.snapshots; k++) {
    const id = BigInt(k)
    snapshots.push({
      'snapshot-id': id,
      ...(k > 1 ? { 'parent-snapshot-id': id - 1n } : {}),
      'sequence-number': id,
      'timestamp-ms': t0 + k * 60_000,
      'manifest-list': k === hist.snapshots ? hist.listPath : `${base.location}/metadata/snap-${k}-1-unwritten.avro`,
      summary: {
        operation: 'append',
        'added-data-files': '1',
        'added-records': '1000',
        'added-files-size': '40000',
        'changed-partition-count': '1',
        'total-records': String(k * 1000),
        'total-files-size': String(k * 40_000),
        'total-data-files': String(k),
        'total-delete-files': '0',
        'total-position-deletes': '0',
        'total-equality-deletes': '0',
        [`floe.offsets.${pipeline}`]: JSON.stringify({ 'history-0': String(k * 1000) }),
        'floe.commit-id': randomUUID(),
        'floe.valid-through-ts': String(t0 + k * 60_000),
      },
      'schema-id': 0,
    })
  }
  const last = BigInt(hist.snapshots)
  return {
    ...base,
    'last-sequence-number': last,
    'current-snapshot-id': last,
    snapshots,
    'snapshot-log': snapshots.map((s) => ({ 'timestamp-ms': s['timestamp-ms'], 'snapshot-id': s['snapshot-id'] })),
    refs: { main: { 'snapshot-id': last, type: 'branch' } },
  }
}

/** B pending batches, one registerBatches call each, over 16 partitions (16 writers at a time). */
async function registerPending(config: FloeConfig, clients: AwsClients, io: FileIO, table: string, location: string, b: number): Promise<void> {
  const ctx = createControlContext(config, clients.doc, io)
  const lanes = Math.min(16, b)
  await Promise.all(
    Array.from({ length: lanes }, async (_, p) => {
      let prev: bigint | undefined
      for (let k = p; k < b; k += lanes) {
        const first = prev ?? 0n
        const next = first + 100n
        const key = `bench-${p}`
        const outcome = await registerBatches(ctx, {
          pipeline: config.pipeline,
          writerId: `w${k}`,
          expected: new Map([[key, prev]]),
          next: new Map([[key, next]]),
          batches: [
            {
              table,
              files: [encodeDataFile(fakeFile(location, `b${k}`))],
              schemaId: 0,
              specId: 0,
              ranges: [{ topic: 'bench', partition: p, firstOffset: first, nextOffset: next, records: 1000, maxTimestamp: Date.now() }],
              recordCount: 1000,
              bytes: 40_000,
            },
          ],
        })
        if (outcome !== 'registered') throw new Error(`commit bench: registration ${k} was ${outcome}`)
        prev = next
      }
    }),
  )
}

export async function benchCommit(
  clients: AwsClients,
  tables: { control: string; catalog: string },
  opts: { snapshots: number[]; batches: number[]; runs: number; env?: Record<string, string> },
  log: (s: string) => void = () => undefined,
): Promise<CommitResult[]> {
  const stamp = Date.now().toString(36)
  const bucket = `floe-bench-${stamp}`
  await ensureBucket(clients.s3, bucket)
  const warehouse = `s3://${bucket}/wh`
  const counter = new RequestCounter()
  counter.attach(clients)
  const io = createFileIO(clients)
  const out: CommitResult[] = []
  for (const h of opts.snapshots) {
    const t = performance.now()
    const hist = await writeHistory(io, `${warehouse}/_history`, h)
    log(`  history of ${h} snapshots written in ${round((performance.now() - t) / 1000, 1)} s`)
    for (const b of opts.batches) {
      const results: CommitResult[] = []
      for (let run = 0; run < opts.runs; run++) {
        const pipeline = `c${stamp}-${h}-${b}-${run}`
        const config = loadConfig(
          {},
          { FLOE_PIPELINE: pipeline, FLOE_WAREHOUSE: warehouse, FLOE_CONTROL_TABLE: tables.control, FLOE_CATALOG_TABLE: tables.catalog, ...opts.env },
        )
        const catalog = createCatalog(config, clients, io)
        const id = { namespace: `commit${stamp}`, name: `t_${h}_${b}_${run}` }
        await ensureNamespace(catalog, id.namespace)
        const created = await catalog.createTable(id, { schema: SCHEMA })
        const committed = await catalog.commit(id, { base: created.metadataLocation, metadata: withHistory(created.metadata, hist, pipeline) })
        const metadataBytes = (await io.read(committed.metadataLocation)).byteLength
        await registerPending(config, clients, io, `${id.namespace}.${id.name}`, created.metadata.location, b)

        counter.reset()
        const t0 = performance.now()
        let beforeSwap = t0
        let afterSwap = t0
        const hooks = { beforeSwap: () => void (beforeSwap = performance.now()), afterSwap: () => void (afterSwap = performance.now()) }
        const res = await runCommitter({ config, io, catalog, control: createControlContext(config, clients.doc, io) }, { tables: [`${id.namespace}.${id.name}`], hooks })
        const ms = performance.now() - t0
        const phases = { prepare: round(beforeSwap - t0), swap: round(afterSwap - beforeSwap), mark: round(t0 + ms - afterSwap) }
        const r = res.results[0]
        if (res.failures > 0 || r?.status !== 'committed' || r.batches !== b) {
          throw new Error(`commit bench: H=${h} B=${b}: ${r?.status} ${r?.batches} batches ${r?.error?.message ?? ''}`)
        }
        const snap = counter.snapshot()
        const pick = (prefix: string) => Object.fromEntries(Object.entries(snap).filter(([k]) => k.startsWith(prefix)).map(([k, v]) => [k.slice(prefix.length), v]))
        results.push({
          snapshots: h,
          batches: b,
          runs: opts.runs,
          ms,
          s3: pick('s3:'),
          ddb: pick('ddb:'),
          s3Requests: counter.total('s3:'),
          ddbRequests: counter.total('ddb:'),
          wcu: counter.wcu,
          rcu: counter.rcu,
          metadataBytes,
          phases,
        })
      }
      const mid = median(results.map((r) => r.ms))
      const rep = results.find((r) => r.ms === mid) ?? results[0]!
      out.push({ ...rep, ms: round(mid), wcu: round(rep.wcu, 1), rcu: round(rep.rcu, 1) })
      const ph = rep.phases!
      log(`  commit ${b} batches into ${h} snapshots: ${round(mid)} ms (prepare ${ph.prepare}, swap ${ph.swap}, mark ${ph.mark}), ${rep.s3Requests} S3 + ${rep.ddbRequests} DynamoDB requests`)
    }
  }
  return out
}
