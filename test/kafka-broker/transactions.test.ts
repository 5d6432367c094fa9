/**
 * Transactions on a real broker: a transactional producer commits some transactions and aborts
 * others. The mapping (and the poller) read read_committed, so the table must hold exactly the
 * committed records — read back by the independent reader — and the offsets of a partition have
 * gaps (transaction markers and aborted records), which the writer's checkpoints step over.
 */
import { describe, expect, it } from 'vitest'
import { kafkaClient } from '../../lib/local/kafka-client.js'
import { runKafkaPipeline } from '../../lib/local/kafka-pipeline.js'
import { connection, createTopic, offsetsOf, readTopic, testPipeline, topicName } from './support.js'

describe('a transactional producer', () => {
  it('the table holds exactly the committed transactions; offsets have gaps; checkpoints pass the markers', async () => {
    const topic = topicName('tx')
    await createTopic(topic, 2)
    const producer = kafkaClient(connection()).producer({ transactionalId: `floe-test-${topic}`, idempotent: true, maxInFlightRequests: 1 })
    await producer.connect()
    const committed = new Set<string>()
    const aborted = new Set<string>()
    try {
      for (let t = 0; t < 8; t++) {
        const tx = await producer.transaction()
        const messages = Array.from({ length: 5 }, (_, i) => ({ partition: i % 2, key: `k${t}-${i}`, value: JSON.stringify({ t, i, committed: t % 3 !== 1 }) }))
        const meta = await tx.send({ topic, messages })
        const ids: string[] = []
        for (const m of meta) {
          const n = messages.filter((x) => x.partition === m.partition).length
          for (let k = 0; k < n; k++) ids.push(`${topic}-${m.partition}@${BigInt(m.baseOffset!) + BigInt(k)}`)
        }
        if (t % 3 === 1) {
          await tx.abort()
          ids.forEach((id) => aborted.add(id))
        } else {
          await tx.commit()
          ids.forEach((id) => committed.add(id))
        }
      }
    } finally {
      await producer.disconnect()
    }
    // The broker agrees: a read_committed reader sees exactly the committed ones.
    expect(new Set((await readTopic(topic)).keys())).toEqual(committed)

    const p = await testPipeline([topic])
    const run = await runKafkaPipeline(p.config, p.clients, p.io, { connection: connection(), topics: [topic], groupId: `g-${topic}`, batchSize: 7, commitEveryMs: 500 })
    expect(run.delivered).toBe(committed.size)

    const rows = await p.rows(topic)
    expect(new Set(rows.keys())).toEqual(committed)
    expect([...rows.values()].every((n) => n === 1)).toBe(true)
    for (const id of aborted) expect(rows.has(id)).toBe(false)
    expect((await p.deadLetters(topic)).size).toBe(0)

    for (const partition of [0, 1]) {
      const key = `${topic}-${partition}`
      const offsets = offsetsOf(committed, key)
      // Gaps: each transaction is followed by a marker, aborted ones leave their records too.
      const gaps = offsets.slice(1).filter((o, i) => o !== offsets[i]! + 1n)
      expect(gaps.length).toBeGreaterThan(0)
      const checkpoint = (await p.checkpoints([key])).get(key)
      expect(checkpoint).toBe(offsets.at(-1)! + 1n)
    }
  })
})
