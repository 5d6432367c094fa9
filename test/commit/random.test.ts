/**
 * A seeded random walk over the commit protocol: registrations on several partitions, commits that
 * crash before or after the swap, concurrent committers, foreign appends. At the end every
 * registered file is in the table exactly once, and the summary offsets equal the checkpoints.
 */
import { describe, expect, it } from 'vitest'
import { parseTableId } from '../../lib/catalog/index.js'
import { committedOffsets } from '../../lib/commit/offsets.js'
import { commitTable } from '../../lib/commit/table.js'
import { listCheckpoints } from '../../lib/control/checkpoints.js'
import { appendFiles } from '../../lib/iceberg/append.js'
import { fakeDataFile } from '../control/context.js'
import { testCommit } from './context.js'

/** mulberry32: a tiny deterministic PRNG, so a failure replays with the same seed. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const crash = () => {
  throw new Error('simulated crash')
}

describe('commit protocol random walk', () => {
  for (const seed of [1, 2]) {
    it(`seed ${seed}: every registered file ends in the table exactly once`, async () => {
      const random = prng(seed)
      const t = await testCommit({ commitMaxBatches: 3 })
      const { name, location } = await t.table()
      const expected: string[] = []
      for (let step = 0; step < 40; step++) {
        const r = random()
        if (r < 0.45) {
          const files = await t.register(name, { partition: Math.floor(random() * 3), count: 1 + Math.floor(random() * 5), files: 1 + Math.floor(random() * 2) })
          expected.push(...files.map((f) => f.filePath))
        } else if (r < 0.6) {
          await commitTable(t.deps, name, { hooks: { afterSwap: crash } })
        } else if (r < 0.7) {
          await commitTable(t.deps, name, { hooks: { beforeSwap: crash } })
        } else if (r < 0.8) {
          await Promise.all([commitTable(t.deps, name), commitTable(t.deps, name)])
        } else if (r < 0.87) {
          const id = parseTableId(name)
          const { metadata, metadataLocation } = await t.catalog.loadTable(id)
          const foreign = fakeDataFile(location)
          await t.catalog.commit(id, { base: metadataLocation, metadata: await appendFiles(t.deps.io, metadata, [foreign]) })
          expected.push(foreign.filePath)
        } else {
          await commitTable(t.deps, name)
        }
      }
      for (let i = 0; i < 50; i++) {
        const result = await commitTable(t.deps, name)
        if (result.status === 'idle') break
      }
      expect((await t.livePaths(name)).sort()).toEqual(expected.sort())
      const { metadata } = await t.catalog.loadTable(parseTableId(name))
      const checkpoints = Object.fromEntries((await listCheckpoints(t.deps.control, 'p1')).map((c) => [`${c.topic}-${c.partition}`, c.next]))
      expect(Object.fromEntries(committedOffsets(metadata, 'p1').offsets)).toEqual(checkpoints)
    }, 240_000)
  }
})
