import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createFileIO } from '../../lib/io/index.js'
import type { KafkaRecord } from '../../lib/kafka/event.js'
import { deadLetterPath, writeDeadLetters, type DeadLetter } from '../../lib/writer/dead-letters.js'
import { testAws } from '../helpers/aws.js'

const record = (offset: bigint, partition = 0, topic = 'orders'): KafkaRecord => ({
  topic,
  partition,
  offset,
  timestamp: 1_714_521_600_000,
  timestampType: 'CREATE_TIME',
  key: new Uint8Array([107]),
  value: new TextEncoder().encode('{bad'),
  headers: [{ key: 'h', value: new Uint8Array([1, 2]) }],
  rawKey: 'aw==',
  rawValue: 'e2JhZA==',
})

describe('dead letters', () => {
  const dirs: string[] = []
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
  })
  const dlq = () => {
    const dir = mkdtempSync(join(tmpdir(), 'floe-dlq-'))
    dirs.push(dir)
    return { dir, url: `file://${dir}` }
  }

  it('keys objects by pipeline, topic, partition and offset, zero-padded to sort', () => {
    expect(deadLetterPath('s3://b/dlq/', 'p1', 'orders.eu', 3, 42n)).toBe('s3://b/dlq/p1/orders.eu/3/00000000000000000042.ndjson')
  })

  it('writes one NDJSON object per dead record with everything needed to replay, and a retry overwrites it', async () => {
    const { dir, url } = dlq()
    const io = createFileIO(testAws().clients)
    const letters: DeadLetter[] = [
      { record: record(9n), reason: 'bad json', stage: 'decode' },
      { record: record(7n), reason: "table db.o: field 'n' expected long, got string \"x\"", table: 'db.o', stage: 'coerce' },
      { record: record(7n), reason: "table db.p: field 'n' expected long, got string \"x\"", table: 'db.p', stage: 'coerce' },
      { record: record(100n, 1), reason: 'no route', stage: 'route' },
    ]
    const paths = await writeDeadLetters(io, url, 'pipe', letters)
    expect(paths).toEqual([
      `${url}/pipe/orders/0/00000000000000000007.ndjson`,
      `${url}/pipe/orders/0/00000000000000000009.ndjson`,
      `${url}/pipe/orders/1/00000000000000000100.ndjson`,
    ])
    const text = readFileSync(join(dir, 'pipe/orders/0/00000000000000000007.ndjson'), 'utf8')
    const lines = text.trim().split('\n').map((l) => JSON.parse(l))
    // One record that failed for two tables: one object, a line per table.
    expect(lines.map((l) => l.table)).toEqual(['db.o', 'db.p'])
    expect(lines[0]).toEqual({
      pipeline: 'pipe',
      topic: 'orders',
      partition: 0,
      offset: '7',
      timestamp: 1_714_521_600_000,
      timestampType: 'CREATE_TIME',
      key: 'aw==',
      value: 'e2JhZA==',
      headers: [{ key: 'h', value: 'AQI=' }],
      table: 'db.o',
      stage: 'coerce',
      reason: "table db.o: field 'n' expected long, got string \"x\"",
    })
    // The same batch again (in another order): same keys, same bytes, no new objects.
    await writeDeadLetters(io, url, 'pipe', [...letters].reverse())
    expect(readFileSync(join(dir, 'pipe/orders/0/00000000000000000007.ndjson'), 'utf8')).toBe(text)
    expect(readdirSync(join(dir, 'pipe/orders/0'))).toHaveLength(2)
  })

  it('two differently aligned attempts over the same records leave each dead record in exactly one object', async () => {
    const { dir, url } = dlq()
    const io = createFileIO(testAws().clients)
    const dead = (o: bigint): DeadLetter => ({ record: record(o), reason: 'bad json', stage: 'decode' })
    // A zombie saw offsets 5 and 15 dead; the retry was re-batched and saw 15 and 25.
    await writeDeadLetters(io, url, 'pipe', [dead(5n), dead(15n)])
    await writeDeadLetters(io, url, 'pipe', [dead(15n), dead(25n)])
    const offsets = readdirSync(join(dir, 'pipe/orders/0'))
      .flatMap((f) => readFileSync(join(dir, 'pipe/orders/0', f), 'utf8').trim().split('\n'))
      .map((l) => JSON.parse(l).offset)
      .sort()
    expect(offsets).toEqual(['15', '25', '5'])
  })
})
