/**
 * The writer's table budget at scale (FLOE_MAX_TABLES_PER_BATCH), through the real writer handler
 * on DynamoDB Local + s3rver: 1,000 dynamic tables reached from one partition register exactly
 * once over redeliveries. Apart from hostile.test.ts because it takes about two minutes on two
 * cores: `npm run test:slow` (vitest.slow.config.ts), which `.ci/run` also runs.
 */
import { describe, expect, it } from 'vitest'
import { createWriterHandler } from '../../functions/writer.js'
import type { WriterSummary } from '../../lib/writer/index.js'
import type { FloeError } from '../../lib/errors.js'
import { checkpoints, kafkaEvent, registered, writerSetup, type EventRecord, type WriterSetup } from './support.js'
import { deadLines, lambdaContext } from './readback.js'

async function run(s: WriterSetup, records: EventRecord[], id = 'req-1'): Promise<WriterSummary> {
  const handler = createWriterHandler({ ...s.deps, router: undefined })
  return (await handler(kafkaEvent(records), lambdaContext(id, 300_000))) as WriterSummary
}

const ev = (offset: number, value: unknown, partition = 0, topic = 'events'): EventRecord => ({ topic, partition, offset, value })

describe('the table budget at scale, through the writer handler', () => {
  it('1,000 distinct dynamic tables in one partition register exactly once: 200 tables per invocation, in offset segments, the rest redelivered; no dead letters', async () => {
    const s = await writerSetup({ FLOE_ROUTES: JSON.stringify({ routes: [{ tableFromField: 'type', namespace: 'dyn' }] }) })
    // Offsets 0..399 reach t0..t199 twice; 400..1199 reach t200..t999 once each.
    const records = [...Array.from({ length: 400 }, (_, i) => ev(i, { type: `t${i % 200}`, i })), ...Array.from({ length: 1_000 - 200 }, (_, i) => ev(400 + i, { type: `t${200 + i}` }))]
    // The mapping redelivers the same batch after every retryable failure, as Lambda does.
    const deferred: string[] = []
    for (let attempt = 1; ; attempt++) {
      expect(attempt).toBeLessThanOrEqual(5)
      try {
        const out = await run(s, records, `req-${attempt}`)
        expect(out).toMatchObject({ outcome: 'registered', deadLetters: 0, belowCheckpoint: 1_000 })
        break
      } catch (err) {
        deferred.push(`${(err as Error).name} retryable=${(err as FloeError).retryable}: ${(err as Error).message}`)
      }
    }
    expect(deferred).toHaveLength(4)
    expect(deferred.every((d) => d.startsWith('BatchDeferredError retryable=true: '))).toBe(true)
    expect(deferred[0]).toMatch(/more than FLOE_MAX_TABLES_PER_BATCH=200 tables: 200 tables registered, events-0 from offset 400 wait/)
    const reg = await registered(s.control)
    expect(reg.size).toBe(1_000)
    let total = 0
    for (const [, r] of reg) total += r.batches.reduce((n, b) => n + b.recordCount, 0)
    expect(total).toBe(1_200)
    // The first invocation's offset segments hold at most 99 tables each, one transaction each:
    // 0..98 reach t0..t98, 99..197 t99..t197, 198..296 t198, t199, t0..t96, and so on, up to the cut at 400.
    const first = [...reg].filter(([t]) => Number(t.slice('dyn.t'.length)) < 200)
    const covered = first.flatMap(([, r]) => r.batches.flatMap((b) => b.ranges.map((x) => `${x.firstOffset}-${x.nextOffset}`)))
    expect([...new Set(covered)].sort()).toEqual(['0-99', '198-297', '297-396', '396-400', '99-198'])
    expect(await deadLines(s)).toHaveLength(0)
    expect(await checkpoints(s.control)).toEqual({ 'events-0': '1200' })
    expect(await run(s, records, 'req-again')).toMatchObject({ outcome: 'nothing-new', belowCheckpoint: 1200 })
  }, 600_000)

})
