/**
 * The scanner lane on partitioned tables (lib/writer/scan-partition.ts): where every row a
 * batch scanned for a table has one partition value, the lane writes them as one file of that
 * value — the same rows, metrics, ranges, partition tuples and paths as the present path —
 * and where they have two (a batch across midnight, two cities, a source null in some rows only)
 * or the spec has a transform that does not keep order (bucket), every record takes the present
 * path. Both are compared with the lane off (lane-compare.ts). DynamoDB Local and s3rver.
 */
import { describe, expect, it } from 'vitest'
import type { DataFile } from '../../lib/iceberg/types.js'
import { compileScanner } from '../../lib/writer/columnar/index.js'
import { lanePartition, laneSpec } from '../../lib/writer/scan-partition.js'
import { loadConfig } from '../../lib/config.js'
import type { Schema } from '../../lib/schema/index.js'
import { expectSame, laneRun, type Run } from './lane-compare.js'
import type { EventRecord } from './support.js'

const TABLES = {
  daily: ['day(ts)'],
  monthly_city: ['city', 'month(ts)'],
  prefixed: ['truncate(3, city)', 'year(ts)'],
  hourly_user: ['hour(ts)', 'user'],
  bucketed: ['bucket(4, city)'],
  nothing: ['void(city)', 'day(ts)'],
}
const ROUTES = JSON.stringify({
  defaultNamespace: 'sp',
  routes: Object.keys(TABLES).map((t) => ({ topic: t, table: t })),
  tables: Object.fromEntries(Object.entries(TABLES).map(([t, partitionBy]) => [t, { partitionBy }])),
})
const T0 = Date.parse('2024-05-01T10:00:00Z')

const rec = (i: number, over: Record<string, unknown> = {}): Record<string, unknown> => ({
  id: i,
  user: 9_007_199_254_740_000,
  ts: new Date(T0 + i * 37).toISOString(),
  amount: i / 3 + 0.25,
  city: 'Oslo',
  tags: i % 4 === 0 ? null : ['a', `t${i % 10}`],
  ...over,
})

/** `n` records of `topic` from offset `from`, each `over(i)` applied. */
const records = (topic: string, from: number, n: number, over: (i: number) => Record<string, unknown> = () => ({})): EventRecord[] =>
  Array.from({ length: n }, (_, i) => ({ topic, partition: i % 2, offset: from + i, value: rec(i, over(i)) }))

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
    const one = [
      ...records('daily', 100, 300),
      ...records('monthly_city', 100, 300),
      ...records('prefixed', 100, 300, (i) => ({ city: `Osl${'o'.repeat(i % 3)}` })),
      ...records('hourly_user', 100, 300),
      ...records('nothing', 100, 300, (i) => ({ city: ['Oslo', 'Lima', null][i % 3] })),
    ]
    const batches = [seed(), one]
    const [on, off] = [await run(true, batches), await run(false, batches)]
    await expectSame(on, off)
    expect(on.results[1]!.recordsScanned).toBe(5 * 300)
    for (const t of ['daily', 'monthly_city', 'prefixed', 'hourly_user', 'nothing']) {
      expect(files(on, t), t).toEqual(files(off, t))
      expect(on.results[1]!.tables.find((r) => r.table === `sp.${t}`)!.files, t).toBe(1)
    }
    expect(files(on, 'daily').find((f) => f.includes(' 300 '))).toBe('[19844] 300 ts_day=2024-05-01')
    expect(files(on, 'monthly_city').find((f) => f.includes(' 300 '))).toBe('["Oslo",652] 300 city=Oslo/ts_month=2024-05')
    expect(files(on, 'hourly_user').find((f) => f.includes(' 300 '))).toBe('[476266,"9007199254740000n"] 300 ts_hour=2024-05-01-10/user=9007199254740000')
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
    ]
    const batches = [seed(), two]
    const [on, off] = [await run(true, batches), await run(false, batches)]
    await expectSame(on, off)
    expect(on.results[1]!.recordsScanned).toBe(0)
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
  const scanned = (...rows: string[]) => {
    const scanner = compileScanner(schema, limits)!
    for (const r of rows) expect(scanner.add(Buffer.from(r)), r).toBe(true)
    return scanner
  }

  it('is the least and greatest rows\' tuple when they are one; undefined when they differ', () => {
    const s = scanned('{"id":5,"ts":"2024-05-01T00:00:00Z","city":"Oslo"}', '{"id":-3,"ts":"2024-05-01T23:59:59.999999Z","city":"Oslo"}')
    expect(lanePartition(spec(['day', 2], ['identity', 3]), schema, s)).toEqual([19844, 'Oslo'])
    expect(lanePartition(spec(['truncate[10]', 1]), schema, s)).toBeUndefined()
    expect(lanePartition(spec(['truncate[2]', 3], ['year', 2]), schema, s)).toEqual(['Os', 54])
    expect(lanePartition(spec(['hour', 2]), schema, s)).toBeUndefined()
    expect(lanePartition(spec(['void', 4]), schema, s)).toEqual([null])
    expect(lanePartition(spec(), schema, s)).toEqual([])
  })

  it('a source null in every row is a null value; in some rows only, two values', () => {
    expect(lanePartition(spec(['identity', 3]), schema, scanned('{"id":1}', '{"id":2,"city":null}'))).toEqual([null])
    expect(lanePartition(spec(['identity', 3]), schema, scanned('{"id":1}', '{"id":2,"city":"Oslo"}'))).toBeUndefined()
  })

  it('checks only top-level int, long, date, timestamp and string sources under ordered transforms', () => {
    expect(laneSpec(spec(['day', 2], ['identity', 3], ['truncate[2]', 1], ['void', 4]), schema)).toBe(true)
    expect(laneSpec(spec(['bucket[4]', 3]), schema)).toBe(false)
    expect(laneSpec(spec(['identity', 4]), schema)).toBe(false)
    expect(laneSpec(spec(['day', 6]), schema)).toBe(false)
  })
})
