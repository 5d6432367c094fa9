/**
 * Shared setup for replay tests: a pipeline on DynamoDB Local + s3rver whose WRITER talks to the
 * emulators through fault proxies (test/chaos/proxy.ts), so a test can refuse its writes for a
 * while (an outage); the replay, the committer and the reader talk to the emulators directly.
 */
import { createClients, destroyClients } from '../../lib/clients.js'
import { runCommitter } from '../../lib/commit/committer.js'
import type { CommitDeps } from '../../lib/commit/types.js'
import { loadConfig, type FloeConfig, type SettingName } from '../../lib/config.js'
import { createControlContext } from '../../lib/control/context.js'
import { DynamoDbCatalog } from '../../lib/catalog/dynamodb.js'
import { createDecoders } from '../../lib/codec/index.js'
import { createFileIO } from '../../lib/io/index.js'
import { EventSourceMapping, onFailureRecord } from '../../lib/local/esm.js'
import { KafkaLog } from '../../lib/local/kafka-log.js'
import { writeBatch } from '../../lib/writer/pipeline.js'
import { compileRoutes } from '../../lib/writer/routing.js'
import type { WriterDeps } from '../../lib/writer/types.js'
import { FaultProxy, type Rule } from '../chaos/proxy.js'
import { readDeadLetters, readTable } from '../chaos/verify.js'
import { createTestBucket, createTestCatalogTable, createTestControlTable, testAws } from '../helpers/aws.js'

export const NAMESPACE = 'rp'

export interface ReplaySetup {
  config: FloeConfig
  /** Writer behind the proxies. */
  writer: WriterDeps
  /** Same pipeline, direct clients: what `floe replay` builds. */
  direct: WriterDeps
  commit: CommitDeps
  proxies: { s3: FaultProxy; dynamodb: FaultProxy }
  bucket: string
  catalogTable: string
  stop(): Promise<void>
}

export const routes = (extra: object[] = [], unrouted = 'dead-letter') =>
  JSON.stringify({
    defaultNamespace: NAMESPACE,
    tableDefaults: { autoCreate: true, evolveSchema: true, kafkaMetadata: ['topic', 'partition', 'offset'] },
    routes: extra.length ? extra : [{ table: '{topic}' }],
    unrouted,
  })

export async function replaySetup(settings: Partial<Record<SettingName, string>> = {}): Promise<ReplaySetup> {
  const aws = testAws()
  const [bucket, controlTable, catalogTable] = await Promise.all([createTestBucket(), createTestControlTable(), createTestCatalogTable()])
  const warehouse = `s3://${bucket}/warehouse`
  const config = loadConfig(
    {},
    {
      FLOE_WAREHOUSE: warehouse,
      FLOE_CONTROL_TABLE: controlTable,
      FLOE_CATALOG_TABLE: catalogTable,
      FLOE_PIPELINE: 'rp',
      FLOE_DLQ: `s3://${bucket}/dead-letters`,
      FLOE_FAILED_BATCHES: `s3://${bucket}/failed-batches`,
      FLOE_ROUTES: routes(),
      ...settings,
    },
  )
  const proxies = { s3: new FaultProxy(aws.endpoints.s3, 's3'), dynamodb: new FaultProxy(aws.endpoints.dynamodb, 'dynamodb') }
  const [s3, dynamodb] = await Promise.all([proxies.s3.start(), proxies.dynamodb.start()])
  const proxied = createClients({ endpoints: { s3, dynamodb }, maxAttempts: 2 })
  const deps = (clients: typeof aws.clients): WriterDeps => {
    const io = createFileIO(clients)
    return {
      config,
      io,
      catalog: new DynamoDbCatalog({ ddb: clients.ddb, tableName: catalogTable, warehouse, io }),
      control: createControlContext(config, clients.doc, io),
      decoders: createDecoders(config, clients),
      router: compileRoutes(config.routes),
    }
  }
  const direct = deps(aws.clients)
  return {
    config,
    writer: deps(proxied),
    direct,
    commit: { config, io: direct.io, catalog: new DynamoDbCatalog({ ddb: aws.ddb, tableName: catalogTable, warehouse, io: direct.io }), control: direct.control },
    proxies,
    bucket,
    catalogTable,
    async stop() {
      destroyClients(proxied)
      await Promise.all([proxies.s3.stop(), proxies.dynamodb.stop()])
    },
  }
}

/** Records `{id, v}` on `topic`, partitions 0..parts-1, offsets with gaps. */
export function produce(topic: string, parts: number, perPartition: number, value: (i: number) => unknown = (i) => ({ id: i, v: `r${i}` })): { log: KafkaLog; ids: string[] } {
  const log = new KafkaLog()
  const ids: string[] = []
  const enc = new TextEncoder()
  for (let p = 0; p < parts; p++) {
    let offset = 3n
    for (let i = 0; i < perPartition; i++) {
      const v = value(i)
      log.append({ topic, partition: p, offset, timestamp: Date.UTC(2026, 10, 1) + i * 1000, key: enc.encode(`k${i}`), value: enc.encode(typeof v === 'string' ? v : JSON.stringify(v)) })
      ids.push(`${topic}-${p}@${offset}`)
      offset += i % 7 === 3 ? 2n : 1n
    }
  }
  return { log, ids }
}

/** The mapping with an S3 on-failure destination in FLOE_FAILED_BATCHES, `maxRetries` retries. */
export function mapping(s: ReplaySetup, log: KafkaLog, maxRetries: number, batchSize = 10): EventSourceMapping {
  let n = 0
  return new EventSourceMapping(log, (event) => writeBatch(s.writer, event), {
    batchSize,
    maxRetries,
    onFailure: async (event, attempts) => {
      const key = `${s.config.failedBatches}/aws/lambda/esm-local/${String(++n).padStart(4, '0')}-${crypto.randomUUID()}`
      await s.direct.io.write(key, JSON.stringify(onFailureRecord(event, attempts)), { contentType: 'application/json' })
    },
  })
}

/** Refuse every write of the writer's (DynamoDB transactions and S3 puts) while `on()` says so. */
export function outage(s: ReplaySetup, on: () => boolean): void {
  const refuse: Rule = (req) => (on() && (req.op === 'TransactWriteItems' || req.op === 'PutObject') ? { action: 'error5xx' } : { action: 'forward' })
  s.proxies.s3.rule = refuse
  s.proxies.dynamodb.rule = refuse
}

export async function commitAll(s: ReplaySetup): Promise<void> {
  for (let i = 0; i < 5; i++) {
    const run = await runCommitter(s.commit)
    if (run.failures > 0) throw new Error(`commit failed: ${run.results.map((r) => r.error?.message).join('; ')}`)
    if (run.results.every((r) => r.status === 'idle')) return
  }
}

export async function tableRows(s: ReplaySetup, name: string) {
  const aws = testAws()
  return readTable(aws.ddb, aws.s3, s.catalogTable, NAMESPACE, name)
}

export async function deadLetters(s: ReplaySetup) {
  return readDeadLetters(testAws().s3, `s3://${s.bucket}/dead-letters/rp`)
}
