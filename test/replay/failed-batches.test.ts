/**
 * `floe replay failed-batches` on the local endpoints: an outage longer than the mapping's retry
 * budget parks batches in the on-failure destination (the real S3 invocation-record shape);
 * after the outage, replay puts every record in its table exactly once — also when a replay is
 * killed mid-way and run again, and when a replay is run twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { replayFailedBatches } from '../../lib/replay/index.js'
import { parseInvocationRecord } from '../../lib/replay/failed-batches.js'
import { buildEvent } from '../../lib/local/kafka-log.js'
import { onFailureRecord } from '../../lib/local/esm.js'
import { writeBatch } from '../../lib/writer/pipeline.js'
import { commitAll, mapping, outage, produce, replaySetup, tableRows, type ReplaySetup } from './support.js'

describe('replay of failed batches', () => {
  let s: ReplaySetup
  beforeAll(async () => {
    s = await replaySetup()
  }, 60_000)
  afterAll(async () => s?.stop())

  it('parks batches during an outage and replays every record exactly once, killed mid-way and re-run', async () => {
    const { log, ids } = produce('orders', 2, 60)
    let down = true
    outage(s, () => down)
    const esm = mapping(s, log, 2)
    // Outage: 4 batches × 3 attempts each are refused, then the mapping gives up on them.
    await esm.drain({ maxInvocations: 12 })
    down = false
    await esm.drain()
    expect(esm.lag()).toBe(0)
    const parked: string[] = []
    for await (const f of s.direct.io.list(s.config.failedBatches)) parked.push(f.path)
    expect(parked.length).toBe(4)
    await commitAll(s)
    const before = (await tableRows(s, 'orders'))!
    const missing = ids.filter((id) => !before.rows.has(id))
    expect(missing.length).toBe(40)
    const offsetsBefore = before.summary['floe.offsets.rp']

    // A replay killed after writing the files of its second object, before its transaction.
    let n = 0
    const killed = await replayFailedBatches(s.direct, {
      hooks: {
        beforeSource: () => {
          if (++n === 2) throw new Error('killed')
        },
      },
    })
    expect(killed.results.map((r) => r.status)).toEqual(['replayed', 'failed', 'replayed', 'replayed'])
    const rerun = await replayFailedBatches(s.direct)
    expect(rerun.results.map((r) => r.status)).toEqual(['already-replayed', 'replayed', 'already-replayed', 'already-replayed'])
    const twice = await replayFailedBatches(s.direct)
    expect(twice.replayed).toBe(0)
    expect(twice.alreadyReplayed).toBe(4)
    await commitAll(s)

    const after = (await tableRows(s, 'orders'))!
    expect(ids.filter((id) => after.rows.get(id) !== 1)).toEqual([])
    expect(after.rows.size).toBe(ids.length)
    // The summary offsets did not move backwards; the replay is named in the summary.
    expect(after.summary['floe.offsets.rp']).toBe(offsetsBefore)
    expect(after.summary['floe.replay-id']).toMatch(/^[0-9a-f]{40}(,[0-9a-f]{40})*$/)
  }, 120_000)

  it('leaves out the records of a failed batch that a live writer had registered (a zombie that landed)', async () => {
    const { log, ids } = produce('zombies', 1, 12)
    const event = buildEvent([...log.records('zombies-0')])
    // The invocation registered, yet the mapping (it timed out, from its view) parked the batch.
    outage(s, () => false)
    await writeBatch(s.writer, event)
    await s.direct.io.write(`${s.config.failedBatches}/zombie-${crypto.randomUUID()}`, JSON.stringify(onFailureRecord(event, 11)))
    const run = await replayFailedBatches(s.direct)
    const ours = run.results.find((r) => r.source.includes('/zombie-'))!
    expect(ours).toMatchObject({ status: 'replayed', records: 12, alreadyIn: 12, replayed: 0, rows: 0 })
    await commitAll(s)
    const t = (await tableRows(s, 'zombies'))!
    expect(ids.filter((id) => t.rows.get(id) !== 1)).toEqual([])
  }, 60_000)

  it('dry run says what it would replay and writes nothing', async () => {
    const { log } = produce('dry', 1, 5)
    await s.direct.io.write(`${s.config.failedBatches}/dry-${crypto.randomUUID()}`, JSON.stringify(onFailureRecord(buildEvent([...log.records('dry-0')]), 11)))
    const run = await replayFailedBatches(s.direct, { dryRun: true })
    expect(run.results.find((r) => r.source.includes('/dry-'))).toMatchObject({ status: 'would-replay', records: 5, replayed: 5 })
    expect(await tableRows(s, 'dry')).toBeUndefined()
  }, 60_000)

  it('rejects an on-failure record without the batch (an SNS or SQS destination) by name', () => {
    expect(() => parseInvocationRecord(JSON.stringify({ requestContext: {}, KafkaBatchInfo: {} }), 's3://b/x')).toThrow(/s3:\/\/b\/x: no Kafka invocation event under "payload"/)
  })
})
