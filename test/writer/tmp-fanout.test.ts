import { it, expect } from 'vitest'
import { createWriterHandler } from '../../functions/writer.js'
import { kafkaEvent, registered, writerSetup } from './support.js'
import { lambdaContext } from './readback.js'
it('1000 tables', async () => {
  const s = await writerSetup({ FLOE_ROUTES: JSON.stringify({ routes: [{ tableFromField: 'type', namespace: 'dyn' }] }) })
  const handler = createWriterHandler({ ...s.deps, router: undefined })
  const n = Number(process.env.FANOUT ?? 1000)
  const records = Array.from({ length: n * 2 }, (_, i) => ({ topic: 'events', partition: 0, offset: i, value: { type: `t${i % n}`, i } }))
  const t0 = Date.now()
  const out = (await handler(kafkaEvent(records), lambdaContext('r', 900_000))) as { tables: unknown[]; deadLetters: number }
  const t1 = Date.now()
  const t2s = Date.now()
  const again = (await handler(kafkaEvent(records), lambdaContext('r2', 900_000))) as { outcome: string }
  console.log(JSON.stringify({ n, ms: t1 - t0, again: again.outcome, redeliveryMs: Date.now() - t2s, tables: out.tables.length, dead: out.deadLetters, rss: process.memoryUsage().rss >> 20 }))
  const reg = await registered(s.control)
  let total = 0
  for (const [, r] of reg) total += r.batches.reduce((a, b) => a + b.recordCount, 0)
  expect(total).toBe(n * 2)
}, 900_000)
