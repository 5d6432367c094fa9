/**
 * Shared setup for writer tests: MSK events built from the real sample in test/events, writer
 * dependencies on DynamoDB Local + s3rver (fresh bucket, control table per call), and readers of
 * what the writer left behind (pending batches, checkpoints, dead letters, data files).
 */
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadConfig, type SettingName } from '../../lib/config.js'
import { listCheckpoints } from '../../lib/control/checkpoints.js'
import { createControlContext } from '../../lib/control/context.js'
import { dataFileFromJSON } from '../../lib/iceberg/datafile-json.js'
import { loadBatchFiles, readPendingBatches, listPendingTables } from '../../lib/control/pending.js'
import type { ControlContext, PendingBatch } from '../../lib/control/types.js'
import type { DataFile } from '../../lib/iceberg/types.js'
import { createFileIO } from '../../lib/io/index.js'
import type { FileIO } from '../../lib/io/types.js'
import { compileRoutes } from '../../lib/writer/routing.js'
import type { WriterDeps } from '../../lib/writer/types.js'
import { DynamoDbCatalog } from '../../lib/catalog/dynamodb.js'
import { createDecoders } from '../../lib/codec/index.js'
import { createTestBucket, createTestCatalogTable, createTestControlTable, testAws } from '../helpers/aws.js'

const here = dirname(fileURLToPath(import.meta.url))
const sample = JSON.parse(readFileSync(join(here, '..', 'events', 'msk-base.json'), 'utf8')) as {
  records: Record<string, Record<string, unknown>[]>
}

export interface EventRecord {
  topic: string
  partition: number
  offset: bigint | number
  /** An object is sent as JSON; a string as raw UTF-8 (e.g. invalid JSON); bytes as they are; null as a tombstone. */
  value: unknown
  timestamp?: number
  key?: string | null
}

/** An `aws:kafka` event shaped like the real sample (same envelope, record fields and header format). */
export function kafkaEvent(records: EventRecord[]): Record<string, unknown> {
  const template = structuredClone(Object.values(sample.records)[0]![0]!)
  const base = JSON.parse(readFileSync(join(here, '..', 'events', 'msk-base.json'), 'utf8')) as Record<string, unknown>
  const grouped: Record<string, Record<string, unknown>[]> = {}
  for (const r of records) {
    const value = r.value === null ? null : typeof r.value === 'string' || r.value instanceof Uint8Array ? r.value : JSON.stringify(r.value)
    const rec = {
      ...structuredClone(template),
      topic: r.topic,
      partition: r.partition,
      offset: typeof r.offset === 'bigint' ? (r.offset <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(r.offset) : r.offset.toString()) : r.offset,
      timestamp: r.timestamp ?? 1_714_521_600_000,
      key: r.key === undefined ? template.key : r.key === null ? null : Buffer.from(r.key).toString('base64'),
      value: value === null ? null : Buffer.from(value).toString('base64'),
    }
    ;(grouped[`${r.topic}-${r.partition}`] ??= []).push(rec)
  }
  return { ...base, records: grouped }
}

export interface WriterSetup {
  deps: WriterDeps
  io: FileIO
  bucket: string
  warehouse: string
  control: ControlContext
  catalog: DynamoDbCatalog
}

/** Fresh bucket + control table (+ catalog table), a config with the given settings, real clients. */
export async function writerSetup(settings: Partial<Record<SettingName, string>> = {}): Promise<WriterSetup> {
  const aws = testAws()
  const [bucket, controlTable, catalogTable] = await Promise.all([createTestBucket(), createTestControlTable(), createTestCatalogTable()])
  const config = loadConfig({}, { FLOE_WAREHOUSE: `s3://${bucket}/warehouse`, FLOE_CONTROL_TABLE: controlTable, FLOE_CATALOG_TABLE: catalogTable, FLOE_PIPELINE: 'test', ...settings })
  // A FLOE_WAREHOUSE in `settings` (e.g. file://) wins for the catalog too.
  const warehouse = config.warehouse
  const io = createFileIO(aws.clients)
  const control: ControlContext = createControlContext(config, aws.doc, io)
  const catalog = new DynamoDbCatalog({ ddb: aws.ddb, tableName: catalogTable, warehouse, io })
  const decoders = createDecoders(config, aws.clients)
  const deps: WriterDeps = { config, io, catalog, control, decoders, router: compileRoutes(config.routes, config.limits) }
  return { deps, io, bucket, warehouse, control, catalog }
}

export interface Registered {
  batches: PendingBatch[]
  files: Map<string, DataFile[]>
}

/** Pending batches of every table, with their files. */
export async function registered(control: ControlContext, pipeline = 'test'): Promise<Map<string, Registered>> {
  const out = new Map<string, Registered>()
  for (const table of await listPendingTables(control, pipeline)) {
    const batches = await readPendingBatches(control, pipeline, table)
    out.set(table, { batches, files: await loadBatchFiles(control, pipeline, batches, dataFileFromJSON) })
  }
  return out
}

export async function checkpoints(control: ControlContext, pipeline = 'test'): Promise<Record<string, string>> {
  const items = await listCheckpoints(control, pipeline)
  return Object.fromEntries(items.map((i) => [`${i.topic}-${i.partition}`, i.next.toString()]))
}

/** Every object under a prefix. */
export async function listAll(io: FileIO, prefix: string): Promise<string[]> {
  const out: string[] = []
  for await (const f of io.list(prefix)) out.push(f.path)
  return out.sort()
}

/** Every dead-letter line under the DLQ. */
export async function deadLetterLines(io: FileIO, dlq: string): Promise<Record<string, unknown>[]> {
  const lines: Record<string, unknown>[] = []
  for (const path of await listAll(io, dlq)) {
    const text = Buffer.from(await io.read(path)).toString('utf8')
    for (const line of text.split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>)
  }
  return lines
}
