/**
 * Shared setup of the tests on a real broker: a pipeline (fresh bucket, control and catalog
 * tables, a pipeline name of its own) whose routes add the `_kafka` column, so the independent
 * reader of test/chaos/verify.ts can tell every row's topic, partition and offset; producers and
 * a plain consumer on the broker the global setup started.
 */
import { randomUUID } from 'node:crypto'
import type { Admin } from 'kafkajs'
import { createClients, type AwsClients } from '../../lib/clients.js'
import { loadConfig, type FloeConfig, type SettingName } from '../../lib/config.js'
import { createFileIO } from '../../lib/io/index.js'
import type { FileIO } from '../../lib/io/types.js'
import { kafkaClient, type KafkaConnection } from '../../lib/local/kafka-client.js'
import { ensureTopics } from '../../lib/local/kafka-produce.js'
import { readCheckpoints, readDeadLetters, readTable } from '../chaos/verify.js'
import { createTestBucket, createTestCatalogTable, createTestControlTable, testAws } from '../helpers/aws.js'

export const NAMESPACE = 'kt'

export function connection(): KafkaConnection {
  const bootstrap = process.env.KAFKA_TEST_BOOTSTRAP
  if (!bootstrap) throw new Error('KAFKA_TEST_BOOTSTRAP is not set: run these tests with `npm run test:kafka`')
  return { brokers: [bootstrap], clientId: 'floe-test' }
}

/** A topic name of this test: letters, digits and _ only, so it is also the table name. */
export const topicName = (prefix: string) => `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 10)}`

export async function withAdmin<T>(fn: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = kafkaClient(connection()).admin()
  await admin.connect()
  try {
    return await fn(admin)
  } finally {
    await admin.disconnect()
  }
}

export async function createTopic(topic: string, partitions: number, configs: Record<string, string> = {}): Promise<void> {
  await withAdmin((admin) => ensureTopics(admin, new Map([[topic, partitions]]), configs))
}

export interface TestPipeline {
  config: FloeConfig
  clients: AwsClients
  io: FileIO
  bucket: string
  /** The FLOE_* settings of this pipeline (for a child process's environment). */
  settings: Record<string, string>
  /** Table rows of a topic (table named after it): "topic-partition@offset" → count. */
  rows(topic: string): Promise<Map<string, number>>
  deadLetters(topic: string): Promise<Map<string, { count: number; reason: string }>>
  checkpoints(partitions: string[]): Promise<Map<string, bigint | undefined>>
}

export async function testPipeline(topics: string[], extra: Partial<Record<SettingName, string>> = {}, routes: Record<string, unknown> = {}): Promise<TestPipeline> {
  const aws = testAws()
  const [bucket, controlTable, catalogTable] = await Promise.all([createTestBucket('floe-kafka'), createTestControlTable(), createTestCatalogTable()])
  const pipeline = `kafka-${randomUUID().slice(0, 8)}`
  const settings: Partial<Record<SettingName, string>> = {
    FLOE_PIPELINE: pipeline,
    FLOE_WAREHOUSE: `s3://${bucket}/warehouse`,
    FLOE_DLQ: `s3://${bucket}/dead-letters`,
    FLOE_CONTROL_TABLE: controlTable,
    FLOE_CATALOG_TABLE: catalogTable,
    FLOE_COMMIT_BACKOFF_MS: '20',
    FLOE_KAFKA_BATCHING_WINDOW_MS: '200',
    FLOE_KAFKA_RETRY_BACKOFF_MS: '50',
    FLOE_ROUTES: JSON.stringify({
      defaultNamespace: NAMESPACE,
      routes: topics.map((topic) => ({ topic, table: topic })),
      tableDefaults: { kafkaMetadata: ['topic', 'partition', 'offset'] },
      ...routes,
    }),
    // A committer killed while holding a lease must not block the next one for long.
    FLOE_LEASE_TTL_SECONDS: '3',
    ...extra,
  }
  const config = loadConfig(process.env, settings)
  const clients = createClients({ endpoints: aws.endpoints, maxAttempts: 3 })
  return {
    config,
    clients,
    io: createFileIO(clients),
    bucket,
    settings: settings as Record<string, string>,
    rows: async (topic) => (await readTable(aws.ddb, aws.s3, catalogTable, NAMESPACE, topic.toLowerCase()))?.rows ?? new Map(),
    deadLetters: (topic) => readDeadLetters(aws.s3, `s3://${bucket}/dead-letters/${encodeURIComponent(pipeline)}/${encodeURIComponent(topic)}`),
    checkpoints: (partitions) => readCheckpoints(aws.ddb, controlTable, pipeline, partitions),
  }
}

/** What the broker serves a read_committed consumer now, read with a plain kafkajs consumer: "topic-partition@offset" → value (null: tombstone). */
export async function readTopic(topic: string, opts: { readUncommitted?: boolean; idleMs?: number } = {}): Promise<Map<string, string | null>> {
  const kafka = kafkaClient(connection())
  const ends = await withAdmin((admin) => admin.fetchTopicOffsets(topic))
  const consumer = kafka.consumer({ groupId: `reader-${randomUUID()}`, readUncommitted: opts.readUncommitted ?? false, maxWaitTimeInMs: 100 })
  const out = new Map<string, string | null>()
  const seen = new Map<number, bigint>()
  await consumer.connect()
  try {
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) out.set(`${topic}-${batch.partition}@${m.offset}`, m.value === null ? null : m.value.toString('utf8'))
        seen.set(batch.partition, BigInt(batch.lastOffset()) + 1n)
      },
    })
    const deadline = Date.now() + 30_000
    while (ends.some((e) => BigInt(e.high) > BigInt(e.low) && (seen.get(e.partition) ?? 0n) < BigInt(e.high))) {
      if (Date.now() > deadline) throw new Error(`reading ${topic}: not at the end after 30 s`)
      await new Promise((r) => setTimeout(r, 100))
    }
  } finally {
    await consumer.disconnect()
  }
  return out
}

/** Offsets of one partition in a set of "topic-partition@offset" ids, ascending. */
export function offsetsOf(ids: Iterable<string>, partitionKey: string): bigint[] {
  return [...ids].filter((id) => id.startsWith(`${partitionKey}@`)).map((id) => BigInt(id.slice(id.indexOf('@') + 1))).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}
