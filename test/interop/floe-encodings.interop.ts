/**
 * FLOE_PARQUET_INTEGER_ENCODING=delta read back by real engines: a table of int, long, date and
 * timestamp columns only — so Spark reads it with Iceberg's vectorized Parquet reader, its default
 * path, which before Iceberg 1.10 had no DELTA_BINARY_PACKED — written by two writer invocations
 * and then compacted by Floe (compaction encodes the same way). Values a hostile producer can
 * send side by side (long min next to long max: deltas that overflow 64 bits, int extremes, the
 * first and last day Iceberg engines accept) and nulls. Spark (vectorized and row reads),
 * PyIceberg and DuckDB must each read exactly the records produced.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseTableId } from '../../lib/catalog/index.js'
import { maintain } from '../../lib/cli/maintain.js'
import { liveDataFiles } from '../../lib/iceberg/scan.js'
import type { MaintenanceDeps } from '../../lib/maintenance/types.js'
import { avroEncode } from '../codec/avro-fixtures.js'
import { deltaEncoded } from '../helpers/parquet-encodings.js'
import { startTestRegistry, type TestRegistry } from '../helpers/registry.js'
import { skipReason, startEngines, type Engines, type Json } from './engine.js'
import { commitExactly, startFloe, type Floe } from './floe.js'

const TABLE = 'db.ints'
const LONG_MIN = -(2n ** 63n)
const LONG_MAX = 2n ** 63n - 1n
/** 0001-01-01 and 9999-12-31: the dates (and, at midnight / the last microsecond, the timestamps) every engine here accepts. */
const FIRST_DAY = -719_162
const LAST_DAY = 2_932_896
const DAY_US = 86_400_000_000n

const schema = {
  type: 'record',
  name: 'Ints',
  fields: [
    { name: 'id', type: 'int' },
    { name: 'i', type: ['null', 'int'] },
    { name: 'l', type: ['null', 'long'] },
    { name: 'd', type: ['null', { type: 'int', logicalType: 'date' }] },
    { name: 'ts', type: ['null', { type: 'long', logicalType: 'timestamp-micros' }] },
  ],
}

interface Expected {
  id: number
  i: number | null
  l: bigint | null
  d: number | null
  ts: bigint | null
}
const LONGS = [0n, LONG_MAX, LONG_MIN, LONG_MAX, -1n, LONG_MIN, 1n]
const INTS = [0, 2_147_483_647, -2_147_483_648, 2_147_483_647, -1]
const expected: Expected[] = Array.from({ length: 60 }, (_, id) => ({
  id,
  i: id % 11 === 5 ? null : id < 30 ? INTS[id % INTS.length]! : id * 3,
  l: id % 13 === 7 ? null : id < 40 ? LONGS[id % LONGS.length]! : BigInt(id) * 1_000_003n - 9_007_199_254_740_993n,
  d: id % 17 === 3 ? null : id < 10 ? [FIRST_DAY, LAST_DAY][id % 2]! : 19_000 + id,
  ts: id % 7 === 2 ? null : id < 12 ? [BigInt(FIRST_DAY) * DAY_US, BigInt(LAST_DAY + 1) * DAY_US - 1n][id % 2]! : 1_714_567_890_123_456n + BigInt(id) * 37n,
}))
const datum = (e: Expected) => ({
  id: e.id,
  i: e.i === null ? null : { int: e.i },
  l: e.l === null ? null : { long: e.l },
  d: e.d === null ? null : { int: e.d },
  ts: e.ts === null ? null : { long: e.ts },
})

/** An engine's integer (a `$int` tag beyond 2^53) as bigint. */
const big = (v: Json | undefined): bigint | null => (v === null || v === undefined ? null : typeof v === 'object' && '$int' in v ? BigInt(v.$int as string) : BigInt(v as number))
const num = (v: Json | undefined): number | null => (v === null || v === undefined ? null : Number(v))
/** ISO text (`0001-01-01`, `…T…+00:00`) as days or microseconds since the epoch, exactly. */
const isoDays = (v: Json | undefined) => (v === null || v === undefined ? null : Math.round(Date.parse(`${(v as { $date: string }).$date}T00:00:00Z`) / 86_400_000))
function isoMicros(v: Json | undefined): bigint | null {
  if (v === null || v === undefined) return null
  const text = (v as { $timestamp: string }).$timestamp
  const m = /^(.{19})(?:\.(\d{1,6}))?(?:\+00:00)?$/.exec(text)
  if (!m) throw new Error(`unexpected timestamp text ${text}`)
  return BigInt(Date.parse(`${m[1]}Z`)) * 1000n + BigInt((m[2] ?? '').padEnd(6, '0'))
}
const byId = <T extends { id: number }>(rows: T[]) => [...rows].sort((a, b) => a.id - b.id)

describe.skipIf(skipReason)('delta-encoded integer columns (FLOE_PARQUET_INTEGER_ENCODING=delta), read by real engines', () => {
  let floe: Floe
  let engines: Engines
  let registry: TestRegistry

  const encodingsOfLiveFiles = async () => {
    const { metadata } = await floe.catalog.loadTable(parseTableId(TABLE))
    const files = await liveDataFiles(floe.io, metadata)
    return Promise.all(
      files.map(async ({ dataFile }) => deltaEncoded(await floe.io.read(dataFile.filePath))),
    )
  }
  const readAll = async () => {
    const spark = (await engines.spark(`SELECT id, i, l, unix_date(d) AS d, unix_micros(ts) AS ts FROM floe.${TABLE}`)).rows
    const pyiceberg = (await engines.scan(TABLE)).rows
    const duck = (await engines.duckdb(`SELECT id, i, l, date_diff('day', DATE '1970-01-01', d) AS d, epoch_us(ts) AS ts FROM iceberg_scan('${await floe.metadataLocation(TABLE)}')`)).rows
    return {
      spark: byId(spark.map((r) => ({ id: Number(r.id), i: num(r.i), l: big(r.l), d: num(r.d), ts: big(r.ts) }))),
      pyiceberg: byId(pyiceberg.map((r) => ({ id: Number(r.id), i: num(r.i), l: big(r.l), d: isoDays(r.d), ts: isoMicros(r.ts) }))),
      duckdb: byId(duck.map((r) => ({ id: Number(r.id), i: num(r.i), l: big(r.l), d: num(r.d), ts: big(r.ts) }))),
    }
  }

  beforeAll(async () => {
    registry = await startTestRegistry()
    floe = await startFloe({
      FLOE_SCHEMA_REGISTRY_URL: registry.url,
      FLOE_PARQUET_INTEGER_ENCODING: 'delta',
      FLOE_ROUTES: JSON.stringify({ defaultNamespace: 'db', formats: [{ topicPattern: '^ints$', value: 'avro-confluent' }], routes: [{ topic: 'ints', table: 'ints' }] }),
    })
    const header = Buffer.alloc(5)
    header.writeUInt32BE(await registry.register('Ints-value', schema), 1)
    const frame = (e: Expected) => new Uint8Array(Buffer.concat([header, avroEncode(schema, datum(e))]))
    for (const half of [expected.slice(0, 30), expected.slice(30)]) {
      await floe.write(half.map((e) => ({ topic: 'ints', partition: 0, offset: e.id, value: frame(e) })))
      await commitExactly(floe, 30)
    }
    engines = startEngines({ catalogTable: floe.deps.config.catalogTable, warehouse: floe.warehouse })
    await engines.spark('SELECT 1')
  })
  afterAll(async () => {
    await engines?.close()
    await registry?.close()
  })

  it("the writer's files hold the integer columns DELTA_BINARY_PACKED", async () => {
    const files = await encodingsOfLiveFiles()
    expect(files).toHaveLength(2)
    for (const f of files) expect(f).toEqual({ id: true, i: true, l: true, d: true, ts: true })
  })

  it("Spark reads the table through Iceberg's vectorized reader, and Spark (vectorized and row reads), PyIceberg and DuckDB read every record exactly", async () => {
    const plan = await engines.explain(`SELECT * FROM floe.${TABLE}`)
    expect(plan, plan).toContain('ColumnarToRow')
    const read = await readAll()
    expect(read.spark).toEqual(expected)
    expect(read.pyiceberg).toEqual(expected)
    expect(read.duckdb).toEqual(expected)
    await engines.spark('SET spark.sql.iceberg.vectorization.enabled=false')
    try {
      expect(await engines.explain(`SELECT * FROM floe.${TABLE}`)).not.toContain('ColumnarToRow')
      const rows = (await engines.spark(`SELECT id, i, l, unix_date(d) AS d, unix_micros(ts) AS ts FROM floe.${TABLE}`)).rows
      expect(byId(rows.map((r) => ({ id: Number(r.id), i: num(r.i), l: big(r.l), d: num(r.d), ts: big(r.ts) })))).toEqual(expected)
    } finally {
      await engines.spark('SET spark.sql.iceberg.vectorization.enabled=true')
    }
  })

  it("Floe's compaction writes the same encoding, and every engine reads every record of the compacted file", async () => {
    const deps: MaintenanceDeps = { config: floe.deps.config, io: floe.io, catalog: floe.catalog, control: floe.control }
    let text = ''
    const code = await maintain(['--compact', '--table', TABLE, '--json'], () => deps, (t) => (text += t), 'usage')
    expect(code, text).toBe(0)
    expect((JSON.parse(text) as { filesCompacted: number }).filesCompacted).toBe(2)
    const files = await encodingsOfLiveFiles()
    expect(files).toEqual([{ id: true, i: true, l: true, d: true, ts: true }])
    const read = await readAll()
    expect(read.spark).toEqual(expected)
    expect(read.pyiceberg).toEqual(expected)
    expect(read.duckdb).toEqual(expected)
  })
})
