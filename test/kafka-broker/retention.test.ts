/**
 * The local broker and records with old timestamps (the demo stream, --input files): its own
 * broker with a persisted log, records dated 30 days back, then a restart, after which the
 * broker's retention check runs within a second (log.initial.task.delay.ms). Under Kafka's
 * 7-day default they are deleted and a consumer resumes past them without a word — which made
 * `floe start --kafka` lose the demo's records at random. Both settings are run, so the test
 * shows the check really ran.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { kafkaClient } from '../../lib/local/kafka-client.js'
import { startKafkaBroker } from '../../lib/local/kafka-broker.js'
import { logProducer } from '../../lib/local/kafka-produce.js'

const RECORDS = 20
const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

/** Produce old records, restart the broker, wait past its first retention check; the log's start and end offsets. */
async function offsetsAfterRestart(retentionHours: number | undefined): Promise<{ low: string; high: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'floe-kafka-retention-'))
  dirs.push(dataDir)
  const opts = { dataDir, heapMb: 256, retentionHours }
  const first = await startKafkaBroker(opts)
  try {
    const producer = await logProducer({ brokers: [first.bootstrap] }, new Map([['old', 1]]))
    const at = Date.now() - 30 * 86_400_000
    await producer.send(Array.from({ length: RECORDS }, (_, i) => ({ topic: 'old', partition: 0, offset: BigInt(i), timestamp: at + i, key: null, value: new TextEncoder().encode(`r${i}`) })))
    await producer.close()
  } finally {
    await first.stop()
  }
  const second = await startKafkaBroker(opts)
  try {
    await new Promise((r) => setTimeout(r, 4_000))
    const admin = kafkaClient({ brokers: [second.bootstrap] }).admin()
    await admin.connect()
    try {
      const [p] = await admin.fetchTopicOffsets('old')
      return { low: p!.low, high: p!.high }
    } finally {
      await admin.disconnect()
    }
  } finally {
    await second.stop()
  }
}

describe('the local broker keeps old records', () => {
  it('by default, across a restart and its retention check', async () => {
    expect(await offsetsAfterRestart(undefined)).toEqual({ low: '0', high: String(RECORDS) })
  })

  it('deletes them only when FLOE_KAFKA_BROKER_RETENTION_HOURS asks for it', async () => {
    expect(await offsetsAfterRestart(168)).toEqual({ low: String(RECORDS), high: String(RECORDS) })
  })
})
