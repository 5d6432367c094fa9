import { describe, expect, it } from 'vitest'
import { inSegment, planGroups, segmentPartition } from '../../lib/writer/groups.js'

const p = (key: string, ...tables: string[]) => ({ key, tables: new Set(tables) })

describe('planGroups', () => {
  it('keeps everything in one group while partitions + tables fit in one transaction', () => {
    expect(planGroups([p('a-0', 't1'), p('a-1', 't1', 't2')], 100).map((g) => g.map((s) => s.key))).toEqual([['a-0', 'a-1']])
  })

  it('splits whole partitions into groups of at most the item limit', () => {
    const parts = Array.from({ length: 30 }, (_, i) => p(`t-${i}`, ...Array.from({ length: 5 }, (_x, j) => `tab${(i * 5 + j) % 40}`)))
    const groups = planGroups(parts, 20).map((g) => g.map((s) => s.key))
    expect(groups.flat()).toEqual(parts.map((x) => x.key))
    for (const g of groups) {
      const tables = new Set(g.flatMap((k) => [...parts.find((x) => x.key === k)!.tables]))
      expect(g.length + tables.size).toBeLessThanOrEqual(20)
    }
  })

  it('refuses a single partition that fans out to more tables than one transaction holds', () => {
    expect(() => planGroups([p('a-0', ...Array.from({ length: 100 }, (_, i) => `t${i}`))], 100)).toThrow(/routes to 100 tables/)
  })

  it('cuts a partition fanned out to many tables into offset segments that each fit one transaction, in order', () => {
    const records = Array.from({ length: 250 }, (_, i) => ({ offset: BigInt(10 + i * 2), tables: [`t${i}`, 'shared'] }))
    const segments = segmentPartition('a-0', records, 99)
    expect(segments.map((s) => s.tables.size)).toEqual([99, 99, 55])
    expect(segments.map((s) => [s.from, s.until])).toEqual([
      [undefined, 206n],
      [206n, 402n],
      [402n, undefined],
    ])
    // Every record is in exactly one segment.
    for (const r of records) expect(segments.filter((s) => inSegment(s, r.offset))).toHaveLength(1)
    // Segments of one partition go to successive transactions, never two in one.
    const groups = planGroups([...segments, p('a-1', 'x')], 100)
    expect(groups.map((g) => g.map((s) => s.key))).toEqual([['a-0'], ['a-0'], ['a-0', 'a-1']])
  })

  it('refuses a single record routed to more tables than one transaction holds', () => {
    expect(() => segmentPartition('a-0', [{ offset: 1n, tables: Array.from({ length: 100 }, (_, i) => `t${i}`) }], 99)).toThrow(/one record routes to 100 tables/)
  })
})
