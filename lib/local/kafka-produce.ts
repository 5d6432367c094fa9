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

/** Produce every record of `log` (per partition, in offset order). Returns how many were acknowledged. */
export async function produceLog(connection: KafkaConnection, log: KafkaLog, opts: { chunk?: number } = {}): Promise<number> {
  const kafka = kafkaClient(connection)
  const admin = kafka.admin()
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false })
  await Promise.all([admin.connect(), producer.connect()])
  try {
    const partitions = new Map<string, number>()
    const lists = log.partitionKeys().map((key) => log.records(key))
    for (const list of lists) {
      const r = list[0]
      if (r) partitions.set(r.topic, Math.max(partitions.get(r.topic) ?? 0, r.partition + 1))
    }
    await ensureTopics(admin, partitions)
    let sent = 0
    const chunk = opts.chunk ?? 1_000
    for (const list of lists) {
      for (let i = 0; i < list.length; i += chunk) {
        const part = list.slice(i, i + chunk)
        await producer.send({ topic: part[0]!.topic, acks: -1, messages: part.map(toMessage) })
        sent += part.length
      }
    }
    return sent
  } finally {
    await Promise.all([producer.disconnect(), admin.disconnect()])
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
