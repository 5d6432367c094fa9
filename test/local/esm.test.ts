import { describe, expect, it } from 'vitest'
import { EventSourceMapping } from '../../lib/local/esm.js'
import { KafkaLog, MAX_PAYLOAD_BYTES, buildEvent, type KafkaEvent } from '../../lib/local/kafka-log.js'

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
    expect(batch.closedBy).toBe('payload')
    expect(batch.records.length).toBeGreaterThan(0)
    expect(batch.records.length).toBeLessThan(10)
    expect(JSON.stringify(buildEvent(batch.records)).length).toBeLessThan(MAX_PAYLOAD_BYTES)
  })
})

describe('batching window (on the mapping\'s clock)', () => {
  /** One record every `every` ms on each partition, from time 0. */
  function trickle(log: KafkaLog, partitions: number, perPartition: number, every: number) {
    for (let i = 0; i < perPartition; i++) {
      for (let p = 0; p < partitions; p++) log.append({ topic: 't', partition: p, timestamp: 0, key: null, value: enc.encode(`${p}:${i}`), availableAt: i * every })
    }
  }

  async function batchesOf(log: KafkaLog, opts: { batchSize: number; batchingWindowMs: number }, concurrency = 1) {
    // Invocations start, and outcomes are reported, in lane order: zip them.
    const events: string[][] = []
    const closed: (string | undefined)[] = []
    const esm = new EventSourceMapping(log, async (e) => {
      events.push(offsetsOf(e))
    }, opts)
    await esm.drain({ concurrency, onBatch: (o) => closed.push(o.closedBy) })
    return { batches: events.map((offsets, i) => ({ offsets, closedBy: closed[i] })), clock: esm.clock }
  }

  it('invokes with what has arrived when the window passes before the batch fills', async () => {
    const log = new KafkaLog()
    trickle(log, 1, 10, 100) // t-0@i readable at i × 100 ms
    const { batches, clock } = await batchesOf(log, { batchSize: 100, batchingWindowMs: 250 })
    // Opened at 0 by offset 0, closed at 250: offsets 0-2; the next opens at 300 with offset 3, and so on.
    expect(batches.map((b) => b.offsets.length)).toEqual([3, 3, 3, 1])
    expect(batches.every((b) => b.closedBy === 'window')).toBe(true)
    expect(batches[1]!.offsets[0]).toBe('t-0@3')
    expect(clock).toBe(900 + 250)
  })

  it('closes on count when a burst fills the batch inside the window', async () => {
    const log = new KafkaLog()
    trickle(log, 1, 50, 0) // all at once
    const { batches } = await batchesOf(log, { batchSize: 20, batchingWindowMs: 10_000 })
    expect(batches.map((b) => [b.offsets.length, b.closedBy])).toEqual([[20, 'count'], [20, 'count'], [10, 'window']])
  })

  it('fills a batch from several partitions in arrival order, each partition in offset order', async () => {
    const log = new KafkaLog()
    trickle(log, 2, 6, 10)
    const { batches } = await batchesOf(log, { batchSize: 4, batchingWindowMs: 1_000 })
    expect(batches[0]!.offsets.sort()).toEqual(['t-0@0', 't-0@1', 't-1@0', 't-1@1'])
    expect(batches.flatMap((b) => b.offsets)).toHaveLength(12)
    for (const p of [0, 1]) {
      const offsets = batches.flatMap((b) => b.offsets).filter((o) => o.startsWith(`t-${p}@`)).map((o) => Number(o.split('@')[1]))
      expect(offsets).toEqual([0, 1, 2, 3, 4, 5])
    }
  })

  it('gives the same batches on every run (the clock is virtual)', async () => {
    const run = async () => {
      const log = new KafkaLog()
      trickle(log, 3, 40, 7)
      return (await batchesOf(log, { batchSize: 9, batchingWindowMs: 30 }, 2)).batches
    }
    const [a, b] = [await run(), await run()]
    expect(a).toEqual(b)
    expect(new Set(a.map((x) => x.closedBy))).toEqual(new Set(['count', 'window']))
  })

  it('refuses a record readable before the one at the previous offset', () => {
    const log = new KafkaLog()
    log.append({ topic: 't', partition: 0, timestamp: 0, key: null, value: null, availableAt: 50 })
    expect(() => log.append({ topic: 't', partition: 0, timestamp: 0, key: null, value: null, availableAt: 10 })).toThrow('t-0: offset 1 available at 10 ms, before offset 0 (50 ms)')
  })
})
