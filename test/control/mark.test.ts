import { describe, expect, it } from 'vitest'
import { GetCommand } from '@aws-sdk/lib-dynamodb'
import { countPendingBatches, countPendingExactly } from '../../lib/control/backlog.js'
import { registerBatches } from '../../lib/control/batches.js'
import { readCheckpoints } from '../../lib/control/checkpoints.js'
import { committedBatchKey } from '../../lib/control/keys.js'
import { acquireLease, markCommitted } from '../../lib/control/lease.js'
import { listPendingTables, readPendingBatches } from '../../lib/control/pending.js'
import { FencedError } from '../../lib/errors.js'
import { batchInput, fakeDataFile, range, testControl } from './context.js'

async function registerMany(ctx: Awaited<ReturnType<typeof testControl>>['ctx'], n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const expected = await readCheckpoints(ctx, 'p1', [{ topic: 't', partition: 0 }])
    const first = expected.get('t-0') ?? 0n
    await registerBatches(ctx, {
      pipeline: 'p1', writerId: 'w', expected, next: new Map([['t-0', first + 2n]]),
      batches: [batchInput('db.t', [range('t', 0, first, first + 2n)], [fakeDataFile('s3://b/db/t')])],
    })
  }
}

describe('markCommitted', () => {
  it('moves 60 batches from pending to committed in two transactions (49 + 11, under the 100-item limit), with a TTL', async () => {
    const { ctx, config } = await testControl()
    await registerMany(ctx, 60)
    const pending = await readPendingBatches(ctx, 'p1', 'db.t')
    expect(pending).toHaveLength(60)
    const lease = (await acquireLease(ctx, 'p1', 'db.t'))!
    const before = Math.floor(Date.now() / 1000)
    await markCommitted(ctx, lease, pending.map((batch) => ({ batch, snapshotId: 9007199254740993n, commitId: 'c1' })))
    expect(await countPendingBatches(ctx, 'p1', 'db.t')).toBe(0)
    expect(await listPendingTables(ctx, 'p1')).toEqual([])
    const { Item } = await ctx.doc.send(new GetCommand({ TableName: ctx.table, Key: committedBatchKey('p1', 'db.t', pending[7]!.batchId, pending[7]!.shard), ConsistentRead: true }))
    expect(Item).toMatchObject({ status: 'committed', snapshotId: '9007199254740993', commitId: 'c1', committerEpoch: lease.epoch })
    expect(Item!.ttl).toBeGreaterThanOrEqual(before + config.batchTtlSeconds)
    expect(Item!.gsi1pk).toBeUndefined()
  })

  it('a committer whose lease was taken over cannot change batch status', async () => {
    const { ctx } = await testControl({ leaseTtlMs: 1_000 })
    await registerMany(ctx, 2)
    const pending = await readPendingBatches(ctx, 'p1', 'db.t')
    const now = Date.now()
    const old = (await acquireLease(ctx, 'p1', 'db.t', { owner: 'old', nowMs: now }))!
    await acquireLease(ctx, 'p1', 'db.t', { owner: 'new', nowMs: now + 5_000 })
    const marking = markCommitted(ctx, old, pending.map((batch) => ({ batch, snapshotId: 1n, commitId: 'x' })))
    await expect(marking).rejects.toBeInstanceOf(FencedError)
    expect(await countPendingBatches(ctx, 'p1', 'db.t')).toBe(2)
  })

  it('marks 300 batches in parallel lanes, each fenced by its own copy of the lease token; a taken-over holder fails on every lane and marks nothing after', async () => {
    const { ctx } = await testControl({ leaseTtlMs: 1_000, markConcurrency: 4 })
    await registerMany(ctx, 300)
    const pending = await readPendingBatches(ctx, 'p1', 'db.t')
    const now = Date.now()
    const old = (await acquireLease(ctx, 'p1', 'db.t', { owner: 'same', nowMs: now }))!
    // The same owner id acquiring again (a new run) is a new token: the old lease is fenced on every copy.
    const current = (await acquireLease(ctx, 'p1', 'db.t', { owner: 'same', nowMs: now + 5_000 }))!
    expect(current.token).not.toBe(old.token)
    await expect(markCommitted(ctx, old, pending.map((batch) => ({ batch, snapshotId: 1n, commitId: 'x' })))).rejects.toBeInstanceOf(FencedError)
    expect(await countPendingExactly(ctx, 'p1', 'db.t')).toBe(300)
    await markCommitted(ctx, current, pending.map((batch) => ({ batch, snapshotId: 2n, commitId: 'y' })))
    expect(await countPendingExactly(ctx, 'p1', 'db.t')).toBe(0)
    const last = pending[299]!
    const { Item } = await ctx.doc.send(new GetCommand({ TableName: ctx.table, Key: committedBatchKey('p1', 'db.t', last.batchId, last.shard), ConsistentRead: true }))
    expect(Item).toMatchObject({ snapshotId: '2', commitId: 'y', committerEpoch: current.epoch })
  })

  it('what the lanes marked before a takeover stays marked; after it, no lane of the old holder marks anything', async () => {
    const { ctx } = await testControl({ leaseTtlMs: 1_000, markConcurrency: 2 })
    await registerMany(ctx, 200)
    const pending = await readPendingBatches(ctx, 'p1', 'db.t')
    const now = Date.now()
    const old = (await acquireLease(ctx, 'p1', 'db.t', { owner: 'old', nowMs: now }))!
    const marks = pending.map((batch) => ({ batch, snapshotId: 1n, commitId: 'x' }))
    // Two chunks in two lanes, then the takeover, then the rest: the old holder must not mark them.
    await markCommitted(ctx, old, marks.slice(0, 98))
    expect(await countPendingExactly(ctx, 'p1', 'db.t')).toBe(102)
    await acquireLease(ctx, 'p1', 'db.t', { owner: 'new', nowMs: now + 5_000 })
    await expect(markCommitted(ctx, old, marks.slice(98))).rejects.toBeInstanceOf(FencedError)
    expect(await countPendingExactly(ctx, 'p1', 'db.t')).toBe(102)
  })
})
