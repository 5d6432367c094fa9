/**
 * `floe replay dead-letters` on the local endpoints: records dead-lettered for a missing route
 * are replayed, once the route exists, into the new table exactly once; records still bad stay
 * dead letters with their NEW reason, and a second replay neither duplicates nor loops.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../lib/config.js'
import { onFailureRecord } from '../../lib/local/esm.js'
import { buildEvent } from '../../lib/local/kafka-log.js'
import { replayFailedBatches } from '../../lib/replay/index.js'
import { writeBatch } from '../../lib/writer/pipeline.js'
import { replayDeadLetters } from '../../lib/replay/index.js'
import { compileRoutes } from '../../lib/writer/routing.js'
import { commitAll, deadLetters, mapping, produce, replaySetup, routes, tableRows, type ReplaySetup } from './support.js'

describe('replay of dead letters', () => {
  let s: ReplaySetup
  beforeAll(async () => {
    s = await replaySetup({ FLOE_ROUTES: routes([{ topic: 'orders', table: 'orders' }]) })
  }, 60_000)
  afterAll(async () => s?.stop())

  it('puts records dead-lettered for a missing route into the new table once; still-bad ones keep a new reason', async () => {
    // Every 5th refund has no `kind`: the route added later cannot place it either.
    const { log, ids } = produce('refunds', 2, 25, (i) => (i % 5 === 4 ? { id: i } : { id: i, kind: 'refunds', amount: i / 4 }))
    await mapping(s, log, -1).drain()
    const before = await deadLetters(s)
    expect(before.size).toBe(ids.length)
    expect([...before.values()].every((d) => d.reason === "no route matched topic 'refunds'")).toBe(true)

    // The fix: a route for the topic (table named by each record's `kind`).
    const fixed = loadConfig({}, { ...envOf(s), FLOE_ROUTES: routes([{ topic: 'orders', table: 'orders' }, { topic: 'refunds', tableFromField: 'kind' }]) })
    const deps = { ...s.direct, config: fixed, router: compileRoutes(fixed.routes) }
    const dry = await replayDeadLetters(deps, { topic: 'refunds', dryRun: true })
    expect(dry.results.every((r) => r.status === 'would-replay')).toBe(true)
    expect((await deadLetters(s)).size).toBe(ids.length)

    let n = 0
    const killed = await replayDeadLetters(deps, {
      topic: 'refunds',
      partition: 0,
      hooks: {
        beforeSource: () => {
          if (++n === 1) throw new Error('killed')
        },
      },
    }).catch((e: Error) => e)
    expect(killed).toBeInstanceOf(Error)
    const run = await replayDeadLetters(deps, { topic: 'refunds', stage: 'route', reasonMatch: /no route matched/ })
    expect(run.replayed).toBe(ids.length)
    expect(run.deadLetters).toBe(10)
    await commitAll(s)

    const t = (await tableRows(s, 'refunds'))!
    const bad = ids.filter((_, i) => i % 25 % 5 === 4)
    const good = ids.filter((id) => !bad.includes(id))
    expect(good.filter((id) => t.rows.get(id) !== 1)).toEqual([])
    expect(t.rows.size).toBe(good.length)
    const after = await deadLetters(s)
    expect([...after.keys()].sort()).toEqual([...bad].sort())
    for (const d of after.values()) expect(d.reason).toBe("no route matched topic 'refunds' (routes[1]: field 'kind' is missing)")
    expect(t.summary['floe.replay-id']).toBeDefined()

    // Run again: the replayed ones are gone from the store (never both), the still-bad ones are
    // tried once more (they have a new content), fail again and stay: no row, no duplicate.
    const again = await replayDeadLetters(deps, {})
    expect(again.results.map((r) => [r.status, r.rows, r.deadLetters])).toEqual(bad.map(() => ['replayed', 0, 1]))
    await commitAll(s)
    expect((await tableRows(s, 'refunds'))!.rows.size).toBe(good.length)
    expect((await deadLetters(s)).size).toBe(bad.length)
  }, 120_000)
})

describe('dead letters of a batch the mapping gave up on', () => {
  let s: ReplaySetup
  beforeAll(async () => {
    s = await replaySetup({ FLOE_ROUTES: routes([{ topic: 'orders', table: 'orders' }]) })
  }, 60_000)
  afterAll(async () => s?.stop())

  it('wait for the failed-batch replay, which removes those of records that are rows now (never both, never twice)', async () => {
    const { log, ids } = produce('late', 1, 6, (i) => ({ id: i, kind: 'late' }))
    const event = buildEvent([...log.records('late-0')])
    // An attempt dead-letters the records (no route yet), then its registration fails; the mapping parks the batch.
    s.proxies.dynamodb.rule = (req) => (req.op === 'TransactWriteItems' ? { action: 'error5xx' } : { action: 'forward' })
    await expect(writeBatch(s.writer, event)).rejects.toThrow(/TransactWriteItems|registering batches|5\d\d|InternalServerError|Service/)
    s.proxies.dynamodb.rule = () => ({ action: 'forward' })
    expect((await deadLetters(s)).size).toBe(6)
    await s.direct.io.write(`${s.config.failedBatches}/late-${crypto.randomUUID()}`, JSON.stringify(onFailureRecord(event, 11)))

    const fixed = loadConfig({}, { ...envOf(s), FLOE_ROUTES: routes([{ topic: 'orders', table: 'orders' }, { topic: 'late', table: 'late' }]) })
    const deps = { ...s.direct, config: fixed, router: compileRoutes(fixed.routes) }
    await expect(replayDeadLetters(deps)).rejects.toThrow(/1 failed batches .* not replayed yet .*floe replay failed-batches/)
    expect((await replayFailedBatches(deps)).replayed).toBe(1)
    expect((await deadLetters(s)).size).toBe(0)
    expect((await replayDeadLetters(deps)).sources).toBe(0)
    await commitAll(s)
    const t = (await tableRows(s, 'late'))!
    expect(ids.filter((id) => t.rows.get(id) !== 1)).toEqual([])
  }, 60_000)
})

function envOf(s: ReplaySetup): Record<string, string> {
  const c = s.config
  return { FLOE_WAREHOUSE: c.warehouse, FLOE_CONTROL_TABLE: c.controlTable, FLOE_CATALOG_TABLE: c.catalogTable, FLOE_PIPELINE: c.pipeline, FLOE_DLQ: c.dlq, FLOE_FAILED_BATCHES: c.failedBatches }
}
