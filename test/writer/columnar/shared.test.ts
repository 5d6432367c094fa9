/**
 * Tables of one shape share their compiled coercion and Arrow builder (columnar/shared.ts): the
 * rows, the Parquet bytes and each table's own error messages are as if each had compiled its own.
 */
import { describe, expect, it } from 'vitest'
import { compileCoercer, encodeParquet } from '../../../lib/writer/columnar/index.js'
import { fieldsKey, SharedCompiled } from '../../../lib/writer/columnar/shared.js'
import type { Schema } from '../../../lib/schema/types.js'

const schema = (id: number): Schema => ({
  type: 'struct',
  'schema-id': id,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'name', required: false, type: 'string' },
    { id: 3, name: 'at', required: false, type: 'timestamptz' },
  ],
})

describe('compiled parts shared by tables with the same fields', () => {
  it('gives one part per key while it is held, another for other fields or options', () => {
    const shared = new SharedCompiled<{ n: number }>()
    let made = 0
    const a = shared.get(fieldsKey(schema(0).fields, true), () => ({ n: made++ }))
    expect(shared.get(fieldsKey(schema(7).fields, true), () => ({ n: made++ }))).toBe(a)
    expect(shared.get(fieldsKey(schema(0).fields, false), () => ({ n: made++ }))).not.toBe(a)
    expect(shared.get(fieldsKey([...schema(0).fields, { id: 4, name: 'x', required: false, type: 'int' }], true), () => ({ n: made++ }))).not.toBe(a)
    expect(made).toBe(3)
  })

  it('coerces the same rows, and each table names itself in its errors', () => {
    const a = compileCoercer(schema(0), { table: 'db.a', longsAsNumbers: true })
    const b = compileCoercer(schema(3), { table: 'db.b', longsAsNumbers: true })
    const record = { id: 7, name: 'x', at: '2026-12-02T10:00:00Z', extra: 1 }
    expect(b(record)).toEqual(a(record))
    expect(() => a({ id: 'seven' })).toThrow(/^table db\.a: field 'id'/)
    expect(() => b({ id: 'seven' })).toThrow(/^table db\.b: field 'id'/)
    expect(() => b(null)).toThrow(/^table db\.b: record expected struct/)
  })

  it('encodes the same Parquet bytes and metrics for both tables, interleaved', async () => {
    const rows = [
      { id: 1, name: 'a', at: 1_700_000_000_000_000n },
      { id: 2, name: null, at: null },
    ]
    const first = await encodeParquet(schema(0), rows)
    const other = await encodeParquet(schema(5), rows.slice(1))
    const again = await encodeParquet(schema(5), rows)
    expect(Buffer.from(again.bytes).equals(Buffer.from(first.bytes))).toBe(true)
    expect(again.metrics).toEqual(first.metrics)
    expect(other.recordCount).toBe(1)
  })
})
