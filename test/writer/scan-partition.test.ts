/**
 * The scanner lane on partitioned tables (lib/writer/scan-partition.ts): the lane writes a table's
 * rows as one file per partition value — the same rows, metrics, ranges, partition tuples, paths
 * and file bytes as the present path — whether a batch has one value (found from the rows'
 * least and greatest source values) or several (a batch across midnight, interleaved cities, a
 * source null in some rows only, a bucket: each row's tuple, the file's rows gathered from the
 * columns). A batch with a value the present path refuses (a date a path cannot spell, a value past
 * FLOE_MAX_PARTITION_VALUE_BYTES) gives its records to the present path, which dead-letters them.
 * Both are compared with the lane off (lane-compare.ts). DynamoDB Local and s3rver.
 */
import { describe, expect, it } from 'vitest'
import type { DataFile } from '../../lib/iceberg/types.js'
import { compileScanner } from '../../lib/writer/columnar/index.js'
import { laneFiles, laneSpec } from '../../lib/writer/scan-partition.js'
import { fileBytes, NO_CHARGES, noteCharge, PLACE_BYTES, splitBytes } from '../../lib/writer/scan-files.js'
import type { Lane } from '../../lib/writer/scan-tables.js'
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
  // A value per record.
  ids: ['id'],
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

/** Each file of a table as its partition tuple, record count, partition path (the path's directories after `data/`, hash dirs aside) and size in bytes. */
const files = (x: Run, table: string): string[] =>
  (x.files.get(`sp.${table}`) ?? [])
    .map((f: DataFile) => `${JSON.stringify(f.partition, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))} ${f.recordCount} ${partitionDirs(f.filePath)} ${f.fileSizeInBytes}B`)
    .sort()
/** The table's file of 300 records, its size aside. */
const of300 = (x: Run, table: string): string | undefined => files(x, table).find((f) => f.includes(' 300 '))?.replace(/ \d+B$/, '')
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
    expect(of300(on, 'daily')).toBe('[19844] 300 ts_day=2024-05-01')
    expect(of300(on, 'monthly_city')).toBe('["Oslo",652] 300 city=Oslo/ts_month=2024-05')
    expect(of300(on, 'hourly_user')).toBe('[476266,"9007199254740000n"] 300 ts_hour=2024-05-01-10/user=9007199254740000')
    expect(of300(on, 'dated')).toBe('[19844,-20] 300 d=2024-05-01/n_trunc=-20')
    expect(of300(on, 'early')).toBe('[-1,"1152921504606846983n"] 300 ts_hour=1969-12-31-23/user=1152921504606846983')
    expect(of300(on, 'zurich')).toBe('["Zü"] 300 city_trunc=Z%C3%BC')
    expect(of300(on, 'nulls')).toBe('[null] 300 city=null')
  }, 120_000)

  it('writes a batch whose rows span several values as one file per value, the same as the present path', async () => {
    const cities = ['Oslo', 'Lima', 'Pune', 'Bern', 'Kyiv']
    const several = [
      // Across midnight: two days.
      ...records('daily', 100, 300, (i) => ({ ts: new Date(Date.parse('2024-05-01T23:59:59Z') + i * 7).toISOString() })),
      // Interleaved cities (each row another value than the last), one month.
      ...records('monthly_city', 100, 300, (i) => ({ city: cities[(i * 7) % 5] })),
      // truncate(3): "Osl" and "Lim", one row of one of them.
      ...records('prefixed', 100, 300, (i) => ({ city: i === 150 ? 'Lima' : 'Oslo' })),
      // Across the hour, and a null user in one row: three values.
      ...records('hourly_user', 100, 300, (i) => ({ ts: new Date(Date.parse('2024-05-01T10:59:59.990Z') + i * 1_000).toISOString(), user: i === 7 ? null : 9_007_199_254_740_000 })),
      // Bucket: no order, each row's hash.
      ...records('bucketed', 100, 300, (i) => ({ city: `c${i % 23}` })),
      // A long past 2^53 varying within the hour before 1970; an int source under truncate.
      ...records('early', 100, 300, (i) => ({ ts: new Date(Date.parse('1969-12-31T23:59:00Z') + i * 1_000).toISOString() })).map((r, i) => withUser(2n ** 60n + BigInt(i % 3))(r)),
      ...records('dated', 100, 300, (i) => ({ d: i < 100 ? '2024-05-01' : '1969-12-31', n: i - 150 })),
      ...records('nulls', 100, 300, (i) => ({ city: i % 2 ? null : 'Oslo' })),
      ...records('baddate', 100, 5, (i) => ({ d: i === 2 ? 1_717_171_717 : 19_844 })),
      ...records('longcity', 100, 5, (i) => ({ city: i === 4 ? 'x'.repeat(300) : 'Oslo' })),
    ]
    const batches = [seed(), several]
    const [on, off] = [await run(true, batches), await run(false, batches)]
    await expectSame(on, off)
    const lane = ['daily', 'monthly_city', 'prefixed', 'hourly_user', 'bucketed', 'early', 'dated', 'nulls']
    // A table with a value the present path refuses is not the lane's: its good records take the present path too.
    expect(on.results[1]!.recordsScanned).toBe(lane.length * 300)
    expect(on.results[1]!.deadLetters).toBe(2)
    for (const t of [...lane, 'baddate', 'longcity']) expect(files(on, t), t).toEqual(files(off, t))
    const count = (t: string) => on.results[1]!.tables.find((r) => r.table === `sp.${t}`)!.files
    expect(lane.map(count)).toEqual([2, 5, 2, 3, expect.any(Number), 3 * 2, expect.any(Number), 2])
    expect(count('bucketed')).toBeGreaterThan(1)
    expect(count('dated')).toBeGreaterThan(20)
  }, 120_000)

  it('gives a table of more partition values than its memory share holds files for to the present path', async () => {
    const cities = ['Oslo', 'Lima', 'Pune', 'Bern', 'Kyiv']
    const batch = [...records('ids', 100, 300), ...records('monthly_city', 100, 300, (i) => ({ city: cities[i % 5] }))]
    // 1 MB: the lane's half holds ~160 files of ~2.3 KB besides its rows; 300 ids are 300 files.
    const batches = [seed(), batch]
    const settings = { FLOE_ROUTES: ROUTES, FLOE_MEMORY_BUDGET_MB: '1' }
    const [on, off] = [await laneRun(true, batches, settings), await laneRun(false, batches, settings)]
    await expectSame(on, off)
    expect(on.results[1]!.recordsScanned).toBe(300)
    for (const t of ['ids', 'monthly_city']) expect(files(on, t), t).toEqual(files(off, t))
    expect(on.results[1]!.tables.find((r) => r.table === 'sp.ids')!.files).toBe(300)
  }, 120_000)
})

describe('laneFiles', () => {
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
  /** Room for more files than any of these scanners has rows. */
  const ROOM = 1_000
  const scanned = (...rows: string[]) => {
    const scanner = compileScanner(schema, limits)!
    for (const r of rows) expect(scanner.add(Buffer.from(r)), r).toBe(true)
    return scanner
  }

  const one = (partition: unknown[]) => [{ partition }]
  const rowsOf = (out: ReturnType<typeof laneFiles>) => out?.map((f) => [f.partition, f.rows && [...f.rows]])

  it('is one file of the least and greatest rows\' tuple when they are one; a file per value, rows in order, when not', () => {
    const s = scanned('{"id":5,"ts":"2024-05-01T00:00:00Z","city":"Oslo"}', '{"id":-3,"ts":"2024-05-01T23:59:59.999999Z","city":"Oslo"}', '{"id":7,"ts":"2024-05-01T00:30:00Z","city":"Oslo"}')
    expect(laneFiles(spec(['day', 2], ['identity', 3]), schema, s, none, ROOM)).toEqual(one([19844, 'Oslo']))
    expect(rowsOf(laneFiles(spec(['truncate[10]', 1]), schema, s, none, ROOM))).toEqual([[[0n], [0, 2]], [[-10n], [1]]])
    expect(laneFiles(spec(['truncate[2]', 3], ['year', 2]), schema, s, none, ROOM)).toEqual(one(['Os', 54]))
    expect(rowsOf(laneFiles(spec(['hour', 2]), schema, s, none, ROOM))).toEqual([[[476256], [0, 2]], [[476279], [1]]])
    expect(laneFiles(spec(['void', 4]), schema, s, none, ROOM)).toEqual(one([null]))
    expect(laneFiles(spec(), schema, s, none, ROOM)).toEqual(one([]))
    // Bucket keeps no order: each row's hash; one value when every row hashes alike.
    expect(laneFiles(spec(['bucket[4]', 3]), schema, s, none, ROOM)).toEqual([{ partition: [expect.any(Number)] }])
    expect(rowsOf(laneFiles(spec(['bucket[1000]', 1]), schema, s, none, ROOM))!.map(([, rows]) => rows)).toEqual([[0], [1], [2]])
  })

  it('groups timestamps by hour, day, month and year exactly at the boundaries, before 1970 too', () => {
    const at = (...ts: string[]) => scanned(...ts.map((t, i) => `{"id":${i},"ts":"${t}"}`))
    const edges = at('2023-12-31T23:59:59.999999Z', '2024-01-01T00:00:00Z', '1969-12-31T23:59:59.999999Z', '1970-01-01T00:00:00Z', '2023-12-31T23:00:00Z', '1969-12-31T00:00:00Z')
    expect(rowsOf(laneFiles(spec(['year', 2]), schema, edges, none, ROOM))).toEqual([[[53], [0, 4]], [[54], [1]], [[-1], [2, 5]], [[0], [3]]])
    expect(rowsOf(laneFiles(spec(['month', 2]), schema, edges, none, ROOM))).toEqual([[[647], [0, 4]], [[648], [1]], [[-1], [2, 5]], [[0], [3]]])
    expect(rowsOf(laneFiles(spec(['day', 2]), schema, edges, none, ROOM))).toEqual([[[19722], [0, 4]], [[19723], [1]], [[-1], [2, 5]], [[0], [3]]])
    expect(rowsOf(laneFiles(spec(['hour', 2]), schema, edges, none, ROOM))).toEqual([[[473351], [0, 4]], [[473352], [1]], [[-1], [2]], [[0], [3]], [[-24], [5]]])
  })

  it('a source null in every row is one null value; in some rows only, a file of the nulls', () => {
    expect(laneFiles(spec(['identity', 3]), schema, scanned('{"id":1}', '{"id":2,"city":null}'), none, ROOM)).toEqual(one([null]))
    expect(rowsOf(laneFiles(spec(['identity', 3]), schema, scanned('{"id":1}', '{"id":2,"city":"Oslo"}', '{"id":3}'), none, ROOM))).toEqual([
      [[null], [0, 2]],
      [['Oslo'], [1]],
    ])
  })

  it('refuses a tuple whose path the present path refuses, or whose check throws', () => {
    const s = scanned('{"id":5,"city":"Oslo"}', '{"id":6,"city":"Lima"}')
    expect(laneFiles(spec(['identity', 3]), schema, s, (p) => (p[0] === 'Lima' ? 'too long' : undefined), ROOM)).toBeUndefined()
    expect(
      laneFiles(
        spec(['identity', 3]),
        schema,
        s,
        () => {
          throw new Error('date out of range')
        },
        ROOM,
      ),
    ).toBeUndefined()
  })

  it('refuses rows of more values than it has room for files', () => {
    const s = scanned('{"id":1,"city":"Oslo"}', '{"id":2,"city":"Lima"}', '{"id":3,"city":"Pune"}', '{"id":4,"city":"Oslo"}')
    expect(laneFiles(spec(['identity', 3]), schema, s, none, 2)).toBeUndefined()
    expect(laneFiles(spec(['identity', 3]), schema, s, none, 3)).toHaveLength(3)
    // One value needs no room: it is the rows as they are.
    expect(laneFiles(spec(['identity', 3]), schema, scanned('{"id":1,"city":"Oslo"}'), none, 0)).toEqual(one(['Oslo']))
  })

  it('checks only top-level int, long, date, timestamp and string sources under the transforms it computes', () => {
    // A transform Floe does not know (another engine's metadata): not the lane's, and no throw.
    expect(laneSpec(spec(['zorder', 3]), schema)).toBe(false)
    expect(laneSpec(spec(['day', 2], ['identity', 3], ['truncate[2]', 1], ['void', 4]), schema)).toBe(true)
    expect(laneSpec(spec(['bucket[4]', 3], ['bucket[8]', 2]), schema)).toBe(true)
    expect(laneSpec(spec(['identity', 4]), schema)).toBe(false)
    expect(laneSpec(spec(['day', 6]), schema)).toBe(false)
  })
})

describe('splitBytes', () => {
  const scanner = compileScanner({ type: 'struct', fields: [{ id: 1, name: 'city', required: false, type: 'string' }, { id: 2, name: 'n', required: false, type: 'long' }] }, loadConfig({}, { FLOE_WAREHOUSE: 's3://bucket/warehouse' }).limits)!
  const lane = (): Lane => ({ scanner, schemaId: 0, bytes: 0, full: false, released: false, placeBytes: PLACE_BYTES, charges: NO_CHARGES, columnBytes: 0, elements: 0 })

  it('charges each file, and the largest file\'s rows by what they were charged when read, not by their count', () => {
    const l = lane()
    // Three small rows and one large one, noted past the first growth of the charges' array.
    const charges = [...Array.from({ length: 2000 }, () => 40), 90_000]
    charges.forEach((n, r) => noteCharge(l, r, n))
    expect(l.charges.length).toBeGreaterThanOrEqual(2001)
    const many = { partition: ['Oslo'], rows: Int32Array.from({ length: 2000 }, (_, k) => k) }
    const big = { partition: ['Lima'], rows: Int32Array.of(2000) }
    const copy = (bytes: number) => fileBytes(l) + bytes + 170 * scanner.rowBytes
    // The one large row is the larger copy (90 KB against 80 KB), though its file has one row of 2001.
    expect(splitBytes(l, [many, big])).toBe(copy(90_000))
    expect(splitBytes(l, [many, { partition: ['Lima'], rows: Int32Array.of(0) }])).toBe(copy(80_000))
    // One file is the columns as they are: no copy, and its entry was charged with its first row.
    expect(splitBytes(l, [{ partition: ['Oslo'] }])).toBe(0)
  })
})
