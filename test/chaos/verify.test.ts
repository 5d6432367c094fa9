/** The chaos judge must itself be able to fail: each kind of wrong outcome is caught. */
import { describe, expect, it } from 'vitest'
import { judge, type TableContents } from './verify.js'

const PIPE = 'p1'
const table = (ids: string[], offsets?: Record<string, number>): TableContents => ({
  metadataLocation: 's3://b/t/metadata/00001.metadata.json',
  rows: ids.reduce((m, id) => m.set(id, (m.get(id) ?? 0) + 1), new Map<string, number>()),
  foreignRows: 0,
  dataFiles: [],
  summary: offsets ? { [`floe.offsets.${PIPE}`]: JSON.stringify(offsets) } : {},
  snapshots: 1,
})
// Partition t-0 holds offsets 0, 1, 2 and 5 (a gap); its log-end offset is 6.
const produced = ['t-0@0', 't-0@1', 't-0@2', 't-0@5'].map((id) => ({ id, poison: false }))
const ends = new Map([['t-0', 6n]])
const done = new Map([['t-0', 6n as bigint | undefined]])
const dead = (...ids: string[]) => new Map(ids.map((id) => [id, { count: 1 }]))

describe('chaos judge', () => {
  it('accepts every record once, with summary and checkpoint at the log end', () => {
    const v = judge(produced, [table(['t-0@0', 't-0@1', 't-0@5'], { 't-0': 6 })], dead('t-0@2'), ends, PIPE, done)
    expect(v).toMatchObject({ lost: [], duplicated: [], both: [], offsetMismatches: [], inTable: 3, inDeadLetters: 1 })
  })

  it('finds a lost record, a duplicated one and one in both places', () => {
    const v = judge(produced, [table(['t-0@0', 't-0@0', 't-0@5'], { 't-0': 6 })], dead('t-0@5'), ends, PIPE, done)
    expect(v.lost).toEqual(['t-0@1', 't-0@2'])
    expect(v.duplicated).toEqual(['t-0@0'])
    expect(v.both).toEqual(['t-0@5'])
  })

  it('counts a record dead-lettered twice as duplicated', () => {
    const v = judge(produced, [table(['t-0@0', 't-0@1', 't-0@5'], { 't-0': 6 })], new Map([['t-0@2', { count: 2 }]]), ends, PIPE, done)
    expect(v.duplicated).toEqual(['t-0@2'])
  })

  it('accepts a summary behind the log end only when everything after it is a dead letter', () => {
    const ok = judge(produced, [table(['t-0@0', 't-0@1'], { 't-0': 2 })], dead('t-0@2', 't-0@5'), ends, PIPE, done)
    expect(ok.offsetMismatches).toEqual([])
    const behind = judge(produced, [table(['t-0@0', 't-0@1', 't-0@5'], { 't-0': 2 })], dead('t-0@2'), ends, PIPE, done)
    expect(behind.offsetMismatches).toEqual(['t-0: summary 2 != end 6, and t-0@5 (of 1) after it is not a dead letter'])
  })

  it('rejects a summary past the log end, a missing summary and a checkpoint short of the end', () => {
    const ahead = judge(produced, [table(['t-0@0', 't-0@1', 't-0@5'], { 't-0': 7 })], dead('t-0@2'), ends, PIPE, done)
    expect(ahead.offsetMismatches).toContain('t-0: summary 7 > end 6')
    const none = judge(produced, [table(['t-0@0', 't-0@1', 't-0@5'])], dead('t-0@2'), ends, PIPE, done)
    expect(none.offsetMismatches).toEqual(['t-0: summary undefined != end 6, and t-0@0 (of 3) after it is not a dead letter'])
    const short = judge(produced, [table(['t-0@0', 't-0@1', 't-0@5'], { 't-0': 6 })], dead('t-0@2'), ends, PIPE, new Map([['t-0', 3n]]))
    expect(short.offsetMismatches).toEqual(['t-0: checkpoint 3 != end 6'])
  })
})
