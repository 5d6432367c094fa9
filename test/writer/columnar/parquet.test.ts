import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api'
import { parquetMetadata, parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fromBoundBytes } from '../../../lib/iceberg/conversions.js'
import type { Schema } from '../../../lib/schema/types.js'
import { leafFields } from '../../../lib/schema/walk.js'
import { compileCoercer, encodeParquet, type Row } from '../../../lib/writer/columnar/index.js'

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'n', required: false, type: 'int' },
    { id: 3, name: 'score', required: false, type: 'double' },
    { id: 4, name: 'price', required: false, type: 'decimal(10, 2)' },
    { id: 5, name: 'big', required: false, type: 'decimal(38, 6)' },
    { id: 6, name: 'ts', required: false, type: 'timestamptz' },
    { id: 7, name: 'day', required: false, type: 'date' },
    { id: 8, name: 'at', required: false, type: 'time' },
    { id: 9, name: 'ok', required: false, type: 'boolean' },
    { id: 10, name: 'name', required: false, type: 'string' },
    { id: 11, name: 'u', required: false, type: 'uuid' },
    { id: 12, name: 'blob', required: false, type: 'binary' },
    { id: 13, name: 'tags', required: false, type: { type: 'list', 'element-id': 16, element: 'string', 'element-required': false } },
    { id: 14, name: 'attrs', required: false, type: { type: 'map', 'key-id': 17, key: 'string', 'value-id': 18, value: 'long', 'value-required': false } },
    { id: 15, name: 'user', required: false, type: { type: 'struct', fields: [{ id: 19, name: 'city', required: false, type: 'string' }, { id: 20, name: 'age', required: false, type: 'int' }] } },
  ],
}

const NAMES = ['ann', 'bob', 'zoë', 'a very long name that exceeds sixteen', '日本語']
/** Deterministic mixed records, with nulls sprinkled per column. */
function mixedRecords(count: number): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => ({
    id: i,
    n: i % 7 === 0 ? null : i * 3 - 40,
    score: i % 11 === 5 ? 'NaN' : i % 5 === 0 ? null : i / 4,
    price: i % 6 === 0 ? null : `${i}.${String(i % 100).padStart(2, '0')}`,
    big: i % 4 === 0 ? null : `-12345678901234567890.${String(i).padStart(6, '0')}`,
    ts: i % 3 === 0 ? null : `2024-05-${String((i % 28) + 1).padStart(2, '0')}T10:00:00.${String(i).padStart(6, '0')}Z`,
    day: i % 8 === 0 ? null : `2023-12-${String((i % 28) + 1).padStart(2, '0')}`,
    at: i % 9 === 0 ? null : `${String(i % 24).padStart(2, '0')}:30:00.25`,
    ok: i % 10 === 0 ? null : i % 2 === 0,
    name: i % 5 === 1 ? null : NAMES[i % NAMES.length],
    u: i % 2 === 0 ? null : `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`,
    blob: i % 3 === 1 ? null : Buffer.from([i, 255 - i]).toString('base64'),
    tags: i % 4 === 0 ? null : i % 4 === 1 ? [] : ['x', null, `t${i}`],
    attrs: i % 5 === 0 ? null : { a: i, b: i % 2 === 0 ? null : -i },
    user: i % 6 === 0 ? null : { city: i % 4 === 0 ? null : `c${i}`, age: i },
  }))
}

const RECORDS = mixedRecords(50)
const coerce = compileCoercer(schema, { table: 'test.mixed' })
const ROWS: Row[] = RECORDS.map((r) => coerce(r).row)

let dir: string
let db: DuckDBInstance
let duck: DuckDBConnection
const fileOf = (bytes: Uint8Array, name = `f${Math.random().toString(36).slice(2)}.parquet`) => {
  const path = join(dir, name)
  writeFileSync(path, bytes)
  return path
}
const query = async (sql: string) => (await duck.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[]

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'floe-parquet-'))
  db = await DuckDBInstance.create()
  duck = await db.connect()
})
afterAll(() => {
  duck?.closeSync()
  db?.closeSync()
  rmSync(dir, { recursive: true, force: true })
})

describe('encodeParquet', () => {
  it('writes files hyparquet reads back with the same rows', async () => {
    const { bytes, recordCount } = await encodeParquet(schema, ROWS, { compression: 'zstd' })
    expect(recordCount).toBe(50)
    const read = await parquetReadObjects({
      file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
      compressors,
      utf8: false,
      parsers: { timestampFromMicroseconds: (us: bigint) => us, dateFromDays: (d: number) => d } as never,
    })
    expect(read).toHaveLength(50)
    read.forEach((got, i) => {
      const want = ROWS[i]!
      expect(got.id).toBe(want.id)
      expect(got.n).toBe(want.n)
      expect(got.score).toBe(want.score) // Object.is: NaN equals NaN
      expect(got.price).toBe(want.price === null ? null : Number(want.price) / 100)
      expect(got.ts).toBe(want.ts)
      expect(got.day).toBe(want.day)
      expect(got.at).toBe(want.at)
      expect(got.ok).toBe(want.ok)
      expect(got.name).toBe(want.name)
      expect(got.blob === null ? null : Array.from(got.blob as Uint8Array)).toEqual(want.blob === null ? null : Array.from(want.blob as Uint8Array))
      expect(got.tags).toEqual(want.tags)
      expect(got.attrs).toEqual(want.attrs === null ? null : Object.fromEntries(want.attrs as Map<string, unknown>))
      expect(got.user).toEqual(want.user)
    })
  })

  it("writes files DuckDB's read_parquet reads with the same rows, and parquet_schema() shows the Iceberg field ids", async () => {
    const { bytes } = await encodeParquet(schema, ROWS, { compression: 'zstd' })
    const path = fileOf(bytes)
    const ids = await query(`select name, field_id from parquet_schema('${path}') where field_id is not null`)
    const expected = [...leafFields(schema).map((f) => [f.name.split('.').at(-1), String(f.id)]), ...[13, 14, 15].map((id) => [schema.fields[id - 1]!.name, String(id)])]
    expect(ids.map((r) => [r.name, r.field_id]).sort()).toEqual(expected.sort())

    const rows = await query(`
      select id, n, score::varchar as score, price::varchar as price, big::varchar as big, epoch_us(ts)::varchar as ts,
             "day"::varchar as "day", "at"::varchar as "at", ok, name, u::varchar as u, hex(blob) as blob, tags,
             to_json(attrs)::varchar as attrs, user.city as city, user.age as age
      from read_parquet('${path}') order by id`)
    expect(rows).toHaveLength(50)
    rows.forEach((got, i) => {
      const r = RECORDS[i]!
      const row = ROWS[i]!
      expect(got.id).toBe(String(i))
      expect(got.n).toBe(r.n)
      expect(got.price).toBe(r.price === null ? null : Number(r.price as string).toFixed(2))
      expect(got.big).toBe(r.big)
      expect(got.ts).toBe(row.ts === null ? null : String(row.ts))
      expect(got.day).toBe(r.day)
      expect(got.at).toBe(r.at)
      expect(got.ok).toBe(r.ok)
      expect(got.name).toBe(r.name)
      expect(got.u).toBe(r.u === null ? null : (r.u as string).toLowerCase())
      expect(got.blob).toBe(row.blob === null ? null : Buffer.from(row.blob as Uint8Array).toString('hex').toUpperCase())
      expect(got.tags).toEqual(r.tags)
      expect(got.attrs === null ? null : JSON.parse(got.attrs as string)).toEqual(r.attrs)
      expect([got.city, got.age]).toEqual(r.user === null ? [null, null] : [(r.user as Row).city, (r.user as Row).age])
      expect(got.score === null ? null : Number(got.score)).toBe(r.score === 'NaN' ? NaN : r.score)
    })
  })

  it('column metrics match values computed independently from the records', async () => {
    const { metrics } = await encodeParquet(schema, ROWS, { compression: 'zstd' })
    const top = schema.fields.filter((f) => typeof f.type === 'string')
    for (const f of top) {
      const values = RECORDS.map((r) => r[f.name])
      expect({ [f.name]: metrics.valueCounts!.get(f.id) }).toEqual({ [f.name]: 50 })
      expect({ [f.name]: metrics.nullValueCounts!.get(f.id) }).toEqual({ [f.name]: values.filter((v) => v === null).length })
    }
    expect(metrics.nanValueCounts!.get(3)).toBe(RECORDS.filter((r) => r.score === 'NaN').length)
    expect([...metrics.nanValueCounts!.keys()]).toEqual([3])
    const bound = (id: number, type: string) => [fromBoundBytes(type, metrics.lowerBounds!.get(id)!), fromBoundBytes(type, metrics.upperBounds!.get(id)!)]
    const nums = (k: string) => RECORDS.map((r) => r[k]).filter((v): v is number => typeof v === 'number')
    expect(bound(1, 'long')).toEqual([0n, 49n])
    expect(bound(2, 'int')).toEqual([Math.min(...nums('n')), Math.max(...nums('n'))])
    expect(bound(3, 'double')).toEqual([Math.min(...nums('score')), Math.max(...nums('score'))]) // NaN excluded
    expect(bound(4, 'decimal(10, 2)')).toEqual([101n, 4949n]) // 1.01 .. 49.49
    expect(bound(5, 'decimal(38, 6)')).toEqual([-12345678901234567890000049n, -12345678901234567890000001n])
    const micros = RECORDS.flatMap((r) => (typeof r.ts === 'string' ? [BigInt(Date.parse(`${r.ts.slice(0, 19)}Z`)) * 1000n + BigInt(r.ts.slice(20, 26))] : []))
    expect(bound(6, 'timestamptz')).toEqual([micros.reduce((a, b) => (b < a ? b : a)), micros.reduce((a, b) => (b > a ? b : a))])
    expect(bound(7, 'date')).toEqual([19692, 19719]) // 2023-12-01 .. 2023-12-28
    expect(bound(9, 'boolean')).toEqual([false, true])
    // Strings: code point order, truncated to 16 characters by default (the lower bound here).
    expect(bound(10, 'string')).toEqual(['a very long name', '日本語'])
    expect(bound(11, 'uuid')).toEqual(['00000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-000000000049'])
    // Fields inside lists and maps get counts (Parquet's: one null entry per null or empty list) but no bounds.
    const tagEntries = RECORDS.reduce((n, r) => n + (Array.isArray(r.tags) && r.tags.length ? r.tags.length : 1), 0)
    expect(metrics.valueCounts!.get(16)).toBe(tagEntries)
    expect(metrics.nullValueCounts!.get(16)).toBe(RECORDS.reduce((n, r) => n + (Array.isArray(r.tags) && r.tags.length ? r.tags.filter((t) => t === null).length : 1), 0))
    expect(metrics.lowerBounds!.has(16)).toBe(false)
    // Nested struct leaves: a null struct makes its leaves null.
    expect(metrics.nullValueCounts!.get(19)).toBe(RECORDS.filter((r) => r.user === null || (r.user as Row).city === null).length)
    expect(bound(20, 'int')).toEqual([1, 49])
  })

  it("value and null counts equal the Parquet writer's own footer statistics, column sizes its chunk sizes", async () => {
    const { bytes, metrics } = await encodeParquet(schema, ROWS, { compression: 'snappy' })
    const path = fileOf(bytes)
    const meta = await query(`select column_id, num_values::bigint as num_values, stats_null_count::bigint as nulls, total_compressed_size::bigint as size from parquet_metadata('${path}') order by column_id`)
    const leaves = leafFields(schema)
    expect(meta).toHaveLength(leaves.length)
    meta.forEach((m, i) => {
      const id = leaves[i]!.id
      const ours = [metrics.valueCounts!.get(id), metrics.nullValueCounts!.get(id), metrics.columnSizes!.get(id)].map(String)
      expect({ [leaves[i]!.name]: ours }).toEqual({ [leaves[i]!.name]: [m.num_values, m.nulls, m.size].map(String) })
    })
    expect(metrics.splitOffsets).toEqual([4])
  })

  it('counts deeply nested leaves as Parquet does (lists of lists, lists of structs with lists, maps of lists)', async () => {
    const s: Schema = {
      type: 'struct',
      'schema-id': 0,
      fields: [
        { id: 1, name: 'll', required: false, type: { type: 'list', 'element-id': 4, element: { type: 'list', 'element-id': 5, element: 'int', 'element-required': false }, 'element-required': false } },
        {
          id: 2,
          name: 'ls',
          required: false,
          type: {
            type: 'list',
            'element-id': 6,
            'element-required': false,
            element: { type: 'struct', fields: [{ id: 7, name: 'x', required: false, type: 'int' }, { id: 8, name: 'y', required: false, type: { type: 'list', 'element-id': 9, element: 'string', 'element-required': false } }] },
          },
        },
        { id: 3, name: 'ml', required: false, type: { type: 'map', 'key-id': 10, key: 'string', 'value-id': 11, value: { type: 'list', 'element-id': 12, element: 'long', 'element-required': false }, 'value-required': false } },
      ],
    }
    const pick = <T>(i: number, options: T[]): T => options[i % options.length]!
    const records = Array.from({ length: 40 }, (_, i) => ({
      ll: pick(i, [null, [], [null], [[]], [[1, null, 2], null, [3]], [[4]]]),
      ls: pick(i, [null, [], [null], [{ x: 1, y: null }], [{ x: null, y: [] }, { x: 2, y: ['a', null] }], [{ y: ['b'] }, null]]),
      ml: pick(i, [null, {}, { a: null }, { a: [] }, { a: [1, null], b: [2] }, { c: [null] }]),
    }))
    const c = compileCoercer(s, { table: 't' })
    const { bytes, metrics } = await encodeParquet(s, records.map((r) => c(r).row))
    const path = fileOf(bytes)
    const meta = await query(`select column_id, path_in_schema, num_values::bigint as num_values, stats_null_count::bigint as nulls from parquet_metadata('${path}') order by column_id`)
    const leaves = leafFields(s)
    const ours = leaves.map((l) => [l.name, String(metrics.valueCounts!.get(l.id)), String(metrics.nullValueCounts!.get(l.id))])
    expect(ours).toEqual(meta.map((m, i) => [leaves[i]!.name, String(m.num_values), String(m.nulls)]))
    const [{ n }] = (await query(`select count(*)::int as n from read_parquet('${path}')`)) as [{ n: number }]
    expect(n).toBe(40)
  })

  it('honours metrics modes: none, counts, truncate(N), full, per column and by default', async () => {
    const s: Schema = {
      type: 'struct',
      'schema-id': 0,
      fields: [
        { id: 1, name: 'a', required: false, type: 'string' },
        { id: 2, name: 'b', required: false, type: 'string' },
        { id: 3, name: 'c', required: false, type: 'string' },
        { id: 4, name: 'd', required: false, type: 'long' },
      ],
    }
    const long = 'zzzzzzzzzzzzzzzzzzzz' // 20 characters
    const rows = [{ a: long, b: long, c: long, d: 1n }]
    const run = (properties: Record<string, string>) => encodeParquet(s, rows, { properties }).then((e) => e.metrics)
    const text = (b: Uint8Array | undefined) => (b === undefined ? undefined : Buffer.from(b).toString('utf8'))

    const byDefault = await run({})
    expect(text(byDefault.lowerBounds!.get(1))).toBe('z'.repeat(16))
    expect(text(byDefault.upperBounds!.get(1))).toBe(`${'z'.repeat(15)}{`) // truncated, last character incremented

    const modes = await run({
      'write.metadata.metrics.default': 'counts',
      'write.metadata.metrics.column.a': 'full',
      'write.metadata.metrics.column.b': 'truncate(4)',
      'write.metadata.metrics.column.d': 'none',
    })
    expect(text(modes.lowerBounds!.get(1))).toBe(long)
    expect(text(modes.upperBounds!.get(1))).toBe(long)
    expect(text(modes.lowerBounds!.get(2))).toBe('zzzz')
    expect(text(modes.upperBounds!.get(2))).toBe('zzz{')
    expect(modes.lowerBounds!.has(3)).toBe(false)
    expect(modes.valueCounts!.get(3)).toBe(1)
    expect(modes.valueCounts!.has(4)).toBe(false)
    expect(modes.columnSizes!.has(4)).toBe(true) // sizes are kept whatever the mode, as Iceberg Java does
  })

  it('gives only the first 100 columns default metrics in a wider table, unless a default is set (as Iceberg Java does)', async () => {
    const wide: Schema = { type: 'struct', 'schema-id': 0, fields: Array.from({ length: 105 }, (_, i) => ({ id: i + 1, name: `c${i + 1}`, required: false, type: 'int' })) }
    const row = Object.fromEntries(wide.fields.map((f) => [f.name, f.id]))
    const inferred = (await encodeParquet(wide, [row])).metrics
    expect([inferred.valueCounts!.has(100), inferred.valueCounts!.has(101), inferred.lowerBounds!.has(105)]).toEqual([true, false, false])
    const explicit = (await encodeParquet(wide, [row], { properties: { 'write.metadata.metrics.default': 'truncate(16)' } })).metrics
    expect(explicit.lowerBounds!.has(105)).toBe(true)
  })

  it('every supported codec produces files DuckDB reads; an unknown codec is refused', async () => {
    for (const compression of ['zstd', 'snappy', 'gzip', 'lz4', 'uncompressed', 'ZSTD']) {
      const { bytes } = await encodeParquet(schema, ROWS, { compression })
      const [{ n }] = (await query(`select count(*)::int as n, sum(id)::int as s from read_parquet('${fileOf(bytes)}')`)) as [{ n: number }]
      expect({ compression, n }).toEqual({ compression, n: 50 })
    }
    await expect(encodeParquet(schema, ROWS, { compression: 'lzo2' })).rejects.toThrow("write.parquet.compression-codec: unsupported Parquet codec 'lzo2'")
  })

  it('splits row groups at rowGroupSize and reports their offsets', async () => {
    const { bytes, metrics } = await encodeParquet(schema, ROWS, { rowGroupSize: 20 })
    const footer = parquetMetadata(bytes)
    expect(footer.row_groups.map((rg) => Number(rg.num_rows))).toEqual([20, 20, 10])
    expect(metrics.splitOffsets).toHaveLength(3)
    expect(metrics.valueCounts!.get(1)).toBe(50)
    const [{ n }] = (await query(`select count(*)::int as n from read_parquet('${fileOf(bytes)}')`)) as [{ n: number }]
    expect(n).toBe(50)
  })

  it("uses the Iceberg spec's Parquet types: TIME/TIMESTAMP micros with the right UTC flag, DATE, decimals by precision, fixed", async () => {
    const s: Schema = {
      type: 'struct',
      'schema-id': 0,
      fields: [
        { id: 1, name: 'at', required: false, type: 'time' },
        { id: 2, name: 'local', required: false, type: 'timestamp' },
        { id: 3, name: 'zoned', required: false, type: 'timestamptz' },
        { id: 4, name: 'ns', required: false, type: 'timestamptz_ns' },
        { id: 5, name: 'd', required: false, type: 'date' },
        { id: 6, name: 'small', required: false, type: 'decimal(4, 1)' },
        { id: 7, name: 'mid', required: false, type: 'decimal(18, 1)' },
        { id: 8, name: 'wide', required: false, type: 'decimal(20, 1)' },
        { id: 9, name: 'f', required: false, type: 'fixed[3]' },
        { id: 10, name: 'u', required: false, type: 'uuid' },
      ],
    }
    const c = compileCoercer(s, { table: 't' })
    const row = c({ at: '10:00:00', local: '2024-01-01T00:00:00', zoned: '2024-01-01T00:00:00Z', ns: '2024-01-01T00:00:00.123456789Z', d: '2024-01-01', small: '1.5', mid: '1.5', wide: '-1.5', f: 'AQID', u: '123e4567-e89b-12d3-a456-426614174000' }).row
    const path = fileOf((await encodeParquet(s, [row])).bytes)
    const types = await query(`select name, type, type_length, logical_type from parquet_schema('${path}') where field_id is not null order by field_id::int`)
    // DuckDB prints the logical type's thrift union; keep only the parts that are set.
    const logical = (t: unknown) => String(t).replace(/(MILLIS|MICROS|NANOS)=<null>, ?/g, '').replace(/, (MICROS|NANOS)=<null>/g, '')
    expect(types.map((t) => [t.name, t.type, t.type_length ?? '', logical(t.logical_type)])).toEqual([
      ['at', 'INT64', '', 'TimeType(isAdjustedToUTC=0, unit=TimeUnit(MICROS=MicroSeconds()))'],
      ['local', 'INT64', '', 'TimestampType(isAdjustedToUTC=0, unit=TimeUnit(MICROS=MicroSeconds()))'],
      ['zoned', 'INT64', '', 'TimestampType(isAdjustedToUTC=1, unit=TimeUnit(MICROS=MicroSeconds()))'],
      ['ns', 'INT64', '', 'TimestampType(isAdjustedToUTC=1, unit=TimeUnit(NANOS=NanoSeconds()))'],
      ['d', 'INT32', '', 'DateType()'],
      ['small', 'INT32', '', 'DecimalType(scale=1, precision=4)'],
      ['mid', 'INT64', '', 'DecimalType(scale=1, precision=18)'],
      ['wide', 'FIXED_LEN_BYTE_ARRAY', '9', 'DecimalType(scale=1, precision=20)'],
      ['f', 'FIXED_LEN_BYTE_ARRAY', '3', 'null'],
      ['u', 'FIXED_LEN_BYTE_ARRAY', '16', 'UUIDType()'],
    ])
    const [got] = await query(`select "at"::varchar as "at", small::varchar as small, mid::varchar as mid, wide::varchar as wide from read_parquet('${path}')`)
    expect(got).toEqual({ at: '10:00:00', small: '1.5', mid: '1.5', wide: '-1.5' })
    // DuckDB's TIMESTAMPTZ holds microseconds; hyparquet gives the stored nanoseconds.
    const file = readFileSync(path)
    const [raw] = await parquetReadObjects({
      file: file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength) as ArrayBuffer,
      compressors,
      columns: ['ns'], parsers: { timestampFromNanoseconds: (ns: bigint) => ns } as never })
    expect(raw).toEqual({ ns: 1704067200123456789n })
  })

  it('encodes string columns longer than one encoding slice, ASCII and not, exactly', async () => {
    const s: Schema = { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 's', required: false, type: 'string' }] }
    // Slices of 8,192 values: the first all ASCII, later ones with multi-byte and astral characters and nulls.
    const values = Array.from({ length: 20_000 }, (_, i) => (i % 9_999 === 7 ? null : i < 8_192 ? `v${i}` : i % 3 ? `ü${i}` : `😀${i}`))
    const { bytes, metrics } = await encodeParquet(s, values.map((v) => ({ s: v })))
    const got = await query(`select s from read_parquet('${fileOf(bytes)}')`)
    expect(got.map((r) => r.s)).toEqual(values)
    expect(Buffer.from(metrics.upperBounds!.get(1)!).toString('utf8')).toBe('😀9999') // astral characters sort last in code point order
  })

  it('encodes zero rows as a valid empty file', async () => {
    const { bytes, recordCount } = await encodeParquet(schema, [])
    expect(recordCount).toBe(0)
    const [{ n }] = (await query(`select count(*)::int as n from read_parquet('${fileOf(bytes)}')`)) as [{ n: number }]
    expect(n).toBe(0)
  })
})
