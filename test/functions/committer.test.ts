import { describe, expect, it } from 'vitest'
import type { Context } from 'aws-lambda'
import { createCommitterHandler } from '../../functions/committer.js'
import { testCommit } from '../commit/context.js'

const context = { awsRequestId: 'req-1', functionName: 'floe-committer', getRemainingTimeInMillis: () => 60_000 } as unknown as Context

describe('committer handler', () => {
  it('commits pending batches of every table and returns a JSON-safe summary', async () => {
    const t = await testCommit()
    const { name } = await t.table()
    await t.register(name, { count: 3 })
    await t.register(name, { partition: 2, count: 4 })
    const handler = createCommitterHandler(t.deps)
    const summary = await handler({}, context)
    expect(summary).toMatchObject({ tables: 1, committed: 1, failures: 0, batches: 2, results: [{ table: name, status: 'committed', batches: 2 }] })
    expect(summary.results[0]!.snapshotId).toMatch(/^\d+$/)
    expect(JSON.parse(JSON.stringify(summary))).toEqual(summary)
    expect(await handler({}, context)).toMatchObject({ tables: 0, failures: 0 })
  })
})
