import { describe, expect, it } from 'vitest'
import { partitionTuple } from '../../../lib/iceberg/partition.js'
import type { PartitionSpec } from '../../../lib/iceberg/types.js'
import type { Schema } from '../../../lib/schema/types.js'
import { compileCoercer, encodeParquet } from '../../../lib/writer/columnar/index.js'

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: false, type: 'long' },
    { id: 2, name: 'ts', required: false, type: 'timestamptz' },
    { id: 3, name: 'ns', required: false, type: 'timestamp_ns' },
    { id: 4, name: 't', required: false, type: 'time' },
    { id: 5, name: 'xs', required: false, type: { type: 'list', 'element-id': 6, element: 'long', 'element-required': false } },
    { id: 7, name: 's', required: false, type: { type: 'struct', fields: [{ id: 8, name: 'n', required: false, type: 'long' }] } },
  ],
}

// Negative, zero, -0, around 2^31 and 2^32, the safe-integer edges, beyond 2^53 (bigint), nulls.
const ids: unknown[] = [0, -0, 1, -1, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), -(2 ** 31) - 1, 2 ** 32, -(2 ** 32), 2 ** 32 + 5, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 9223372036854775807n, -9223372036854775808n, 2n ** 53n + 1n, null, '123', '-9007199254740993']
const records = ids.map((id, i) => ({
  id,
  ts: i % 3 === 0 ? '2024-05-01T10:00:00.123456Z' : i % 3 === 1 ? -86_400_001 : '1969-12-31T23:59:59.999999Z',
  ns: i % 2 ? '2024-05-01T10:00:00.123456789Z' : 1_714_557_600_000,
  t: i % 2 ? '23:59:59.999999' : 0,
  xs: [id, i, -i],
  s: { n: id },
}))

describe('longs as numbers (the writer path: no BigInt per value)', () => {
  it('write the same Parquet bytes and Iceberg metrics as bigint rows', async () => {
    const exact = compileCoercer(schema, { table: 'db.t' })
    const numbers = compileCoercer(schema, { table: 'db.t', longsAsNumbers: true })
    const a = records.map((r) => exact(r).row)
    const b = records.map((r) => numbers(r).row)
    expect(b.some((r) => typeof r.id === 'number')).toBe(true)
    expect(b.map((r) => (r.id === null ? null : BigInt(r.id as number | bigint)))).toEqual(a.map((r) => r.id))
    const ea = await encodeParquet(schema, a)
    const eb = await encodeParquet(schema, b)
    expect(Buffer.compare(Buffer.from(ea.bytes), Buffer.from(eb.bytes))).toBe(0)
    expect(eb.metrics).toEqual(ea.metrics)
  })
  it('partition the same way (transforms take them as bigint)', () => {
    const spec: PartitionSpec = {
      'spec-id': 0,
      fields: [
        { 'source-id': 1, 'field-id': 1000, name: 'id_bucket', transform: 'bucket[16]' },
        { 'source-id': 2, 'field-id': 1001, name: 'ts_day', transform: 'day' },
        { 'source-id': 1, 'field-id': 1002, name: 'id', transform: 'identity' },
        { 'source-id': 8, 'field-id': 1003, name: 'n_trunc', transform: 'truncate[10]' },
      ],
    }
    const exact = compileCoercer(schema, { table: 'db.t' })
    const numbers = compileCoercer(schema, { table: 'db.t', longsAsNumbers: true })
    for (const r of records) expect(partitionTuple(spec, schema, numbers(r).row)).toEqual(partitionTuple(spec, schema, exact(r).row))
  })
})
