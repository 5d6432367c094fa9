/**
 * The deterministic chaos subset: one schedule with a fixed seed per fault kind (each schedule
 * forces one kind and may add others), against the real writer and committer handlers in child
 * processes. It runs schedules one after another (about 8 minutes on 2 cores), so it runs with
 * `npm run test:slow` (vitest.slow.config.ts, also run by `.ci/run`), not in `npm test`. The full
 * run is `npm run chaos -- --schedules 1000`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestBucket, createTestCatalogTable, createTestControlTable, testAws, uniqueName } from '../helpers/aws.js'
import { makeForeignAppender } from './foreign.js'
import { FAULTS, Fleet, runSchedule, type HarnessEnv, type ScheduleResult } from './harness.js'

const SEED = 20261129
const SCHEDULES = FAULTS.length

describe('exactly-once under injected faults', () => {
  let env: HarnessEnv
  let fleet: Fleet
  const results: ScheduleResult[] = []

  beforeAll(async () => {
    const aws = testAws()
    env = {
      ddb: aws.ddb,
      s3: aws.s3,
      endpoints: aws.endpoints,
      pipeline: uniqueName('chaos').replace(/-/g, ''),
      controlTable: await createTestControlTable(),
      catalogTable: await createTestCatalogTable(),
      bucket: await createTestBucket(),
    }
    env.foreignAppend = makeForeignAppender(env, aws.clients)
    fleet = new Fleet(env)
    await fleet.start()
  }, 120_000)

  afterAll(async () => {
    await fleet?.stop()
  })

  it(`${SCHEDULES} seeded schedules lose and duplicate nothing, and inject every fault kind`, async () => {
    for (let index = 0; index < SCHEDULES; index++) {
      const result = await runSchedule(env, fleet, SEED, index)
      results.push(result)
      const replay = `replay: npm run chaos -- --seed ${SEED} --only ${index} (faults ${result.faults.join(',')})`
      const { lost, duplicated, both, offsetMismatches, inTable, inDeadLetters, produced } = result.verdict
      // The replay line is part of the compared value so a failure shows how to reproduce it.
      expect({ replay, lost, duplicated, both, offsetMismatches, accounted: inTable + inDeadLetters, orphansLeft: result.orphansLeft, dangling: result.dangling }).toEqual({
        replay,
        lost: [],
        duplicated: [],
        both: [],
        offsetMismatches: [],
        accounted: produced,
        orphansLeft: 0,
        dangling: 0,
      })
    }
    const injected = new Map<string, number>()
    for (const r of results) for (const [f, n] of Object.entries(r.injected)) injected.set(f, (injected.get(f) ?? 0) + (n ?? 0))
    const never = FAULTS.filter((f) => (injected.get(f) ?? 0) === 0)
    expect(never).toEqual([])
    // The producers write over time: some batches must have closed on the window, not only on count.
    const closes = { count: 0, window: 0 }
    for (const r of results) for (const k of ['count', 'window'] as const) closes[k] += r.batches[k]
    expect(closes.window, 'batches closed by the batching window').toBeGreaterThan(0)
    expect(closes.count, 'batches closed by count').toBeGreaterThan(0)
  }, 1_200_000)
})
