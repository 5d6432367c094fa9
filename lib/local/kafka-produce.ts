/**
 * Producing to a real broker: the demo stream (or --input records) of a KafkaLog, each record
 * to its own partition, with an idempotent producer (acks=all). The broker assigns offsets:
 * the log's own offsets only fix the order within a partition.
 */
import type { Admin } from 'kafkajs'
import { kafkaClient, type KafkaConnection } from './kafka-client.js'
import type { KafkaLog, LogRecord } from './kafka-log.js'

/** Create the topics that do not exist yet (with at least `partitions` each); extra options as topic configs. */
export async function ensureTopics(admin: Admin, topics: Map<string, number>, configs: Record<string, string> = {}): Promise<void> {
  const existing = new Set(await admin.listTopics())
  const create = [...topics].filter(([t]) => !existing.has(t))
  if (create.length > 0) {
    await admin.createTopics({
      waitForLeaders: true,
      topics: create.map(([topic, n]) => ({ topic, numPartitions: n, replicationFactor: 1, configEntries: Object.entries(configs).map(([name, value]) => ({ name, value })) })),
    })
  }
  const grow: { topic: string; count: number }[] = []
  for (const t of (await admin.fetchTopicMetadata({ topics: [...topics.keys()] })).topics) {
    const want = topics.get(t.name) ?? 0
    if (t.partitions.length < want) grow.push({ topic: t.name, count: want })
  }
  if (grow.length > 0) await admin.createPartitions({ topicPartitions: grow })
}

/** The topics of a log, with how many partitions each needs. */
export function topicsOf(log: KafkaLog): Map<string, number> {
  const partitions = new Map<string, number>()
  for (const key of log.partitionKeys()) {
    const r = log.records(key)[0]
    if (r) partitions.set(r.topic, Math.max(partitions.get(r.topic) ?? 0, r.partition + 1))
  }
  return partitions
}

/** Every record of a log in the order it was generated (timestamp order; offset order within a partition). */
export function inTimeOrder(log: KafkaLog): LogRecord[] {
  return log.partitionKeys().flatMap((key) => [...log.records(key)]).sort((a, b) => a.timestamp - b.timestamp)
}

/**
 * A producer for a log's records: `send` produces records in the order given (one request per
 * topic and chunk); `close` disconnects. Topics are created first when missing.
 */
export async function logProducer(connection: KafkaConnection, topics: Map<string, number>): Promise<{ send(records: readonly LogRecord[]): Promise<number>; close(): Promise<void> }> {
  const kafka = kafkaClient(connection)
  const admin = kafka.admin()
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false })
  await Promise.all([admin.connect(), producer.connect()])
  try {
    await ensureTopics(admin, topics)
  } finally {
    await admin.disconnect()
  }
  return {
    send: async (records) => {
      const byTopic = new Map<string, LogRecord[]>()
      for (const r of records) byTopic.set(r.topic, [...(byTopic.get(r.topic) ?? []), r])
      for (const [topic, list] of byTopic) {
        for (let i = 0; i < list.length; i += 1_000) await producer.send({ topic, acks: -1, messages: list.slice(i, i + 1_000).map(toMessage) })
      }
      return records.length
    },
    close: () => producer.disconnect(),
  }
}

export function toMessage(r: LogRecord) {
  const headers: Record<string, Buffer[]> = {}
  for (const h of r.headers ?? []) (headers[h.key] ??= []).push(Buffer.from(h.value))
  return {
    partition: r.partition,
    key: r.key === null ? null : Buffer.from(r.key),
    value: r.value === null ? null : Buffer.from(r.value),
    timestamp: String(r.timestamp),
    headers,
  }
}
