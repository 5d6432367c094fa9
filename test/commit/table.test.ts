import { describe, expect, it } from 'vitest'
import { appendFiles } from '../../lib/iceberg/append.js'
import { currentSnapshot } from '../../lib/iceberg/metadata.js'
import { parseTableId } from '../../lib/catalog/index.js'
import { commitTable } from '../../lib/commit/table.js'
import { committedOffsets } from '../../lib/commit/offsets.js'
import { countPendingBatches } from '../../lib/control/backlog.js'
import { CommitStateUnknownError, FencedError } from '../../lib/errors.js'
import { fakeDataFile } from '../control/context.js'
import { gate, sleep, testCommit } from './context.js'

const sorted = (xs: string[]) => [...xs].sort()

describe('commitTable', () => {
  it('commits the pending batches of several registrations as one snapshot with offsets, commit id and valid-through', async () => {
    const t = await testCommit()
    const { name } = await t.table()
    const files = [
      ...(await t.register(name, { partition: 0, count: 10, files: 2, maxTimestamp: 1_000 })),
      ...(await t.register(name, { partition: 0, count: 5, maxTimestamp: 2_000 })),
      ...(await t.register(name, { partition: 1, count: 7, maxTimestamp: 1_500 })),
    ]
    const result = await commitTable(t.deps, name)
    expect(result).toMatchObject({ status: 'committed', batches: 3, files: 4, records: 20, alreadyCommitted: 0, pending: 3 })
    const { metadata } = await t.catalog.loadTable(parseTableId(name))
    expect(metadata.snapshots).toHaveLength(1)
    const snap = currentSnapshot(metadata)!
    expect(snap['snapshot-id']).toBe(result.snapshotId)
    expect(snap.summary['floe.offsets.p1']).toBe('{"events-0":15,"events-1":7}')
    expect(snap.summary['floe.commit-id']).toMatch(/^[0-9a-f-]{36}$/)
    expect(snap.summary['floe.valid-through-ts']).toBe('1500')
    expect(sorted(await t.livePaths(name))).toEqual(sorted(files.map((f) => f.filePath)))
    expect(await countPendingBatches(t.deps.control, 'p1', name)).toBe(0)
    expect(await commitTable(t.deps, name)).toMatchObject({ status: 'idle', pending: 0 })
  })

  it('a crash after the swap and before marking: the next run commits nothing twice and marks the batches', async () => {
    const t = await testCommit()
    const { name } = await t.table()
    const files = [...(await t.register(name)), ...(await t.register(name, { partition: 3 }))]
    const crashed = await commitTable(t.deps, name, {
      hooks: {
        afterSwap: () => {
          throw new Error('simulated crash after the catalog swap')
        },
      },
    })
    expect(crashed.status).toBe('failed')
    expect(await countPendingBatches(t.deps.control, 'p1', name)).toBe(2)
    const again = await commitTable(t.deps, name)
    expect(again).toMatchObject({ status: 'marked', batches: 0, alreadyCommitted: 2 })
    const { metadata } = await t.catalog.loadTable(parseTableId(name))
    expect(metadata.snapshots).toHaveLength(1)
    expect(sorted(await t.livePaths(name))).toEqual(sorted(files.map((f) => f.filePath)))
    expect(await countPendingBatches(t.deps.control, 'p1', name)).toBe(0)
  })

  it('two committers started together commit each batch once', async () => {
    const t = await testCommit()
    const { name } = await t.table()
    const files = [...(await t.register(name)), ...(await t.register(name)), ...(await t.register(name, { partition: 1 }))]
    const results = await Promise.all([commitTable(t.deps, name), commitTable(t.deps, name), commitTable(t.deps, name)])
    expect(results.filter((r) => r.status === 'committed')).toHaveLength(1)
    expect(results.every((r) => r.status !== 'failed')).toBe(true)
    expect(sorted(await t.livePaths(name))).toEqual(sorted(files.map((f) => f.filePath)))
  })

  it('a zombie whose lease expired before its swap loses to the new holder and cannot duplicate', async () => {
    const t = await testCommit({ leaseTtlMs: 300 })
    const { name } = await t.table()
    const files = [...(await t.register(name)), ...(await t.register(name, { partition: 1 }))]
    const paused = gate()
    const resume = gate()
    const zombie = commitTable(t.deps, name, {
      owner: 'zombie',
      hooks: {
        beforeSwap: async () => {
          paused.open()
          await resume.promise
        },
      },
    })
    await paused.promise
    await sleep(350)
    // The lease expired while the zombie stalled: a new committer takes over and commits.
    const fresh = await commitTable(t.deps, name, { owner: 'fresh' })
    expect(fresh).toMatchObject({ status: 'committed', batches: 2 })
    resume.open()
    const late = await zombie
    // Its swap conflicts, the reload shows everything covered, and marking is fenced.
    expect(late.status).toBe('failed')
    expect(late.error).toBeInstanceOf(FencedError)
    expect(late.conflicts).toBe(1)
    const { metadata } = await t.catalog.loadTable(parseTableId(name))
    expect(metadata.snapshots).toHaveLength(1)
    expect(sorted(await t.livePaths(name))).toEqual(sorted(files.map((f) => f.filePath)))
  })

  it('a zombie whose swap wins after its lease expired: the new holder finds the batches covered and only marks them', async () => {
    const t = await testCommit({ leaseTtlMs: 300 })
    const { name } = await t.table()
    const files = [...(await t.register(name)), ...(await t.register(name, { partition: 1 }))]
    const zombiePaused = gate()
    const zombieGo = gate()
    const freshPaused = gate()
    const freshGo = gate()
    const zombie = commitTable(t.deps, name, {
      owner: 'zombie',
      hooks: {
        beforeSwap: async () => {
          zombiePaused.open()
          await zombieGo.promise
        },
      },
    })
    await zombiePaused.promise
    await sleep(350)
    const fresh = commitTable(t.deps, name, {
      owner: 'fresh',
      hooks: {
        beforeSwap: async ({ attempt }) => {
          if (attempt > 0) return
          freshPaused.open()
          await freshGo.promise
        },
      },
    })
    await freshPaused.promise
    // Both built a snapshot on the same base; the zombie swaps first.
    zombieGo.open()
    const z = await zombie
    expect(z.status).toBe('failed')
    expect(z.error).toBeInstanceOf(FencedError)
    freshGo.open()
    const freshResult = await fresh
    expect(freshResult).toMatchObject({ status: 'marked', alreadyCommitted: 2, conflicts: 1 })
    const { metadata } = await t.catalog.loadTable(parseTableId(name))
    expect(metadata.snapshots).toHaveLength(1)
    expect(sorted(await t.livePaths(name))).toEqual(sorted(files.map((f) => f.filePath)))
    expect(await countPendingBatches(t.deps.control, 'p1', name)).toBe(0)
  })

  it('a foreign append between load and swap: conflict, rebase, both appends present', async () => {
    const t = await testCommit()
    const { name, location } = await t.table()
    const ours = await t.register(name, { files: 2 })
    const foreign = fakeDataFile(location, 3)
    const result = await commitTable(t.deps, name, {
      hooks: {
        beforeSwap: async ({ attempt }) => {
          if (attempt > 0) return
          const { metadata, metadataLocation } = await t.catalog.loadTable(parseTableId(name))
          const next = await appendFiles(t.deps.io, metadata, [foreign], { summary: { 'engine': 'spark' } })
          await t.catalog.commit(parseTableId(name), { base: metadataLocation, metadata: next })
        },
      },
    })
    expect(result).toMatchObject({ status: 'committed', batches: 1, conflicts: 1 })
    const { metadata } = await t.catalog.loadTable(parseTableId(name))
    expect(metadata.snapshots).toHaveLength(2)
    expect(currentSnapshot(metadata)!.summary.engine).toBeUndefined()
    expect(sorted(await t.livePaths(name))).toEqual(sorted([foreign.filePath, ...ours.map((f) => f.filePath)]))
  })

  it('a swap whose outcome is unknown (it did land) is found on reload: marked, not appended again', async () => {
    const t = await testCommit()
    const { name } = await t.table()
    const files = [...(await t.register(name)), ...(await t.register(name, { partition: 1 }))]
    // The real catalog commits, then the response is "lost".
    const catalog = {
      loadTable: t.catalog.loadTable.bind(t.catalog),
      commit: async (...args: Parameters<typeof t.catalog.commit>) => {
        await t.catalog.commit(...args)
        throw new CommitStateUnknownError('timed out waiting for the catalog')
      },
    }
    const result = await commitTable({ ...t.deps, catalog }, name)
    expect(result).toMatchObject({ status: 'marked', alreadyCommitted: 2, conflicts: 1 })
    const { metadata } = await t.catalog.loadTable(parseTableId(name))
    expect(metadata.snapshots).toHaveLength(1)
    expect(sorted(await t.livePaths(name))).toEqual(sorted(files.map((f) => f.filePath)))
    expect(await countPendingBatches(t.deps.control, 'p1', name)).toBe(0)
  })

  it('a swap whose outcome is unknown (it did not land) is rechecked on reload and appended once', async () => {
    const t = await testCommit()
    const { name } = await t.table()
    const files = await t.register(name)
    let lost = 0
    const catalog = {
      loadTable: t.catalog.loadTable.bind(t.catalog),
      commit: async (...args: Parameters<typeof t.catalog.commit>) => {
        if (lost++ === 0) throw new CommitStateUnknownError('connection reset before the catalog answered')
        return await t.catalog.commit(...args)
      },
    }
    const result = await commitTable({ ...t.deps, catalog }, name)
    expect(result).toMatchObject({ status: 'committed', batches: 1, conflicts: 1 })
    const { metadata } = await t.catalog.loadTable(parseTableId(name))
    expect(metadata.snapshots).toHaveLength(1)
    expect(sorted(await t.livePaths(name))).toEqual(sorted(files.map((f) => f.filePath)))
  })

  it("a table's commit.retry.num-retries bounds the committer's conflict retries", async () => {
    const t = await testCommit({ commitRetries: 10 })
    const { name } = await t.table()
    const id = parseTableId(name)
    const loaded = await t.catalog.loadTable(id)
    await t.catalog.commit(id, { base: loaded.metadataLocation, metadata: { ...loaded.metadata, properties: { ...loaded.metadata.properties, 'commit.retry.num-retries': '1' } } })
    await t.register(name)
    let swaps = 0
    const result = await commitTable(t.deps, name, {
      hooks: {
        beforeSwap: async () => {
          swaps++
          // Another engine commits between every load and swap.
          const { metadata, metadataLocation } = await t.catalog.loadTable(id)
          await t.catalog.commit(id, { base: metadataLocation, metadata: await appendFiles(t.deps.io, metadata, [fakeDataFile(metadata.location)]) })
        },
      },
    })
    expect(swaps).toBe(2)
    expect(result.status).toBe('failed')
    expect(result.error?.message).toBe(`table ${name}: still conflicting after 2 attempts; the next run resumes`)
    expect(await countPendingBatches(t.deps.control, 'p1', name)).toBe(1)
  })

  it('summary offsets are monotonic across 100 commits, through snapshots of other engines', async () => {
    const t = await testCommit()
    const { name, location } = await t.table()
    let previous = new Map<string, bigint>()
    let expectedFiles = 0
    for (let i = 0; i < 100; i++) {
      await t.register(name, { partition: i % 3, count: 1 + (i % 4) })
      expectedFiles++
      if (i % 10 === 5) {
        const { metadata, metadataLocation } = await t.catalog.loadTable(parseTableId(name))
        await t.catalog.commit(parseTableId(name), { base: metadataLocation, metadata: await appendFiles(t.deps.io, metadata, [fakeDataFile(location)]) })
        expectedFiles++
      }
      const r = await commitTable(t.deps, name)
      expect(r.status).toBe('committed')
      const { metadata } = await t.catalog.loadTable(parseTableId(name))
      const now = committedOffsets(metadata, 'p1').offsets
      for (const [k, v] of previous) expect(now.get(k)! >= v).toBe(true)
      expect([...now.values()].reduce((a, b) => a + b, 0n)).toBeGreaterThan([...previous.values()].reduce((a, b) => a + b, 0n))
      previous = now
    }
    expect(await t.livePaths(name)).toHaveLength(expectedFiles)
  }, 180_000)

  it('a large file list spills to S3, commits, and the spilled object is removed', async () => {
    const t = await testCommit({ spillThresholdBytes: 8_192 })
    const { name } = await t.table()
    const files = await t.register(name, { files: 300 })
    const spilled: string[] = []
    for await (const f of t.deps.control.io.list(t.deps.control.spillPrefix)) spilled.push(f.path)
    expect(spilled).toHaveLength(1)
    expect(await commitTable(t.deps, name)).toMatchObject({ status: 'committed', files: 300 })
    expect(sorted(await t.livePaths(name))).toEqual(sorted(files.map((f) => f.filePath)))
    expect(await t.deps.control.io.exists(spilled[0]!)).toBe(false)
  })

  it('commits at most commitMaxBatches per snapshot, in offset order, and the rest next time', async () => {
    const t = await testCommit({ commitMaxBatches: 2 })
    const { name } = await t.table()
    for (let i = 0; i < 5; i++) await t.register(name, { count: 10 })
    const first = await commitTable(t.deps, name)
    expect(first).toMatchObject({ status: 'committed', batches: 2, pending: 5 })
    let { metadata } = await t.catalog.loadTable(parseTableId(name))
    expect(committedOffsets(metadata, 'p1').offsets.get('events-0')).toBe(20n)
    await commitTable(t.deps, name)
    await commitTable(t.deps, name)
    ;({ metadata } = await t.catalog.loadTable(parseTableId(name)))
    expect(committedOffsets(metadata, 'p1').offsets.get('events-0')).toBe(50n)
    expect(await t.livePaths(name)).toHaveLength(5)
  })
})
