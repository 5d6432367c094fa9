/**
 * The poller's event-source-mapping behaviour on a real broker, observed at the handler: batch
 * size, the payload limit, per-partition order, the event shape, a failed batch retried with the
 * same records, and consumer-group offsets committed only after the handler succeeded. The
 * handler here records what it gets and fails on purpose (fault injection, not a mock of Kafka).
 */
import { describe, expect, it } from 'vitest'
import { parseKafkaEvent } from '../../lib/kafka/index.js'
import { kafkaClient } from '../../lib/local/kafka-client.js'
import { KafkaPoller } from '../../lib/local/kafka-poller.js'
import { connection, createTopic, topicName, withAdmin } from './support.js'

describe('the Kafka poller', () => {
  it('batches by count and payload, keeps partition order, retries a failed batch and commits only after success', async () => {
    const topic = topicName('poll')
    await createTopic(topic, 3)
    const producer = kafkaClient(connection()).producer({ idempotent: true, maxInFlightRequests: 1 })
    await producer.connect()
    // 300 small records and 6 of 2 KB: batches close at 40 records or before 5 KB of payload.
    await producer.send({ topic, acks: -1, messages: Array.from({ length: 300 }, (_, i) => ({ partition: i % 3, value: JSON.stringify({ i }), headers: { n: String(i) } })) })
    await producer.send({ topic, acks: -1, messages: Array.from({ length: 6 }, (_, i) => ({ partition: 0, value: JSON.stringify({ pad: 'x'.repeat(2_000), i }) })) })
    await producer.disconnect()

    const groupId = `g-${topic}`
    const events: { ok: boolean; ids: string[]; source: string; servers?: string }[] = []
    let failuresLeft = 2
    let committedWhileFailing: unknown
    const poller = new KafkaPoller({
      connection: connection(),
      topics: [topic],
      groupId,
      batchSize: 40,
      maxPayloadBytes: 5_000,
      batchingWindowMs: 100,
      retryBackoffMs: 20,
      invoke: async (event) => {
        const ids = parseKafkaEvent(event).map((r) => `${r.partition}@${r.offset}`)
        const e = event as { eventSource: string; bootstrapServers?: string }
        if (failuresLeft > 0) {
          failuresLeft--
          events.push({ ok: false, ids, source: e.eventSource })
          committedWhileFailing = await withAdmin((admin) => admin.fetchOffsets({ groupId, topics: [topic] }))
          throw new Error('injected failure')
        }
        events.push({ ok: true, ids, source: e.eventSource, servers: e.bootstrapServers })
      },
    })
    await poller.start()
    try {
      await poller.caughtUp({ timeoutMs: 120_000 })
    } finally {
      await poller.stop()
    }

    // The failed batch came back with the same records; nothing was committed meanwhile.
    expect(events[0]!.ok).toBe(false)
    expect(events[1]!.ids).toEqual(events[0]!.ids)
    expect(events[2]!.ids).toEqual(events[0]!.ids)
    expect(events[2]!.ok).toBe(true)
    expect((committedWhileFailing as { partitions: { offset: string }[] }[])[0]!.partitions.every((p) => p.offset === '-1')).toBe(true)

    const ok = events.filter((e) => e.ok)
    expect(ok.every((e) => e.source === 'SelfManagedKafka' && e.servers === connection().brokers[0])).toBe(true)
    expect(ok.every((e) => e.ids.length <= 40)).toBe(true)
    // The 2 KB records (offsets 100-105 of partition 0; ~2.9 KB each in base64): two do not fit under 5 KB with the envelope.
    const bigIn = (e: { ids: string[] }) => e.ids.filter((id) => id.startsWith('0@') && BigInt(id.slice(2)) >= 100n).length
    expect(ok.map(bigIn).filter((n) => n > 0)).toEqual([1, 1, 1, 1, 1, 1])
    // Every record exactly once among successful batches, in offset order per partition.
    const all = ok.flatMap((e) => e.ids)
    expect(all).toHaveLength(306)
    expect(new Set(all).size).toBe(306)
    for (const p of [0, 1, 2]) {
      const offsets = all.filter((id) => id.startsWith(`${p}@`)).map((id) => BigInt(id.slice(2)))
      expect(offsets).toEqual([...offsets].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)))
    }
    // And the group's offsets are at the end of each partition now.
    const group = await withAdmin((admin) => admin.fetchOffsets({ groupId, topics: [topic] }))
    expect(Object.fromEntries(group[0]!.partitions.map((p) => [p.partition, p.offset]))).toEqual({ 0: '106', 1: '100', 2: '100' })
    expect(poller.stats()).toMatchObject({ delivered: 306, failedBatches: 2, lag: 0 })
  })
})
