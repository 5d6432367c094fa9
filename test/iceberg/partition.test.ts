import { describe, expect, it } from 'vitest'
import { IcebergError } from '../../lib/errors.js'
import { escapePathPart, humanValue, parsePartitionBy, partitionPath, partitionTuple } from '../../lib/iceberg/partition.js'
import type { Schema } from '../../lib/schema/types.js'

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'ts', required: true, type: 'timestamptz' },
    { id: 2, name: 'user_id', required: false, type: 'long' },
    { id: 3, name: 'name', required: false, type: 'string' },
    { id: 4, name: 'country', required: false, type: 'string' },
    { id: 5, name: 'day', required: false, type: 'date' },
    { id: 6, name: 'amount', required: false, type: 'decimal(9, 2)' },
    {
      id: 7,
      name: 'payload',
      required: false,
      type: { type: 'struct', fields: [{ id: 8, name: 'region', required: false, type: 'string' }] },
    },
    { id: 9, name: 'tags', required: false, type: { type: 'list', 'element-id': 10, element: 'string', 'element-required': false } },
    { id: 11, name: 'local_ts', required: false, type: 'timestamp' },
    { id: 12, name: 'blob', required: false, type: 'binary' },
  ],
}

const micros = (iso: string) => BigInt(Date.parse(iso)) * 1000n

describe('parsePartitionBy', () => {
  it('builds a spec with Iceberg default field names and ids from 1000', () => {
    const spec = parsePartitionBy(schema, ['day(ts)', 'bucket(16, user_id)', 'truncate(4, name)', 'identity(country)', 'payload.region'])
    expect(spec).toEqual({
      'spec-id': 0,
      fields: [
        { 'source-id': 1, 'field-id': 1000, name: 'ts_day', transform: 'day' },
        { 'source-id': 2, 'field-id': 1001, name: 'user_id_bucket', transform: 'bucket[16]' },
        { 'source-id': 3, 'field-id': 1002, name: 'name_trunc', transform: 'truncate[4]' },
        { 'source-id': 4, 'field-id': 1003, name: 'country', transform: 'identity' },
        { 'source-id': 8, 'field-id': 1004, name: 'payload.region', transform: 'identity' },
      ],
    })
  })

  it('accepts bare column names, Spark-style plural transforms, either argument order and a custom start id', () => {
    const spec = parsePartitionBy(schema, ['country', 'hours(ts)', 'truncate(name, 2)', 'years(day)', 'void(user_id)'], 2000)
    expect(spec.fields.map((f) => [f.name, f.transform, f['field-id']])).toEqual([
      ['country', 'identity', 2000],
      ['ts_hour', 'hour', 2001],
      ['name_trunc', 'truncate[2]', 2002],
      ['day_year', 'year', 2003],
      ['user_id_null', 'void', 2004],
    ])
    expect(parsePartitionBy(schema, ['month(ts)']).fields[0].name).toBe('ts_month')
  })

  it('errors name the expression', () => {
    const bad = (exprs: string[]) => () => parsePartitionBy(schema, exprs)
    expect(bad(['day(nope)'])).toThrow(/partitionBy 'day\(nope\)': no primitive column 'nope'/)
    expect(bad(['hour(day)'])).toThrow(/partitionBy 'hour\(day\)': partition transform hour cannot be applied to type date/)
    expect(bad(['bucket(user_id)'])).toThrow(/partitionBy 'bucket\(user_id\)': bucket takes a positive integer and a column/)
    expect(bad(['bucket(0, user_id)'])).toThrow(/partitionBy 'bucket\(0, user_id\)'/)
    expect(bad(['squash(ts)'])).toThrow(/partitionBy 'squash\(ts\)': unknown transform 'squash'/)
    expect(bad(['tags'])).toThrow(/no primitive column 'tags' outside lists and maps/)
    expect(bad(['day(ts)', 'hour(ts)'])).toThrow(/partitionBy 'hour\(ts\)': column 'ts' is already partitioned by a redundant time transform/)
    expect(bad(['country', 'identity(country)'])).toThrow(/column 'country' is already partitioned by a redundant identity transform/)
    expect(bad(['bucket(16, user_id)', 'bucket(8, user_id)'])).toThrow(/partitionBy 'bucket\(8, user_id\)': partition field name 'user_id_bucket' is used twice/)
    expect(bad(['a b'])).toThrow(IcebergError)
  })

  it('rejects a transform whose default name collides with another column', () => {
    const s: Schema = { ...schema, fields: [...schema.fields, { id: 20, name: 'ts_day', required: false, type: 'date' }] }
    expect(() => parsePartitionBy(s, ['day(ts)'])).toThrow(/'ts_day' conflicts with a column/)
  })
})

describe('partition tuples and paths', () => {
  const spec = parsePartitionBy(schema, ['day(ts)', 'bucket(16, user_id)', 'truncate(4, name)', 'country', 'payload.region'])

  it('computes the tuple of a row, reading nested fields and mapping missing values to null', () => {
    const row = { ts: micros('2024-05-01T13:45:00Z'), user_id: 34n, name: 'iceberg', country: 'DE', payload: { region: 'eu west' } }
    const tuple = partitionTuple(spec, schema, row)
    expect(tuple).toEqual([19844, 2017239379 % 16, 'iceb', 'DE', 'eu west'])
    expect(partitionPath(spec, schema, tuple)).toBe('ts_day=2024-05-01/user_id_bucket=3/name_trunc=iceb/country=DE/payload.region=eu+west')
    expect(partitionTuple(spec, schema, { ts: 0n })).toEqual([0, null, null, null, null])
  })

  it('writes null as "null" and escapes like Java URLEncoder', () => {
    expect(partitionPath(spec, schema, [null, null, 'a/b', 'x=y&z', "it's (ok)~"])).toBe(
      'ts_day=null/user_id_bucket=null/name_trunc=a%2Fb/country=x%3Dy%26z/payload.region=it%27s+%28ok%29%7E',
    )
    expect(escapePathPart('ä *-._')).toBe('%C3%A4+*-._')
  })

  it('formats time transforms like Iceberg Java (hours as yyyy-MM-dd-HH, months yyyy-MM, years yyyy)', () => {
    const hourly = parsePartitionBy(schema, ['hour(ts)', 'month(local_ts)', 'year(day)'])
    const tuple = partitionTuple(hourly, schema, { ts: micros('2024-05-01T13:59:59Z'), local_ts: micros('2024-05-31T23:00:00Z'), day: 19844 })
    expect(partitionPath(hourly, schema, tuple)).toBe('ts_hour=2024-05-01-13/local_ts_month=2024-05/day_year=2024')
    const before = partitionTuple(hourly, schema, { ts: -1n, local_ts: -1n, day: -1 })
    expect(partitionPath(hourly, schema, before)).toBe('ts_hour=1969-12-31-23/local_ts_month=1969-12/day_year=1969')
  })

  it('formats identity values of other types as Java does', () => {
    expect(humanValue('identity', 'timestamptz', micros('2017-11-16T22:31:08Z'))).toBe('2017-11-16T22:31:08+00:00')
    expect(humanValue('identity', 'timestamp', micros('2017-11-16T22:31:08.1Z'))).toBe('2017-11-16T22:31:08.1')
    expect(humanValue('identity', 'time', 81068000000n)).toBe('22:31:08')
    expect(humanValue('identity', 'time', 81060000000n)).toBe('22:31')
    expect(humanValue('identity', 'decimal(9, 2)', 1050n)).toBe('10.50')
    expect(humanValue('identity', 'decimal(9, 2)', -5n)).toBe('-0.05')
    expect(humanValue('identity', 'double', 1)).toBe('1.0')
    expect(humanValue('identity', 'double', 1e10)).toBe('1.0E10')
    expect(humanValue('identity', 'float', Math.fround(0.1))).toBe('0.1')
    expect(humanValue('identity', 'binary', Uint8Array.of(0, 1, 2, 3))).toBe('AAECAw==')
    expect(humanValue('identity', 'uuid', Uint8Array.of(0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd, 0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7))).toBe(
      'f79c3e09-677c-4bbd-a479-3f349cb785e7',
    )
    expect(humanValue('identity', 'boolean', true)).toBe('true')
    expect(humanValue('truncate[50]', 'decimal(9, 2)', 1050n)).toBe('10.50')
  })

  it('rejects a tuple whose length does not match the spec', () => {
    expect(() => partitionPath(spec, schema, [1])).toThrow(/tuple has 1 values but spec 0 has 5 fields/)
  })
})
