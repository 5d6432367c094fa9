/**
 * Exactly once at the writer (DESIGN.md invariants 1, 2, 8) under the local event-source-mapping
 * simulator: offsets with gaps, batches re-cut on retry (split and merge), invocations that fail
 * before doing anything, zombies (two writers on the same batch at once) and invocations whose success is lost (so the mapping redelivers what
 * was registered). At the end every (record, table) is in exactly one registered row, or the
 * record is a dead letter — never both, never neither.
 */
import { parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import { expect, it } from 'vitest'
import { EventSourceMapping } from '../../lib/local/esm.js'
import { KafkaLog } from '../../lib/local/kafka-log.js'
import { KAFKA_COLUMN } from '../../lib/writer/kafka-column.js'
import { writeBatch } from '../../lib/writer/pipeline.js'
import { deadLetterLines, listAll, registered, writerSetup } from './support.js'

function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

it('registers every record exactly once (or dead-letters it) through failures, zombies, lost answers and re-batching', async () => {
  const s = await writerSetup({
    FLOE_ROUTES: JSON.stringify({
      defaultNamespace: 'eo',
      routes: [{ field: 'kind', match: { even: '^even$', all: '.*' } }],
      tableDefaults: { kafkaMetadata: ['partition', 'offset'] },
    }),
  })
  const random = prng(42)
  const log = new KafkaLog()
  const expected = { even: new Set<string>(), all: new Set<string>(), dead: new Set<string>() }
  const enc = new TextEncoder()
  for (let partition = 0; partition < 3; partition++) {
    let offset = BigInt(partition * 5)
    for (let i = 0; i < 120; i++) {
      offset += BigInt(1 + Math.floor(random() * 3)) // gaps
      const id = `${partition}:${offset}`
      const bad = random() < 0.05
      const kind = i % 2 === 0 ? 'even' : 'odd'
      log.append({ topic: 'eo', partition, offset, timestamp: 1_714_521_600_000 + i, key: null, value: enc.encode(bad ? '{"kind":' : JSON.stringify({ kind, i })) })
      if (bad) expected.dead.add(id)
      else {
        expected.all.add(id)
        if (kind === 'even') expected.even.add(id)
      }
    }
  }
  let invocation = 0
  const esm = new EventSourceMapping(
    log,
    async (event) => {
      const n = ++invocation
      const roll = random()
      if (roll < 0.2) throw new Error(`invocation ${n}: crashed before doing anything`)
      if (roll < 0.35) {
        // A zombie: a timed-out invocation still running while its retry runs.
        await Promise.all([writeBatch(s.deps, event, { writerId: `w${n}` }), writeBatch(s.deps, structuredClone(event), { writerId: `z${n}` })])
        return
      }
      await writeBatch(s.deps, event, { writerId: `w${n}` })
      if (roll > 0.75) throw new Error(`invocation ${n}: answer lost after success`)
    },
    { batchSize: 13, rebatch: (attempt) => (attempt % 2 === 1 ? 'split' : 'merge') },
  )
  const { failures } = await esm.drain({ concurrency: 2 })
  expect(failures).toBeGreaterThan(0)

  const reg = await registered(s.control)
  for (const table of ['even', 'all'] as const) {
    const files = [...reg.get(`eo.${table}`)!.files.values()].flat()
    const seen: string[] = []
    for (const f of files) {
      const bytes = await s.io.read(f.filePath)
      const rows = (await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer, compressors })) as Record<string, unknown>[]
      for (const r of rows) {
        const k = r[KAFKA_COLUMN] as { partition: number; offset: bigint }
        seen.push(`${k.partition}:${k.offset}`)
      }
    }
    expect(seen.length).toBe(new Set(seen).size) // no duplicates
    expect(new Set(seen)).toEqual(expected[table]) // nothing missing
  }
  const dead = (await deadLetterLines(s.io, s.deps.config.dlq)).map((l) => `${l.partition}:${l.offset}`)
  expect(new Set(dead)).toEqual(expected.dead)
  for (const d of dead) expect(expected.all.has(d)).toBe(false)
  // No attempt left a file behind that is not registered (stale and fenced attempts deleted theirs).
  const onDisk = (await listAll(s.io, `${s.warehouse}/`)).filter((p) => p.endsWith('.parquet'))
  const registeredPaths = [...reg.values()].flatMap((r) => [...r.files.values()].flat().map((f) => f.filePath))
  expect(onDisk).toEqual(registeredPaths.sort())
})
