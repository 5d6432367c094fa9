/**
 * The back-pressure check of a batch fanned out to many tables (lib/writer/prepare.ts): a table
 * without a fresh backlog note is counted over every pending shard, FLOE_SHARD_CONCURRENCY
 * queries at a time, and FLOE_BACKPRESSURE_TABLES tables at once — 50 tables at once were 400
 * DynamoDB requests in flight (docs/benchmarks.md). On DynamoDB Local.
 */
import { describe, expect, it } from 'vitest'
import type { ControlContext } from '../../lib/control/index.js'
import { checkBackpressure } from '../../lib/writer/prepare.js'
import { writerSetup } from './support.js'

describe('checkBackpressure over 50 tables', () => {
  it('counts every table over every shard with at most FLOE_BACKPRESSURE_TABLES × FLOE_SHARD_CONCURRENCY requests in flight', async () => {
    const s = await writerSetup({ FLOE_SHARD_CONCURRENCY: '4', FLOE_PENDING_SHARDS: '16', FLOE_BACKPRESSURE_TABLES: '6' })
    let inFlight = 0
    let most = 0
    let sent = 0
    const real = s.control.doc
    const doc = {
      send: async (command: never) => {
        sent++
        most = Math.max(most, ++inFlight)
        try {
          return await real.send(command)
        } finally {
          inFlight--
        }
      },
    } as unknown as ControlContext['doc']
    const deps = { ...s.deps, control: { ...s.control, doc } }
    const tables = new Set(Array.from({ length: 50 }, (_, i) => `ns.t${i}`))
    await checkBackpressure(deps, tables)
    // Per table: the backlog note (absent here), then each of the 16 shards counted.
    expect(sent).toBe(50 * (1 + 16))
    expect(most).toBeLessThanOrEqual(6 * 4)
    // Tables are still counted side by side, not one after another.
    expect(most).toBeGreaterThan(4)
  }, 120_000)
})
