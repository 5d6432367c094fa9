/** The mapping simulator's on-failure destination (lib/local/esm.ts), as replay tests and the chaos harness use it. */
import { describe, expect, it } from 'vitest'
import { EventSourceMapping, onFailureRecord } from '../../lib/local/esm.js'
import { KafkaLog, type KafkaEvent } from '../../lib/local/kafka-log.js'
import { parseInvocationRecord } from '../../lib/replay/failed-batches.js'

describe('event source mapping on-failure destination', () => {
  it('after maxRetries the batch goes to the destination, the mapping moves on, and the next batch gets its own retries', async () => {
    const log = new KafkaLog()
    for (let i = 0n; i < 6n; i++) log.append({ topic: 't', partition: 0, offset: i, timestamp: 0, key: null, value: new TextEncoder().encode('{}') })
    const calls: bigint[] = []
    const parked: { event: KafkaEvent; attempts: number }[] = []
    const esm = new EventSourceMapping(
      log,
      async (event) => {
        const first = BigInt(event.records['t-0']![0]!.offset)
        calls.push(first)
        if (first === 0n) throw new Error('outage')
      },
      { batchSize: 3, maxRetries: 2, onFailure: async (event, attempts) => void parked.push({ event, attempts }) },
    )
    await esm.drain()
    expect(calls).toEqual([0n, 0n, 0n, 3n])
    expect(parked.map((p) => [p.attempts, p.event.records['t-0']!.map((r) => r.offset)])).toEqual([[3, [0, 1, 2]]])
    expect(esm.lag()).toBe(0)
    // The S3 destination's document carries the whole batch, which replay reads back.
    const doc = onFailureRecord(parked[0]!.event, parked[0]!.attempts)
    expect(doc).toMatchObject({ requestContext: { condition: 'RetryAttemptsExhausted', approximateInvokeCount: 3 }, version: '1.0', KafkaBatchInfo: { batchSize: 3 } })
    expect(parseInvocationRecord(JSON.stringify(doc), 'x').event.records).toEqual(parked[0]!.event.records)
  })
})
