/**
 * Item 1 of the interop contract: what Floe writes (a JSON topic and an Avro topic; identity,
 * day, bucket and truncate partitions; structs, lists, maps, decimals, timestamps, uuid, integers
 * beyond 2^53) is read by Spark SQL and PyIceberg through Floe's DynamoDB catalog, and by DuckDB
 * by metadata path: exactly the records produced, with the right types, and partition pruning.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { avroEncode, everythingSchema } from '../codec/avro-fixtures.js'
import { liveDataFiles } from '../../lib/iceberg/scan.js'
import { startTestRegistry, type TestRegistry } from '../helpers/registry.js'
import { skipReason, startEngines, type Engines, type Json } from './engine.js'
import { commitExactly, sortBy, startFloe, type Floe } from './floe.js'

const COUNTRIES = ['de', 'fr', 'us']
const BIG = 9_223_372_036_854_775_807n // long max: no JS number, no double holds it

/** The JSON records produced, as the text a producer sends (so BIG is a JSON integer literal). */
const clicks = Array.from({ length: 12 }, (_, i) => ({
  id: i,
  user_id: 1000 + i * 7,
  // Odd values past 2^53: no double holds them (an even one would parse as a number; see docs/engines.md).
  big: i === 0 ? BIG : BigInt(2 ** 53) + BigInt(2 * i + 1),
  country: COUNTRIES[i % 3]!,
  sku: `${'abc'[i % 3]}${i}-sku`,
  ts: `2024-05-0${1 + (i % 2)}T10:00:00.${String(i).padStart(6, '0')}Z`,
  price: i + 0.25,
  geo: { lat: i / 4, city: `c${i}` },
  tags: i % 4 === 0 ? [] : [`t${i}`, 'x'],
}))
const clickText = (c: (typeof clicks)[number]) => JSON.stringify({ ...c, big: 'BIG' }).replace('"BIG"', c.big.toString())
const tsMicros = (iso: string) => BigInt(Date.parse(iso.slice(0, 19) + 'Z')) * 1000n + BigInt(iso.slice(20, 26))
/** `$int` tags big integers in engine replies; plain numbers stay numbers. */
const big = (v: Json) => (typeof v === 'object' && v !== null && '$int' in v ? BigInt(v.$int as string) : BigInt(v as number))

const UUIDS = ['123e4567-e89b-12d3-a456-426614174000', 'f81d4fae-7dec-11d0-a765-00a0c91e6bf6']
/** everythingSchema without its time-of-day and nanosecond fields: engines refuse whole tables with those (tested apart). */
const avroSchema = { ...everythingSchema, fields: everythingSchema.fields.filter((f) => !['tMillis', 'tMicros', 'tsNanos'].includes(f.name)) }
const clockSchema = { type: 'record', name: 'Clock', fields: [{ name: 'id', type: 'int' }, { name: 'at', type: { type: 'long', logicalType: 'time-micros' } }] }
const nanosSchema = { type: 'record', name: 'Nanos', fields: [{ name: 'id', type: 'int' }, { name: 'ts', type: ['null', { type: 'long', logicalType: 'timestamp-nanos' }] }] }
/** Avro datums of avroSchema (avsc's raw form). */
const everything = UUIDS.map((id, i) => ({
  b: i === 0,
  i: -42 + i,
  l: 9_007_199_254_740_993n + BigInt(i),
  f: 1.5,
  d: -0.25,
  s: `héllo ${i}`,
  raw: Buffer.from([0, 1, 2, 255 - i]),
  dec: Buffer.from([0xff, 0x85 + i]), // -123 (+i) unscaled, scale 2
  decFixed: Buffer.from('00000000000000000de0b6b3a7640001', 'hex'), // 10^18 + 1, scale 9
  day: 19_844 + i,
  tsMillis: 1_714_567_890_123n,
  tsMicros: 1_714_567_890_123_456n + BigInt(i),
  localMillis: 1_714_567_890_123n,
  localMicros: -1n,
  id,
  idFixed: Buffer.from(id.replace(/-/g, ''), 'hex'),
  hash: Buffer.alloc(16, 7),
  color: 'GREEN',
  opt: null,
  choice: { string: 'two' },
  tags: ['a', 'b'],
  attrs: { k1: { long: -9_223_372_036_854_775_808n }, k2: null },
  inner: { x: 1, when: { long: 0n } },
  again: { x: 2, when: null },
}))

describe.skipIf(skipReason)('Floe writes, real engines read', () => {
  let floe: Floe
  let engines: Engines
  let registry: TestRegistry

  beforeAll(async () => {
    registry = await startTestRegistry()
    floe = await startFloe({
      FLOE_SCHEMA_REGISTRY_URL: registry.url,
      FLOE_ROUTES: JSON.stringify({
        defaultNamespace: 'db',
        formats: [{ topicPattern: '^(everything|clock|nanos)$', value: 'avro-confluent' }],
        routes: [
          { topic: 'clicks', table: 'clicks' },
          { topic: 'everything', table: 'everything' },
          { topic: 'clock', table: 'clock' },
          { topic: 'nanos', table: 'nanos' },
        ],
        tables: {
          clicks: { partitionBy: ['country', 'day(ts)', 'bucket(4, user_id)', 'truncate(2, sku)'], kafkaMetadata: ['partition', 'offset'] },
        },
      }),
    })
    const frame = async (schema: unknown, datum: unknown) => {
      const header = Buffer.alloc(5)
      header.writeUInt32BE(await registry.register(`${(schema as { name: string }).name}-value`, schema), 1)
      return new Uint8Array(Buffer.concat([header, avroEncode(schema, datum)]))
    }
    // Two writer invocations and two commits, so the tables have two snapshots.
    await floe.write(clicks.slice(0, 6).map((c, i) => ({ topic: 'clicks', partition: i % 2, offset: i, value: clickText(c) })))
    await floe.write(await Promise.all(everything.map(async (d, i) => ({ topic: 'everything', partition: 0, offset: i, value: await frame(avroSchema, d) }))))
    await floe.write([{ topic: 'clock', partition: 0, offset: 0, value: await frame(clockSchema, { id: 1, at: 45_296_789_012n }) }])
    // Format v2 has no nanosecond type: the table gets no `ts` column and the record with a value there is a dead letter.
    const nanosRecords = [{ id: 1, ts: null }, { id: 2, ts: { long: 1_714_567_890_123_456_789n } }]
    await floe.write(await Promise.all(nanosRecords.map(async (d, i) => ({ topic: 'nanos', partition: 0, offset: i, value: await frame(nanosSchema, d) }))), 1)
    await commitExactly(floe, 10)
    await floe.write(clicks.slice(6).map((c, i) => ({ topic: 'clicks', partition: i % 2, offset: 6 + i, value: clickText(c) })))
    await commitExactly(floe, 6)
    engines = startEngines({ catalogTable: floe.deps.config.catalogTable, warehouse: floe.warehouse })
    await engines.spark('SELECT 1') // start the JVM here, not inside the first test's time
  })
  afterAll(async () => {
    await engines?.close()
    await registry?.close()
  })

  const expectedClicks = clicks.map((c) => ({
    id: c.id,
    user_id: c.user_id,
    big: c.big,
    country: c.country,
    sku: c.sku,
    ts: tsMicros(c.ts),
    price: c.price,
    lat: c.geo.lat,
    city: c.geo.city,
    tags: c.tags,
  }))

  it('Spark SQL reads every JSON record through the DynamoDB catalog, with Iceberg types', async () => {
    const { schema, rows } = await engines.spark(
      'SELECT id, user_id, big, country, sku, unix_micros(ts) AS ts, price, geo.lat AS lat, geo.city AS city, tags, _kafka.offset AS off FROM floe.db.clicks',
    )
    expect(Object.fromEntries(schema)).toMatchObject({ id: 'bigint', user_id: 'bigint', big: 'bigint', country: 'string', ts: 'bigint', price: 'double', tags: 'array<string>', off: 'bigint' })
    const table = Object.fromEntries((await engines.spark('DESCRIBE TABLE floe.db.clicks')).rows.map((r) => [r.col_name, r.data_type]))
    expect(table).toMatchObject({ ts: 'timestamp', geo: 'struct<lat:double,city:string>', _kafka: 'struct<partition:int,offset:bigint>' })
    const read = sortBy(rows, 'id').map((r) => ({ ...r, big: big(r.big!), ts: big(r.ts!), off: undefined }))
    expect(read).toEqual(expectedClicks.map((c) => ({ ...c, off: undefined })))
  })

  it('Spark prunes partitions: EXPLAIN shows the identity and day filters pushed into the Iceberg scan', async () => {
    const plan = await engines.explain("SELECT id FROM floe.db.clicks WHERE country = 'de' AND ts >= TIMESTAMP '2024-05-02 00:00:00 UTC'")
    const scan = plan.split('\n').find((l) => l.includes('BatchScan floe.db.clicks'))
    expect(scan, plan).toBeDefined()
    expect(scan).toMatch(/filters=.*country = 'de'/)
    expect(scan).toMatch(/filters=.*ts >= /)
    const { rows } = await engines.spark("SELECT id FROM floe.db.clicks WHERE country = 'de' AND ts >= TIMESTAMP '2024-05-02 00:00:00 UTC'")
    expect(rows.map((r) => r.id).sort((a, b) => Number(a) - Number(b))).toEqual(clicks.filter((c) => c.country === 'de' && c.ts >= '2024-05-02').map((c) => c.id))
  })

  it('PyIceberg scans every JSON record, and a row filter plans fewer files', async () => {
    const all = await engines.scan('db.clicks')
    expect(Object.fromEntries(all.schema)).toMatchObject({ id: 'int64', big: 'int64', country: 'string', ts: 'timestamp[us, tz=UTC]', price: 'double' })
    const read = sortBy(all.rows, 'id').map((r) => {
      const geo = r.geo as Record<string, Json>
      const ts = (r.ts as { $timestamp: string }).$timestamp
      return { id: r.id, user_id: r.user_id, big: big(r.big!), country: r.country, sku: r.sku, ts: tsMicros(ts.replace('+00:00', 'Z').padEnd(26, '0')), price: r.price, lat: geo.lat, city: geo.city, tags: r.tags }
    })
    expect(read).toEqual(expectedClicks)
    const de = await engines.scan('db.clicks', { rowFilter: "country == 'de'" })
    expect(de.rows.map((r) => r.id).sort((a, b) => Number(a) - Number(b))).toEqual(clicks.filter((c) => c.country === 'de').map((c) => c.id))
    expect(de.files).toBeGreaterThan(0)
    expect(de.files).toBeLessThan(all.files)
    const oneDay = await engines.scan('db.clicks', { rowFilter: "ts >= '2024-05-02T00:00:00+00:00'" })
    expect(oneDay.files).toBeLessThan(all.files)
    expect(oneDay.rows).toHaveLength(6)
  })

  it('DuckDB reads every JSON record by metadata path', async () => {
    const path = await floe.metadataLocation('db.clicks')
    const { schema, rows } = await engines.duckdb(
      `SELECT id, user_id, big, country, sku, epoch_us(ts) AS ts, price, geo.lat AS lat, geo.city AS city, tags FROM iceberg_scan('${path}')`,
    )
    expect(Object.fromEntries(schema)).toMatchObject({ id: 'BIGINT', big: 'BIGINT', country: 'VARCHAR', price: 'DOUBLE', tags: 'VARCHAR[]' })
    const read = sortBy(rows, 'id').map((r) => ({ ...r, big: big(r.big!), ts: big(r.ts!) }))
    expect(read).toEqual(expectedClicks)
  })

  it('Spark reads the Avro topic: decimals, uuid, maps, dates and timestamps with their types', async () => {
    const { rows } = await engines.spark(
      'SELECT i, l, s, hex(raw) AS raw, dec, decFixed, CAST(day AS STRING) AS day, unix_micros(tsMicros) AS tsMicros, CAST(localMicros AS STRING) AS localMicros, id, idFixed, tags, attrs, inner.x AS x FROM floe.db.everything ORDER BY i',
    )
    const types = Object.fromEntries((await engines.spark('DESCRIBE TABLE floe.db.everything')).rows.map((r) => [r.col_name, r.data_type]))
    expect(types).toMatchObject({ dec: 'decimal(10,2)', decFixed: 'decimal(38,9)', day: 'date', tsMicros: 'timestamp', localMicros: 'timestamp_ntz', id: 'string', attrs: 'map<string,bigint>' })
    expect(rows).toEqual(
      everything.map((d, i) => ({
        i: d.i,
        l: { $int: d.l.toString() },
        s: d.s,
        raw: Buffer.from(d.raw).toString('hex').toUpperCase(),
        dec: { $decimal: (-(123 - i) / 100).toFixed(2) },
        decFixed: { $decimal: '1000000000.000000001' },
        day: `2024-05-0${1 + i}`,
        tsMicros: Number(d.tsMicros),
        localMicros: '1969-12-31 23:59:59.999999',
        id: d.id,
        idFixed: d.id,
        tags: ['a', 'b'],
        attrs: { k1: { $int: '-9223372036854775808' }, k2: null },
        x: 1,
      })),
    )
  })

  it('Iceberg time columns: PyIceberg and DuckDB read them, Spark refuses the table', async () => {
    const py = await engines.scan('db.clock')
    expect(py.rows).toEqual([{ id: 1, at: { $time: '12:34:56.789012' } }])
    const duck = await engines.duckdb(`SELECT id, CAST("at" AS VARCHAR) AS "at" FROM iceberg_scan('${await floe.metadataLocation('db.clock')}')`)
    expect(duck.rows).toEqual([{ id: 1, at: '12:34:56.789012' }])
    await expect(engines.spark('SELECT id FROM floe.db.clock')).rejects.toThrow('Spark does not support time fields')
  })

  it('Avro timestamp-nanos never becomes a column of a v2 table (a v3-only type no engine reads there): every engine reads the table', async () => {
    expect((await engines.scan('db.nanos')).rows).toEqual([{ id: 1 }])
    expect((await engines.spark('SELECT * FROM floe.db.nanos')).rows).toEqual([{ id: 1 }])
    expect((await engines.duckdb(`SELECT * FROM iceberg_scan('${await floe.metadataLocation('db.nanos')}')`)).rows).toEqual([{ id: 1 }])
  })

  it("pyarrow reads Floe's uuid columns as Parquet UUIDs (the footer's logical type)", async () => {
    const { metadata } = await floe.catalog.loadTable({ namespace: 'db', name: 'everything' })
    const [file] = await liveDataFiles(floe.io, metadata)
    const { columns, arrow, rows } = await engines.parquet(file!.dataFile.filePath)
    expect(columns.filter(([path]) => path === 'id' || path === 'idFixed' || path === 'hash')).toEqual([
      ['id', 'UUID', 'FIXED_LEN_BYTE_ARRAY'],
      ['idFixed', 'UUID', 'FIXED_LEN_BYTE_ARRAY'],
      ['hash', 'None', 'FIXED_LEN_BYTE_ARRAY'],
    ])
    expect(Object.fromEntries(arrow)).toMatchObject({ id: 'extension<arrow.uuid>', hash: 'fixed_size_binary[16]' })
    expect(rows.map((r) => (r.id as { $uuid: string }).$uuid).sort()).toEqual(UUIDS)
  })

  it('PyIceberg and DuckDB read the Avro topic alike', async () => {
    const py = await engines.scan('db.everything', { columns: ['i', 'l', 'dec', 'decFixed', 'id', 'attrs', 'tsMicros'] })
    // uuid reads as Arrow's uuid extension type: Floe's files carry Parquet's UUID logical type.
    expect(Object.fromEntries(py.schema)).toEqual({ i: 'int32', l: 'int64', dec: 'decimal128(10, 2)', decFixed: 'decimal128(38, 9)', tsMicros: 'timestamp[us, tz=UTC]', id: 'extension<arrow.uuid>', attrs: 'map<string, int64>' })
    expect(sortBy(py.rows, 'i').map((r) => [r.i, r.l, r.dec, r.decFixed, r.id, r.attrs])).toEqual(
      everything.map((d, i) => [d.i, { $int: d.l.toString() }, { $decimal: (-(123 - i) / 100).toFixed(2) }, { $decimal: '1000000000.000000001' }, { $uuid: d.id }, [['k1', { $int: '-9223372036854775808' }], ['k2', null]]]),
    )
    const path = await floe.metadataLocation('db.everything')
    const duck = await engines.duckdb(`SELECT i, l, dec, decFixed, CAST(id AS VARCHAR) AS id, attrs['k1'] AS k1 FROM iceberg_scan('${path}') ORDER BY i`)
    expect(duck.rows).toEqual(
      everything.map((d, i) => ({ i: d.i, l: { $int: d.l.toString() }, dec: { $decimal: (-(123 - i) / 100).toFixed(2) }, decFixed: { $decimal: '1000000000.000000001' }, id: d.id, k1: { $int: '-9223372036854775808' } })),
    )
  })
})
