import { describe, expect, it } from 'vitest'
import * as fc from 'fast-check'
import { selectBatches } from '../../lib/commit/select.js'
import type { PendingBatch } from '../../lib/control/types.js'
import { range } from '../control/context.js'

const batch = (id: string, createdAt: number, ranges: ReturnType<typeof range>[], bytes = 100): PendingBatch => ({
  table: 'db.t', batchId: id, writerId: 'w', createdAt, schemaId: 0, specId: 0, ranges, recordCount: 1, bytes, fileCount: 1,
})

describe('selectBatches', () => {
  it('takes batches in offset order per partition even when their clocks disagree', () => {
    const b1 = batch('b1', 300, [range('t', 0, 0n, 10n)])
    const b2 = batch('b2', 100, [range('t', 0, 10n, 20n)])
    expect(selectBatches([b2, b1], { maxBatches: 10, maxBytes: 1e9 }).map((b) => b.batchId)).toEqual(['b1', 'b2'])
  })

  it('stops at the batch limit without skipping an earlier batch of any partition', () => {
    const a = batch('a', 1, [range('t', 0, 0n, 10n)])
    const b = batch('b', 2, [range('t', 0, 10n, 20n), range('t', 1, 0n, 5n)])
    const c = batch('c', 3, [range('t', 1, 5n, 9n)])
    expect(selectBatches([c, b, a], { maxBatches: 1, maxBytes: 1e9 }).map((x) => x.batchId)).toEqual(['a'])
    expect(selectBatches([c, b, a], { maxBatches: 2, maxBytes: 1e9 }).map((x) => x.batchId)).toEqual(['a', 'b'])
  })

  it('stops at the byte limit but always takes one batch', () => {
    const a = batch('a', 1, [range('t', 0, 0n, 10n)], 500)
    const b = batch('b', 2, [range('t', 0, 10n, 20n)], 500)
    expect(selectBatches([a, b], { maxBatches: 10, maxBytes: 100 }).map((x) => x.batchId)).toEqual(['a'])
    expect(selectBatches([a, b], { maxBatches: 10, maxBytes: 1000 })).toHaveLength(2)
  })

  it('whatever the limits, the selection is a per-partition prefix in offset order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.subarray([0, 1, 2], { minLength: 1 }), fc.integer({ min: 0, max: 1000 })), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 1, max: 25 }),
        (specs, maxBatches) => {
          const next = [0n, 0n, 0n]
          const batches = specs.map(([parts, createdAt], i) =>
            batch(`b${i}`, createdAt, parts.map((p) => {
              const r = range('t', p, next[p]!, next[p]! + 5n)
              next[p] = r.nextOffset
              return r
            })),
          )
          const chosen = selectBatches([...batches].reverse(), { maxBatches, maxBytes: 1e12 })
          expect(chosen.length).toBe(Math.min(maxBatches, batches.length))
          const ids = new Set(chosen.map((b) => b.batchId))
          // Every earlier batch sharing a partition with a taken batch is taken too (registration order is offset order).
          const missing = chosen.flatMap((b) =>
            batches
              .slice(0, batches.indexOf(b))
              .filter((earlier) => earlier.ranges.some((r) => b.ranges.some((s) => s.partition === r.partition)) && !ids.has(earlier.batchId))
              .map((earlier) => `${earlier.batchId} before ${b.batchId}`),
          )
          expect(missing).toEqual([])
        },
      ),
    )
  })
})
