import { describe, expect, it } from 'vitest'
import { runCommitter } from '../../lib/commit/committer.js'
import { mapBounded } from '../../lib/concurrency.js'
import { NoSuchTableError } from '../../lib/errors.js'
import { testCommit } from './context.js'

describe('runCommitter', () => {
  it('commits every table with pending batches; a failing table is reported and does not block the others', async () => {
    const t = await testCommit({ commitConcurrency: 2 })
    const tables = [await t.table(), await t.table(), await t.table()]
    for (const { name } of tables) {
      await t.register(name, { partition: 0 })
      await t.register(name, { partition: 1 })
    }
    // Batches registered for a table that is not in the catalog (dropped by someone): it fails alone.
    await t.register('db.gone', { partition: 7 })
    const run = await runCommitter(t.deps)
    expect(run).toMatchObject({ tables: 4, committed: 3, failures: 1, batches: 6 })
    const failed = run.results.find((r) => r.status === 'failed')!
    expect(failed.table).toBe('db.gone')
    expect(failed.error).toBeInstanceOf(NoSuchTableError)
    for (const { name } of tables) expect(await t.livePaths(name)).toHaveLength(2)
    // The next run only has the failed table left.
    const again = await runCommitter(t.deps)
    expect(again).toMatchObject({ tables: 1, committed: 0, failures: 1 })
  })

  it('starts no table after the deadline: they are deferred to the next run, still pending', async () => {
    const t = await testCommit()
    const { name } = await t.table()
    await t.register(name)
    const run = await runCommitter(t.deps, { deadline: Date.now() - 1 })
    expect(run).toMatchObject({ tables: 1, committed: 0, deferred: 1, failures: 0 })
    expect(await t.livePaths(name)).toEqual([])
    expect(await runCommitter(t.deps)).toMatchObject({ committed: 1, deferred: 0 })
  })

  it('runs nothing when nothing is pending', async () => {
    const t = await testCommit()
    expect(await runCommitter(t.deps)).toMatchObject({ tables: 0, committed: 0, failures: 0, results: [] })
  })
})

describe('mapBounded', () => {
  it('never has more than the limit in flight and keeps input order', async () => {
    let inFlight = 0
    let peak = 0
    const out = await mapBounded([5, 1, 4, 2, 3, 0], 2, async (n) => {
      inFlight++
      peak = Math.max(peak, inFlight)
      await new Promise((r) => setTimeout(r, n * 3))
      inFlight--
      return n * 10
    })
    expect(out).toEqual([50, 10, 40, 20, 30, 0])
    expect(peak).toBe(2)
  })
})
