/**
 * The scanner lane on partitioned tables (lib/writer/scan-partition.ts): where every row a
 * batch scanned for a table has one partition value, the lane writes them as one file of that
 * value — the same rows, metrics, ranges, partition tuples and paths as the present path —
 * and where they have two (a batch across midnight, two cities, a source null in some rows only)
 * or the spec has a transform that does not keep order (bucket), every record takes the present
 * path; so does a batch whose one value the present path refuses (a date a path cannot spell, a
 * value past FLOE_MAX_PARTITION_VALUE_BYTES), which then dead-letters its records. Both are compared with the lane off (lane-compare.ts). DynamoDB Local and s3rver.
 */
import { describe, expect, it } from 'vitest'
import type { DataFile } from '../../lib/iceberg/types.js'
import { compileScanner } from '../../lib/writer/columnar/index.js'
import { lanePartition, laneSpec } from '../../lib/writer/scan-partition.js'
import { loadConfig } from '../../lib/config.js'
import type { Schema } from '../../lib/schema/index.js'
import { expectSame, laneRun, type Run } from './lane-compare.js'
import type { EventRecord } from './support.js'

const TABLES: Record<string, string[]> = {
  daily: ['day(ts)'],
  monthly_city: ['city', 'month(ts)'],
  prefixed: ['truncate(3, city)', 'year(ts)'],
  hourly_user: ['hour(ts)', 'user'],
  bucketed: ['bucket(4, city)'],
  nothing: ['void(city)', 'day(ts)'],
  // int and date sources (pinned types), negative ints under truncate.
  dated: ['d', 'truncate(10, n)'],
  // Before 1970 (floor division), a long past 2^53.
  early: ['hour(ts)', 'user'],
  // Multi-byte code points under truncate.
  zurich: ['truncate(2, city)'],
  nulls: ['city'],
  // A date a path cannot spell; a value longer than FLOE_MAX_PARTITION_VALUE_BYTES: dead letters on both paths.
  baddate: ['d'],
  longcity: ['city'],
}
const PINNED = { columns: { d: 'date', n: 'int' } }
const ROUTES = JSON.stringify({
  defaultNamespace: 'sp',
  routes: Object.keys(TABLES).map((t) => ({ topic: t, table: t })),
  tables: Object.fromEntries(Object.entries(TABLES).map(([t, partitionBy]) => [t, { partitionBy, ...(t === 'dated' || t === 'baddate' ? PINNED : {}) }])),
})
const T0 = Date.parse('2024-05-01T10:00:00Z')

const rec = (i: number, over: Record<string, unknown> = {}): Record<string, unknown> => ({
  id: i,
  user: 9_007_199_254_740_000,
  ts: new Date(T0 + i * 37).toISOString(),
  amount: i / 3 + 0.25,
  city: 'Oslo',
  tags: i % 4 === 0 ? null : ['a', `t${i % 10}`],
  d: '2024-05-01',
  n: -11 - (i % 9),
  ...over,
})

/** `n` records of `topic` from offset `from`, each `over(i)` applied. */
const records = (topic: string, from: number, n: number, over: (i: number) => Record<string, unknown> = () => ({})): EventRecord[] =>
  Array.from({ length: n }, (_, i) => ({ topic, partition: i % 2, offset: from + i, value: rec(i, over(i)) }))

/** The record with its `user` the long `v` (past 2^53: JSON text, not a JS number). */
const withUser =
  (v: bigint) =>
  (r: EventRecord): EventRecord => ({ ...r, value: JSON.stringify(r.value).replace('"user":9007199254740000', `"user":${v}`) })

/** Every table created from records with every field present. */
const seed = (): EventRecord[] => Object.keys(TABLES).flatMap((t) => records(t, 0, 4))

const run = (scan: boolean, batches: EventRecord[][]): Promise<Run> => laneRun(scan, batches, { FLOE_ROUTES: ROUTES })

/** Each file of a table as its partition tuple, record count and partition path (the path's directories after `data/`, hash dirs aside). */
const files = (x: Run, table: string): string[] =>
  (x.files.get(`sp.${table}`) ?? [])
    .map((f: DataFile) => `${JSON.stringify(f.partition, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))} ${f.recordCount} ${partitionDirs(f.filePath)}`)
    .sort()
const partitionDirs = (path: string): string => path.split('/').filter((d) => d.includes('=')).join('/')

describe('FLOE_WRITER_SCAN on partitioned tables', () => {
  it('writes a batch of one partition value as one file of it, the same as the present path', async () => {
    const early = Date.parse('1969-12-31T23:00:00Z')
    const one = [
      ...records('daily', 100, 300),
      ...records('monthly_city', 100, 300),
      ...records('prefixed', 100, 300, (i) => ({ city: `Osl${'o'.repeat(i % 3)}` })),
      ...records('hourly_user', 100, 300),
      ...records('nothing', 100, 300, (i) => ({ city: ['Oslo', 'Lima', null][i % 3] })),
      ...records('dated', 100, 300),
      ...records('early', 100, 300, (i) => ({ ts: new Date(early + i * 11_000).toISOString() })).map(withUser(2n ** 60n + 7n)),
      ...records('zurich', 100, 300, (i) => ({ city: ['Zürich', 'Zürs', 'Zü'][i % 3] })),
      ...records('nulls', 100, 300, () => ({ city: null })),
    ]
    const batches = [seed(), one]
    const [on, off] = [await run(true, batches), await run(false, batches)]
    await expectSame(on, off)
    const lane = ['daily', 'monthly_city', 'prefixed', 'hourly_user', 'nothing', 'dated', 'early', 'zurich', 'nulls']
    expect(on.results[1]!.recordsScanned).toBe(lane.length * 300)
    for (const t of lane) {
      expect(files(on, t), t).toEqual(files(off, t))
      expect(on.results[1]!.tables.find((r) => r.table === `sp.${t}`)!.files, t).toBe(1)
    }
    expect(files(on, 'daily').find((f) => f.includes(' 300 '))).toBe('[19844] 300 ts_day=2024-05-01')
    expect(files(on, 'monthly_city').find((f) => f.includes(' 300 '))).toBe('["Oslo",652] 300 city=Oslo/ts_month=2024-05')
    expect(files(on, 'hourly_user').find((f) => f.includes(' 300 '))).toBe('[476266,"9007199254740000n"] 300 ts_hour=2024-05-01-10/user=9007199254740000')
    expect(files(on, 'dated').find((f) => f.includes(' 300 '))).toBe('[19844,-20] 300 d=2024-05-01/n_trunc=-20')
    expect(files(on, 'early').find((f) => f.includes(' 300 '))).toBe('[-1,"1152921504606846983n"] 300 ts_hour=1969-12-31-23/user=1152921504606846983')
    expect(files(on, 'zurich').find((f) => f.includes(' 300 '))).toBe('["Zü"] 300 city_trunc=Z%C3%BC')
    expect(files(on, 'nulls').find((f) => f.includes(' 300 '))).toBe('[null] 300 city=null')
  }, 120_000)

  it('gives back a batch whose rows span two partition values, or a source null in some rows only; never reads a bucketed table', async () => {
    const two = [
      // Across midnight: two days.
      ...records('daily', 100, 300, (i) => ({ ts: new Date(Date.parse('2024-05-01T23:59:59Z') + i * 7).toISOString() })),
      ...records('monthly_city', 100, 300, (i) => ({ city: i < 299 ? 'Oslo' : 'Lima' })),
      // truncate(3): "Osl" and "Lim".
      ...records('prefixed', 100, 300, (i) => ({ city: i === 150 ? 'Lima' : 'Oslo' })),
      ...records('hourly_user', 100, 300, (i) => ({ user: i === 7 ? null : 9_007_199_254_740_000 })),
      ...records('bucketed', 100, 300),
      ...records('baddate', 100, 5, () => ({ d: 1_717_171_717 })),
      ...records('longcity', 100, 5, () => ({ city: 'x'.repeat(300) })),
    ]
    const batches = [seed(), two]
    const [on, off] = [await run(true, batches), await run(false, batches)]
    await expectSame(on, off)
    expect(on.results[1]!.recordsScanned).toBe(0)
    expect(on.results[1]!.deadLetters).toBe(10)
    for (const t of ['daily', 'monthly_city', 'prefixed', 'hourly_user', 'bucketed']) expect(files(on, t), t).toEqual(files(off, t))
    expect(on.results[1]!.tables.find((r) => r.table === 'sp.daily')!.files).toBe(2)
  }, 120_000)
})

describe('lanePartition', () => {
  const schema: Schema = {
    type: 'struct',
    'schema-id': 0,
    fields: [
      { id: 1, name: 'id', required: false, type: 'long' },
      { id: 2, name: 'ts', required: false, type: 'timestamptz' },
      { id: 3, name: 'city', required: false, type: 'string' },
      { id: 4, name: 'amount', required: false, type: 'double' },
      { id: 5, name: 'at', required: false, type: { type: 'struct', fields: [{ id: 6, name: 'day', required: false, type: 'date' }] } },
    ],
  }
  const spec = (...fields: [string, number][]) => ({ 'spec-id': 1, fields: fields.map(([transform, source], k) => ({ 'source-id': source, 'field-id': 1000 + k, name: `p${k}`, transform })) })
  const limits = loadConfig({}, { FLOE_WAREHOUSE: 's3://bucket/warehouse' }).limits
  const none = () => undefined
  const scanned = (...rows: string[]) => {
    const scanner = compileScanner(schema, limits)!
    for (const r of rows) expect(scanner.add(Buffer.from(r)), r).toBe(true)
    return scanner
  }

  it('is the least and greatest rows\' tuple when they are one; undefined when they differ', () => {
    const s = scanned('{"id":5,"ts":"2024-05-01T00:00:00Z","city":"Oslo"}', '{"id":-3,"ts":"2024-05-01T23:59:59.999999Z","city":"Oslo"}')
    expect(lanePartition(spec(['day', 2], ['identity', 3]), schema, s, none)).toEqual([19844, 'Oslo'])
    expect(lanePartition(spec(['truncate[10]', 1]), schema, s, none)).toBeUndefined()
    expect(lanePartition(spec(['truncate[2]', 3], ['year', 2]), schema, s, none)).toEqual(['Os', 54])
    expect(lanePartition(spec(['hour', 2]), schema, s, none)).toBeUndefined()
    expect(lanePartition(spec(['void', 4]), schema, s, none)).toEqual([null])
    expect(lanePartition(spec(), schema, s, none)).toEqual([])
  })

  it('a source null in every row is a null value; in some rows only, two values', () => {
    expect(lanePartition(spec(['identity', 3]), schema, scanned('{"id":1}', '{"id":2,"city":null}'), none)).toEqual([null])
    expect(lanePartition(spec(['identity', 3]), schema, scanned('{"id":1}', '{"id":2,"city":"Oslo"}'), none)).toBeUndefined()
  })

  it('refuses a tuple whose path the present path refuses, or whose check throws', () => {
    const s = scanned('{"id":5,"city":"Oslo"}')
    expect(lanePartition(spec(['identity', 3]), schema, s, () => 'too long')).toBeUndefined()
    expect(
      lanePartition(spec(['identity', 3]), schema, s, () => {
        throw new Error('date out of range')
      }),
    ).toBeUndefined()
  })

  it('checks only top-level int, long, date, timestamp and string sources under ordered transforms', () => {
    // A transform Floe does not know (another engine's metadata): not the lane's, and no throw.
    expect(laneSpec(spec(['zorder', 3]), schema)).toBe(false)
    expect(laneSpec(spec(['day', 2], ['identity', 3], ['truncate[2]', 1], ['void', 4]), schema)).toBe(true)
    expect(laneSpec(spec(['bucket[4]', 3]), schema)).toBe(false)
    expect(laneSpec(spec(['identity', 4]), schema)).toBe(false)
    expect(laneSpec(spec(['day', 6]), schema)).toBe(false)
  })
})
