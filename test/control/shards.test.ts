/**
 * Write sharding of pending batches (FLOE_PENDING_SHARDS): registrations spread evenly over the
 * shard keys and index keys, the committer reads every shard, and batches a deployment wrote in
 * the unsharded layout (FLOE_PENDING_SHARDS=1, the layout before sharding) are still read and
 * committed after the upgrade. Request counts come from SDK middleware (test/helpers/request-counter.ts).
 */
import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb'
import { describe, expect, it } from 'vitest'
import { countPendingBatches, countPendingExactly, noteBacklog } from '../../lib/control/backlog.js'
import { registerBatches } from '../../lib/control/batches.js'
import { readCheckpoints, readCheckpointsWithBacklog } from '../../lib/control/checkpoints.js'
import { batchPartition, pendingIndexPk, shardOf } from '../../lib/control/keys.js'
import { acquireLease, markCommitted } from '../../lib/control/lease.js'
import { listPendingTables, loadBatchFiles, readPendingBatches } from '../../lib/control/pending.js'
import { dataFileFromJSON } from '../../lib/iceberg/datafile-json.js'
import type { ControlContext } from '../../lib/control/types.js'
import { countedClients, RequestCounter } from '../helpers/request-counter.js'
import { batchInput, fakeDataFile, range, testControl } from './context.js'

const LOC = 's3://b/warehouse/db/events'

async function registerOne(ctx: ControlContext, table: string, partition: number): Promise<void> {
  const parts = [{ topic: 't', partition }]
  const expected = await readCheckpoints(ctx, 'p1', parts)
  const from = expected.get(`t-${partition}`) ?? 0n
  const result = await registerBatches(ctx, {
    pipeline: 'p1',
    writerId: `w${partition}`,
    expected,
    next: new Map([[`t-${partition}`, from + 10n]]),
    batches: [batchInput(table, [range('t', partition, from, from + 10n)], [fakeDataFile(LOC, 10)])],
  })
  expect(result).toBe('registered')
}

async function rawPks(ctx: ControlContext): Promise<{ pk: string; sk: string; gsi1pk?: string }[]> {
  const out = await ctx.doc.send(new ScanCommand({ TableName: ctx.table, ProjectionExpression: 'pk, sk, gsi1pk' }))
  return (out.Items ?? []) as never
}

describe('pending-batch shards', () => {
  it('spreads registrations evenly over the shard keys and the index keys, and no key carries more than twice its share', async () => {
    const counter = new RequestCounter()
    const { ctx } = await testControl({ pendingShards: 8 })
    const counted: ControlContext = { ...ctx, doc: countedClients(counter).doc }
    const n = 160
    for (let i = 0; i < n; i += 16) await Promise.all(Array.from({ length: 16 }, (_, j) => registerOne(counted, 'db.events', i + j)))
    const batchKeys = [...counter.keys('batch#p1#'), ...counter.keys('bshard#p1#')]
    const indexKeys = counter.keys('pending:pending#p1')
    expect(batchKeys).toHaveLength(8)
    expect(indexKeys).toHaveLength(8)
    const share = n / 8
    for (const [key, s] of [...batchKeys, ...indexKeys]) {
      expect(s.requests, key).toBeLessThanOrEqual(2 * share)
      expect(s.requests, key).toBeGreaterThanOrEqual(share / 3)
    }
    // A registration's pending-batch put is transactional: two write units per started KB.
    const perBatch = counter.totals('batch#p1#').wcu + counter.totals('bshard#p1#').wcu
    expect(perBatch / n).toBeGreaterThanOrEqual(2)
    counter.settle()
    expect(await countPendingExactly(ctx, 'p1', 'db.events')).toBe(n)
    const pending = await readPendingBatches(ctx, 'p1', 'db.events')
    expect(pending).toHaveLength(n)
    for (const b of pending) expect(b.shard ?? 0).toBe(shardOf(b.batchId, 8))
    expect(await listPendingTables(ctx, 'p1')).toEqual(['db.events'])
  })

  it('commits batches a deployment wrote unsharded after FLOE_PENDING_SHARDS is raised (migration)', async () => {
    const { ctx } = await testControl({ pendingShards: 1 })
    for (let p = 0; p < 6; p++) await registerOne(ctx, 'db.events', p)
    const old = (await rawPks(ctx)).filter((i) => i.sk.startsWith('p#'))
    expect(old).toHaveLength(6)
    expect(new Set(old.map((i) => `${i.pk} ${i.gsi1pk}`))).toEqual(new Set(['batch#p1#db.events pending#p1']))
    const upgraded: ControlContext = { ...ctx, config: { ...ctx.config, pendingShards: 16 } }
    for (let p = 6; p < 30; p++) await registerOne(upgraded, 'db.events', p)
    const pks = new Set((await rawPks(ctx)).filter((i) => i.sk.startsWith('p#')).map((i) => i.pk))
    expect(pks.size).toBeGreaterThan(2)
    expect(await listPendingTables(upgraded, 'p1')).toEqual(['db.events'])
    const pending = await readPendingBatches(upgraded, 'p1', 'db.events')
    expect(pending).toHaveLength(30)
    const files = await loadBatchFiles(upgraded, 'p1', pending, dataFileFromJSON)
    expect(files.size).toBe(30)
    const lease = (await acquireLease(upgraded, 'p1', 'db.events', { owner: 'c1' }))!
    await markCommitted(upgraded, lease, pending.map((batch) => ({ batch, snapshotId: 1n, commitId: 'c' })))
    expect(await readPendingBatches(upgraded, 'p1', 'db.events')).toEqual([])
    expect(await listPendingTables(upgraded, 'p1')).toEqual([])
    // The journal entry sits beside the pending one it replaced, old layout included.
    const unsharded = pending.find((b) => b.shard === undefined)!
    const { Item } = await ctx.doc.send(new GetCommand({ TableName: ctx.table, Key: { pk: batchPartition('p1', 'db.events'), sk: `c#${unsharded.batchId}` }, ConsistentRead: true }))
    expect(Item?.status).toBe('committed')
  })

  it('keys of different shards and tables never collide, even for table names with # in them', () => {
    const keys = new Set<string>()
    for (const table of ['a', 'a#1', 'a#2', '1#a', 'x.y']) for (let s = 0; s < 4; s++) keys.add(batchPartition('p', table, s))
    expect(keys.size).toBe(20)
    expect(pendingIndexPk('p', 0)).toBe('pending#p')
    expect(new Set([0, 1, 2, 3].map((s) => pendingIndexPk('p', s))).size).toBe(4)
  })

  it('back pressure trusts a fresh backlog note and counts for itself when the note is stale', async () => {
    const { ctx } = await testControl({ pendingShards: 4, maxPendingBatches: 3 })
    for (let p = 0; p < 6; p++) await registerOne(ctx, 'db.t', p)
    // No note: a consistent count that stops past the limit.
    const counted = await countPendingBatches(ctx, 'p1', 'db.t')
    expect(counted).toBeGreaterThan(3)
    expect(counted).toBeLessThanOrEqual(6)
    await noteBacklog(ctx, 'p1', 'db.t', 2)
    expect(await countPendingBatches(ctx, 'p1', 'db.t')).toBe(2)
    await noteBacklog(ctx, 'p1', 'db.t', 2, Date.now() - ctx.config.backlogFreshMs - 1000)
    expect(await countPendingBatches(ctx, 'p1', 'db.t')).toBeGreaterThan(3)
  })

  it('reads backlog notes with the checkpoints in one request, and back pressure then reads no note again', async () => {
    const { ctx } = await testControl({ pendingShards: 2, maxPendingBatches: 3 })
    for (let p = 0; p < 5; p++) await registerOne(ctx, 'db.stale', p)
    await noteBacklog(ctx, 'p1', 'db.fresh', 7)
    await noteBacklog(ctx, 'p1', 'db.stale', 1, Date.now() - ctx.config.backlogFreshMs - 1000)
    const counter = new RequestCounter()
    const counted: ControlContext = { ...ctx, doc: countedClients(counter).doc }
    const parts = [0, 1, 2].map((partition) => ({ topic: 't', partition }))
    const read = await readCheckpointsWithBacklog(counted, 'p1', parts, ['db.fresh', 'db.stale', 'db.none', 'db.fresh'])
    expect(read.checkpoints).toEqual(new Map([['t-0', 10n], ['t-1', 10n], ['t-2', 10n]]))
    expect(read.backlog).toEqual(new Map([['db.fresh', { pending: 7 }], ['db.stale', { pending: undefined }], ['db.none', { pending: undefined }]]))
    expect([...counter.operations]).toEqual([['ddb.BatchGetItemCommand', 1]])
    expect(await readCheckpoints(ctx, 'p1', parts)).toEqual(read.checkpoints)
    // The fresh note is taken as read; a stale or missing one means a count over the shards, not a second read of the note.
    expect(await countPendingBatches(counted, 'p1', 'db.fresh', read.backlog.get('db.fresh'))).toBe(7)
    expect(await countPendingBatches(counted, 'p1', 'db.stale', read.backlog.get('db.stale'))).toBeGreaterThan(3)
    expect(await countPendingBatches(counted, 'p1', 'db.none', read.backlog.get('db.none'))).toBe(0)
    expect([...counter.operations].filter(([op]) => op.includes('Get'))).toEqual([['ddb.BatchGetItemCommand', 1]])
  })
})
