import { describe, expect, it } from 'vitest'
import { committedOffsets, coverage, formatOffsets, mergeOffsets, parseOffsets, validThroughTs } from '../../lib/commit/offsets.js'
import type { Snapshot, TableMetadata } from '../../lib/iceberg/types.js'
import { range } from '../control/context.js'

const snap = (id: bigint, parent: bigint | undefined, summary: Record<string, string>): Snapshot => ({
  'snapshot-id': id,
  ...(parent !== undefined ? { 'parent-snapshot-id': parent } : {}),
  'timestamp-ms': 0,
  summary: { operation: 'append', ...summary },
})
const md = (snapshots: Snapshot[], current: bigint) => ({ snapshots, 'current-snapshot-id': current, refs: {} }) as unknown as TableMetadata

describe('snapshot summary offsets', () => {
  it('round-trips offsets beyond 2^53 exactly', () => {
    const offsets = new Map([['orders-0', 9007199254740993n], ['a-b-1', 5n]])
    const text = formatOffsets(offsets)
    expect(text).toBe('{"a-b-1":5,"orders-0":9007199254740993}')
    expect(parseOffsets(text)).toEqual(offsets)
  })

  it("walks back past other engines' snapshots to the newest one with this pipeline's key", () => {
    const table = md(
      [
        snap(1n, undefined, { 'floe.offsets.p1': '{"t-0":10}' }),
        snap(2n, 1n, { 'floe.offsets.p1': '{"t-0":20}', 'floe.offsets.other': '{"t-0":99}' }),
        snap(3n, 2n, { 'spark.app.id': 'compaction' }),
      ],
      3n,
    )
    const c = committedOffsets(table, 'p1')
    expect(c.offsets).toEqual(new Map([['t-0', 20n]]))
    expect(c.snapshot?.['snapshot-id']).toBe(2n)
    expect(committedOffsets(table, 'nope').offsets.size).toBe(0)
  })

  it('names the snapshot when the offsets are not JSON', () => {
    expect(() => committedOffsets(md([snap(7n, undefined, { 'floe.offsets.p1': '{bad' })], 7n), 'p1')).toThrow(/snapshot 7: floe offsets are not JSON/)
  })

  it('a batch is covered only when every range ends at or below the committed offset', () => {
    const offsets = new Map([['t-0', 10n], ['t-1', 5n]])
    expect(coverage([range('t', 0, 0n, 10n), range('t', 1, 0n, 5n)], offsets)).toBe('covered')
    expect(coverage([range('t', 0, 10n, 12n)], offsets)).toBe('uncovered')
    expect(coverage([range('t', 0, 0n, 10n), range('t', 1, 5n, 6n)], offsets)).toBe('partial')
    expect(coverage([range('t', 2, 0n, 1n)], offsets)).toBe('uncovered')
  })

  it('merging never moves an offset backwards and carries other partitions forward', () => {
    const merged = mergeOffsets(new Map([['t-0', 50n], ['t-9', 3n]]), [{ ranges: [range('t', 0, 10n, 20n), range('t', 1, 0n, 7n)] }])
    expect(merged).toEqual(new Map([['t-0', 50n], ['t-9', 3n], ['t-1', 7n]]))
  })

  it('valid-through is the minimum over partitions of each partition’s latest timestamp', () => {
    expect(validThroughTs([
      { ranges: [range('t', 0, 0n, 1n, 100), range('t', 1, 0n, 1n, 300)] },
      { ranges: [range('t', 0, 1n, 2n, 200)] },
    ])).toBe(200)
    expect(validThroughTs([])).toBeUndefined()
  })
})
