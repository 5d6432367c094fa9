/**
 * The pipeline while Kafka moves: producers writing while the poller runs (follow mode), and a
 * poller process killed — once between the writer's registration and the consumer group's
 * offset commit, once at a random moment — and restarted. Whatever the group's offsets say,
 * every record is in the table exactly once, by Floe's own checkpoints.
 */
import { spawn } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { kafkaClient } from '../../lib/local/kafka-client.js'
import { runKafkaPipeline } from '../../lib/local/kafka-pipeline.js'
import { connection, createTopic, readTopic, testPipeline, topicName, withAdmin, type TestPipeline } from './support.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function produce(topic: string, from: number, count: number, partitions: number): Promise<void> {
  const producer = kafkaClient(connection()).producer({ idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  try {
    const messages = Array.from({ length: count }, (_, k) => ({ partition: (from + k) % partitions, key: `k${from + k}`, value: JSON.stringify({ i: from + k, at: Date.now() }) }))
    await producer.send({ topic, acks: -1, messages })
  } finally {
    await producer.disconnect()
  }
}

function expectExactlyOnce(rows: Map<string, number>, expected: Iterable<string>): void {
  const want = new Set(expected)
  expect(new Set(rows.keys())).toEqual(want)
  const twice = [...rows].filter(([, n]) => n !== 1)
  expect(twice).toEqual([])
}

/** Runs test/kafka-broker/poller-child.ts; resolves with how it ended and what it printed. */
function child(p: TestPipeline, args: Record<string, unknown>, opts: { killWhen?: (line: string) => boolean; killDelayMs?: number } = {}): Promise<{ signal: NodeJS.Signals | null; code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', 'test/kafka-broker/poller-child.ts', JSON.stringify(args)], { env: { ...process.env, ...p.settings }, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let killing = false
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const lines = out.trim().split('\n')
      if (!killing && opts.killWhen?.(lines.at(-1)!)) {
        killing = true
        setTimeout(() => proc.kill('SIGKILL'), opts.killDelayMs ?? 0)
      }
    })
    proc.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()))
    const timer = setTimeout(() => proc.kill('SIGKILL'), 150_000)
    proc.on('error', reject)
    proc.on('exit', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, out })
    })
  })
}

describe('the Kafka poller while Kafka moves', () => {
  it('records produced while the pipeline runs land exactly once', async () => {
    const topic = topicName('live')
    await createTopic(topic, 2)
    await produce(topic, 0, 100, 2)
    const p = await testPipeline([topic])
    const abort = new AbortController()
    let lastLag = -1
    const running = runKafkaPipeline(p.config, p.clients, p.io, {
      connection: connection(),
      topics: [topic],
      groupId: `g-${topic}`,
      batchSize: 40,
      follow: true,
      signal: abort.signal,
      commitEveryMs: 300,
      onProgress: (_, s) => (lastLag = s.lag),
    })
    let produced = 100
    for (let wave = 0; wave < 5; wave++) {
      await sleep(400)
      await produce(topic, produced, 60, 2)
      produced += 60
    }
    const expected = [...(await readTopic(topic)).keys()]
    expect(expected.length).toBe(produced)
    for (let i = 0; i < 120 && (await p.rows(topic)).size < produced; i++) await sleep(500)
    abort.abort()
    const result = await running
    expect(result.delivered).toBe(produced)
    expect(result.poller.lag).toBe(0)
    expect(lastLag).toBeGreaterThanOrEqual(0)
    expectExactlyOnce(await p.rows(topic), expected)
  })

  it('a poller killed mid-batch and restarted: exactly once, though the group offsets lag behind the checkpoints', async () => {
    const topic = topicName('kill')
    const partitions = 3
    await createTopic(topic, partitions)
    await produce(topic, 0, 900, partitions)
    const expected = [...(await readTopic(topic)).keys()]
    const p = await testPipeline([topic])
    const groupId = `g-${topic}`
    const keys = Array.from({ length: partitions }, (_, i) => `${topic}-${i}`)
    const base = { topics: [topic], groupId, batchSize: 60, eventShape: 'msk' }

    // 1. Killed after the writer registered its third batch, before the group's commit.
    const first = await child(p, { ...base, killAtCommit: 3 })
    expect(first.signal, first.out).toBe('SIGKILL')
    const checkpoints = await p.checkpoints(keys)
    const group = await withAdmin((admin) => admin.fetchOffsets({ groupId, topics: [topic] }))
    const committed = new Map(group[0]!.partitions.map((x) => [`${topic}-${x.partition}`, BigInt(x.offset)]))
    const behind = keys.filter((k) => (committed.get(k) ?? -1n) < (checkpoints.get(k) ?? 0n))
    expect(behind.length).toBeGreaterThan(0)

    // 2. Killed at a random moment after its second batch: inside the writer's next batch, or
    //    between its registration and the group's commit, or while the committer runs.
    const second = await child(p, base, { killWhen: (line) => line.startsWith('progress') && JSON.parse(line.slice(9)).invoked >= 2, killDelayMs: 20 + Math.floor(Math.random() * 400) })
    expect(second.signal, second.out).toBe('SIGKILL')

    // 3. A run to the end.
    const third = await child(p, base)
    expect(third.code, third.out).toBe(0)

    expectExactlyOnce(await p.rows(topic), expected)
    expect((await p.deadLetters(topic)).size).toBe(0)
  })
})
