import { describe, expect, it } from 'vitest'
import { GetCommand } from '@aws-sdk/lib-dynamodb'
import { countPendingBatches } from '../../lib/control/backlog.js'
import { registerBatches } from '../../lib/control/batches.js'
import { readCheckpoints } from '../../lib/control/checkpoints.js'
import { dataFileFromJSON } from '../../lib/iceberg/datafile-json.js'
import { loadBatchFiles, listPendingTables, readPendingBatches } from '../../lib/control/pending.js'
import { pendingBatchKey } from '../../lib/control/keys.js'
import { FencedError, FloeError } from '../../lib/errors.js'
import { batchInput, fakeDataFile, range, testControl } from './context.js'

const LOC = 's3://b/warehouse/db/events'
const parts = [{ topic: 'orders', partition: 0 }, { topic: 'orders', partition: 1 }]

describe('registerBatches', () => {
  it('registers a batch and advances every checkpoint in one transaction', async () => {
    const { ctx } = await testControl()
    const expected = await readCheckpoints(ctx, 'p1', parts)
    expect([...expected.values()]).toEqual([undefined, undefined])
    const files = [fakeDataFile(LOC, 5), fakeDataFile(LOC, 7)]
    const result = await registerBatches(ctx, {
      pipeline: 'p1',
      writerId: 'w1',
      expected,
      next: new Map([['orders-0', 5n], ['orders-1', 107n]]),
      batches: [batchInput('db.events', [range('orders', 0, 0n, 5n), range('orders', 1, 100n, 107n)], files)],
    })
    expect(result).toBe('registered')
    const after = await readCheckpoints(ctx, 'p1', parts)
    expect(after).toEqual(new Map([['orders-0', 5n], ['orders-1', 107n]]))
    const pending = await readPendingBatches(ctx, 'p1', 'db.events')
    expect(pending).toHaveLength(1)
    expect(pending[0]!.ranges[1]).toMatchObject({ topic: 'orders', partition: 1, firstOffset: 100n, nextOffset: 107n })
    expect(pending[0]!.recordCount).toBe(12)
    const loaded = await loadBatchFiles(ctx, 'p1', pending, dataFileFromJSON)
    expect(loaded.get(pending[0]!.batchId)!.map((f) => f.filePath)).toEqual(files.map((f) => f.filePath))
    expect(await countPendingBatches(ctx, 'p1', 'db.events')).toBe(1)
    expect(await listPendingTables(ctx, 'p1')).toEqual(['db.events'])
  })

  it('a second registration with the same expected offsets is stale and writes nothing', async () => {
    const { ctx } = await testControl()
    const expected = await readCheckpoints(ctx, 'p1', parts.slice(0, 1))
    const req = (writerId: string) => ({
      pipeline: 'p1',
      writerId,
      expected,
      next: new Map([['orders-0', 10n]]),
      batches: [batchInput('db.events', [range('orders', 0, 0n, 10n)], [fakeDataFile(LOC)])],
    })
    expect(await registerBatches(ctx, req('w1'))).toBe('registered')
    expect(await registerBatches(ctx, req('zombie'))).toBe('stale')
    const pending = await readPendingBatches(ctx, 'p1', 'db.events')
    expect(pending.map((b) => b.writerId)).toEqual(['w1'])
  })

  it('a writer overtaken only part of the way is fenced with a retryable error, not told "stale"', async () => {
    const { ctx } = await testControl()
    const expected = await readCheckpoints(ctx, 'p1', parts.slice(0, 1))
    await registerBatches(ctx, {
      pipeline: 'p1', writerId: 'short', expected, next: new Map([['orders-0', 4n]]),
      batches: [batchInput('db.events', [range('orders', 0, 0n, 4n)], [fakeDataFile(LOC)])],
    })
    const longer = registerBatches(ctx, {
      pipeline: 'p1', writerId: 'long', expected, next: new Map([['orders-0', 9n]]),
      batches: [batchInput('db.events', [range('orders', 0, 0n, 9n)], [fakeDataFile(LOC)])],
    })
    await expect(longer).rejects.toBeInstanceOf(FencedError)
    await expect(longer).rejects.toMatchObject({ retryable: true, message: expect.stringContaining('orders-0: expected none, now 4, ours up to 9') })
  })

  it('a batch of dead letters only (no pending batch) still advances the checkpoint, fenced', async () => {
    const { ctx } = await testControl()
    const expected = await readCheckpoints(ctx, 'p1', parts.slice(1))
    const req = { pipeline: 'p1', writerId: 'w', expected, next: new Map([['orders-1', 3n]]), batches: [] }
    expect(await registerBatches(ctx, req)).toBe('registered')
    expect(await readCheckpoints(ctx, 'p1', parts.slice(1))).toEqual(new Map([['orders-1', 3n]]))
    expect(await registerBatches(ctx, req)).toBe('stale')
    expect(await listPendingTables(ctx, 'p1')).toEqual([])
  })

  it('checkpoints chain: the next writer registers from the value the previous one wrote', async () => {
    const { ctx } = await testControl()
    for (let i = 0n; i < 3n; i++) {
      const expected = await readCheckpoints(ctx, 'p1', parts.slice(0, 1))
      const first = expected.get('orders-0') ?? 0n
      // Offsets with gaps: next is not last + 1.
      const next = first + 10n + i
      expect(
        await registerBatches(ctx, {
          pipeline: 'p1', writerId: `w${i}`, expected, next: new Map([['orders-0', next]]),
          batches: [batchInput('db.events', [range('orders', 0, first, next)], [fakeDataFile(LOC)])],
        }),
      ).toBe('registered')
    }
    expect((await readCheckpoints(ctx, 'p1', parts.slice(0, 1))).get('orders-0')).toBe(33n)
    expect(await countPendingBatches(ctx, 'p1', 'db.events')).toBe(3)
  })

  it('a large file list spills to an S3 object the item references', async () => {
    const { ctx } = await testControl({ spillThresholdBytes: 4096 })
    const files = Array.from({ length: 200 }, () => fakeDataFile(LOC))
    const expected = await readCheckpoints(ctx, 'p1', parts.slice(0, 1))
    await registerBatches(ctx, {
      pipeline: 'p1', writerId: 'w', expected, next: new Map([['orders-0', 200n]]),
      batches: [batchInput('db.events', [range('orders', 0, 0n, 200n)], files)],
    })
    const [batch] = await readPendingBatches(ctx, 'p1', 'db.events')
    expect(batch!.spillPath).toMatch(/^s3:\/\/.*\/_floe\/spill\/[0-9a-f]{32}-.*\.json$/)
    expect(await ctx.io.exists(batch!.spillPath!)).toBe(true)
    const { Item } = await ctx.doc.send(new GetCommand({ TableName: ctx.table, Key: pendingBatchKey('p1', 'db.events', batch!.batchId, batch!.shard), ConsistentRead: true }))
    expect(Item!.filesJson).toBeUndefined()
    const loaded = await loadBatchFiles(ctx, 'p1', [batch!], dataFileFromJSON)
    expect(loaded.get(batch!.batchId)!.map((f) => f.filePath)).toEqual(files.map((f) => f.filePath))
  })

  it('a stale writer removes the file list it spilled', async () => {
    const { ctx } = await testControl({ spillThresholdBytes: 4096 })
    const expected = await readCheckpoints(ctx, 'p1', parts.slice(0, 1))
    const req = () => ({
      pipeline: 'p1', writerId: 'w', expected, next: new Map([['orders-0', 200n]]),
      batches: [batchInput('db.events', [range('orders', 0, 0n, 200n)], Array.from({ length: 200 }, () => fakeDataFile(LOC)))],
    })
    await registerBatches(ctx, req())
    expect(await registerBatches(ctx, req())).toBe('stale')
    const spilled = []
    for await (const f of ctx.io.list(ctx.spillPrefix)) spilled.push(f.path)
    expect(spilled).toHaveLength(1)
  })

  it('of ten writers racing from the same checkpoint, exactly one registers; the others are stale or told to retry', async () => {
    const { ctx } = await testControl()
    const expected = await readCheckpoints(ctx, 'p1', parts)
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        registerBatches(ctx, {
          pipeline: 'p1', writerId: `w${i}`, expected, next: new Map([['orders-0', 10n], ['orders-1', 10n]]),
          batches: [batchInput('db.events', [range('orders', 0, 0n, 10n), range('orders', 1, 0n, 10n)], [fakeDataFile(LOC)])],
        }),
      ),
    )
    const registered = outcomes.filter((o) => o.status === 'fulfilled' && o.value === 'registered')
    expect(registered).toHaveLength(1)
    const kinds = outcomes.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as { retryable?: boolean }).retryable ? 'retryable' : String(o.reason)))
    expect(kinds.filter((k) => !['registered', 'stale', 'retryable'].includes(k))).toEqual([])
    expect(await countPendingBatches(ctx, 'p1', 'db.events')).toBe(1)
  })

  it('rejects a registration over the 100-item transaction limit and names the counts', async () => {
    const { ctx } = await testControl()
    const partitions = Array.from({ length: 101 }, (_, i) => ({ topic: 't', partition: i }))
    const expected = await readCheckpoints(ctx, 'p1', partitions)
    expect(expected.size).toBe(101)
    const req = { pipeline: 'p1', writerId: 'w', expected, next: new Map(partitions.map((p) => [`t-${p.partition}`, 1n])), batches: [] }
    await expect(registerBatches(ctx, req)).rejects.toThrow(/101 transaction items .* more than 100/)
    await expect(registerBatches(ctx, req)).rejects.toBeInstanceOf(FloeError)
  })

  it('rejects a checkpoint moving backwards', async () => {
    const { ctx } = await testControl()
    const req = { pipeline: 'p1', writerId: 'w', expected: new Map([['t-0', 10n]]), next: new Map([['t-0', 5n]]), batches: [] }
    await expect(registerBatches(ctx, req)).rejects.toThrow('checkpoint of t-0 would move backwards from 10 to 5')
  })
})
