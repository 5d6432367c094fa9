import { describe, expect, it } from 'vitest'
import { EventSourceMapping, KafkaLog, MAX_PAYLOAD_BYTES, type KafkaEvent } from '../../lib/local/esm.js'

const enc = new TextEncoder()

function fill(log: KafkaLog, topic: string, partitions: number, perPartition: number, gap = 1n) {
  for (let p = 0; p < partitions; p++) {
    let offset = 0n
    for (let i = 0; i < perPartition; i++) {
      log.append({ topic, partition: p, offset, timestamp: 1_700_000_000_000 + i, key: null, value: enc.encode(JSON.stringify({ p, i })) })
      offset += gap
    }
  }
}

const offsetsOf = (e: KafkaEvent) => Object.values(e.records).flat().map((r) => `${r.topic}-${r.partition}@${r.offset}`)

describe('event source mapping simulator', () => {
  it('delivers every record once, in order per partition, in batches of at most batchSize', async () => {
    const log = new KafkaLog()
    fill(log, 'clicks', 3, 250, 3n)
    const seen: string[] = []
    const sizes: number[] = []
    const esm = new EventSourceMapping(log, async (e) => {
      sizes.push(Object.values(e.records).flat().length)
      seen.push(...offsetsOf(e))
    }, { batchSize: 100 })
    await esm.drain({ concurrency: 2 })
    expect(seen).toHaveLength(750)
    expect(new Set(seen).size).toBe(750)
    expect(Math.max(...sizes)).toBeLessThanOrEqual(100)
    for (let p = 0; p < 3; p++) {
      const offsets = seen.filter((s) => s.startsWith(`clicks-${p}@`)).map((s) => Number(s.split('@')[1]))
      expect(offsets).toEqual([...offsets].sort((a, b) => a - b))
    }
    expect(esm.positions.get('clicks-0')).toBe(748n)
  })

  it('retries a failed batch from the same position, re-batched smaller when asked', async () => {
    const log = new KafkaLog()
    fill(log, 't', 1, 40)
    let calls = 0
    const firsts: string[] = []
    const esm = new EventSourceMapping(log, async (e) => {
      calls++
      firsts.push(offsetsOf(e)[0]!)
      if (calls === 1) throw new Error('boom')
    }, { batchSize: 20, rebatch: 'split' })
    const result = await esm.drain()
    expect(firsts[0]).toBe('t-0@0')
    expect(firsts[1]).toBe('t-0@0')
    expect(result.failures).toBe(1)
    expect(esm.lag()).toBe(0)
  })

  it('closes a batch before the 6 MB payload limit', () => {
    const log = new KafkaLog()
    const big = new Uint8Array(1024 * 1024)
    for (let i = 0; i < 10; i++) log.append({ topic: 'big', partition: 0, timestamp: 0, key: null, value: big })
    const esm = new EventSourceMapping(log, async () => {}, { batchSize: 10_000 })
    const batch = esm.nextBatch()
    expect(batch.length).toBeGreaterThan(0)
    expect(batch.length).toBeLessThan(10)
    expect(JSON.stringify({ records: batch.map((r) => Buffer.from(r.value!).toString('base64')) }).length).toBeLessThan(MAX_PAYLOAD_BYTES)
  })
})
