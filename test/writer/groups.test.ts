import { describe, expect, it } from 'vitest'
import { planGroups } from '../../lib/writer/groups.js'

const p = (key: string, ...tables: string[]) => ({ key, tables: new Set(tables) })

describe('planGroups', () => {
  it('keeps everything in one group while partitions + tables fit in one transaction', () => {
    expect(planGroups([p('a-0', 't1'), p('a-1', 't1', 't2')], 100)).toEqual([['a-0', 'a-1']])
  })

  it('splits whole partitions into groups of at most the item limit', () => {
    const parts = Array.from({ length: 30 }, (_, i) => p(`t-${i}`, ...Array.from({ length: 5 }, (_x, j) => `tab${(i * 5 + j) % 40}`)))
    const groups = planGroups(parts, 20)
    expect(groups.flat()).toEqual(parts.map((x) => x.key))
    for (const g of groups) {
      const tables = new Set(g.flatMap((k) => [...parts.find((x) => x.key === k)!.tables]))
      expect(g.length + tables.size).toBeLessThanOrEqual(20)
    }
  })

  it('refuses a single partition that fans out to more tables than one transaction holds', () => {
    expect(() => planGroups([p('a-0', ...Array.from({ length: 100 }, (_, i) => `t${i}`))], 100)).toThrow(/routes to 100 tables/)
  })
})
