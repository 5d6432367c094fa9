import { LosslessNumber } from 'lossless-json'
import { describe, expect, it } from 'vitest'
import { RecordError, SchemaError } from '../../../lib/errors.js'
import type { Schema } from '../../../lib/schema/types.js'
import { evolveSchema } from '../../../lib/schema/evolve.js'
import { inferSchema } from '../../../lib/schema/infer.js'
import { coerceRecord, compileCoercer } from '../../../lib/writer/columnar/index.js'

const schemaOf = (fields: Schema['fields']): Schema => ({ type: 'struct', 'schema-id': 0, fields })
const one = (type: Schema['fields'][number]['type'], required = false) => compileCoercer(schemaOf([{ id: 1, name: 'v', required, type }]), { table: 'db.events' })
const value = (type: Schema['fields'][number]['type'], v: unknown) => one(type)({ v }).row.v
const error = (type: Schema['fields'][number]['type'], v: unknown, required = false) => {
  try {
    one(type, required)({ v })
  } catch (err) {
    expect(err).toBeInstanceOf(RecordError)
    return (err as Error).message
  }
  throw new Error(`expected ${JSON.stringify(v)} to be rejected as ${JSON.stringify(type)}`)
}

describe('timestamps', () => {
  it('ISO-8601 text with zone becomes UTC microseconds, exact to the microsecond', () => {
    expect(value('timestamptz', '2024-05-01T10:00:00.123456Z')).toBe(1714557600123456n)
    expect(value('timestamptz', '2024-05-01T12:00:00.123456+02:00')).toBe(1714557600123456n)
    expect(value('timestamptz', '2024-05-01 05:30:00-0430')).toBe(1714557600000000n)
  })
  it('text without zone is taken as UTC; digits past microseconds are refused unless zeros (never floored)', () => {
    expect(value('timestamp', '2024-05-01T10:00:00')).toBe(1714557600000000n)
    expect(value('timestamptz', '1969-12-31T23:59:59.999999000Z')).toBe(-1n)
    expect(() => value('timestamptz', '1969-12-31T23:59:59.9999999Z')).toThrow(/expected timestamptz \(microseconds: the value has non-zero digits past them\), got string '1969-12-31T23:59:59.9999999Z'/)
    expect(() => value('time', '10:00:00.000000001')).toThrow(/expected time, got string '10:00:00.000000001'/)
    expect(value('time', '10:00:00.123456000')).toBe(36_000_123_456n)
  })
  it('epoch milliseconds (number, bigint, digit text, Date) become microseconds', () => {
    expect(value('timestamptz', 1714557600123)).toBe(1714557600123000n)
    expect(value('timestamptz', 1714557600123n)).toBe(1714557600123000n)
    expect(value('timestamptz', '1714557600123')).toBe(1714557600123000n)
    expect(value('timestamptz', new Date(1714557600123))).toBe(1714557600123000n)
  })
  it('nanosecond timestamps keep all nine digits', () => {
    expect(value('timestamptz_ns', '2024-05-01T10:00:00.123456789Z')).toBe(1714557600123456789n)
  })
  it('an impossible date is rejected with field, type and value', () => {
    expect(error('timestamptz', '2024-13-01T00:00:00Z')).toBe("table db.events: field 'v' expected timestamptz, got string '2024-13-01T00:00:00Z'")
    expect(error('timestamp', '2023-02-29T00:00:00')).toMatch(/expected timestamp, got string '2023-02-29/)
    expect(error('timestamptz', true)).toBe("table db.events: field 'v' expected timestamptz, got boolean true")
  })
})

describe('decimals are exact', () => {
  it('numbers go through their shortest text, never a float product', () => {
    expect(value('decimal(10, 2)', 10.65)).toBe(1065n)
    expect(value('decimal(10, 2)', 0.1)).toBe(10n)
    expect(value('decimal(38, 10)', '12345678901234567890.0123456789')).toBe(123456789012345678900123456789n)
    expect(value('decimal(9, 3)', '1.5e2')).toBe(150000n)
    expect(value('decimal(9, 3)', new LosslessNumber('-0.0005'))).toBe(-1n)
  })
  it('extra digits round half up, as Iceberg Kafka Connect does', () => {
    expect(value('decimal(10, 2)', '2.345')).toBe(235n)
    expect(value('decimal(10, 2)', '-2.345')).toBe(-235n)
    expect(value('decimal(10, 2)', '2.344')).toBe(234n)
  })
  it('a value needing more precision than the column has is rejected', () => {
    expect(error('decimal(4, 2)', 123.4)).toBe("table db.events: field 'v' expected decimal(4, 2), got number 123.4")
    expect(error('decimal(4, 2)', 'abc')).toMatch(/expected decimal\(4, 2\), got string 'abc'/)
  })
})

describe('integers are range-checked', () => {
  it('int accepts 32-bit integers only', () => {
    expect(value('int', 2147483647)).toBe(2147483647)
    expect(value('int', '-5')).toBe(-5)
    expect(error('int', 2147483648)).toBe("table db.events: field 'v' expected int, got number 2147483648")
    expect(error('int', 1.5)).toBe("table db.events: field 'v' expected int, got number 1.5")
  })
  it('long is a bigint; 64-bit values arrive exactly as bigint, text or lossless numbers', () => {
    expect(value('long', 42)).toBe(42n)
    expect(value('long', '9223372036854775807')).toBe(9223372036854775807n)
    expect(value('long', new LosslessNumber('-9223372036854775808'))).toBe(-9223372036854775808n)
    expect(error('long', '9223372036854775808')).toMatch(/expected long, got string '9223372036854775808'/)
    // A JS number above 2^53 has already lost digits: refuse rather than store a wrong id.
    expect(error('long', 2 ** 60)).toBe("table db.events: field 'v' expected long, got number 1152921504606847000")
  })
})

describe('floats are exact', () => {
  it('float accepts only values a float holds (a promoted column or a dead letter, never a rounded value)', () => {
    expect(value('float', 1.5)).toBe(1.5)
    expect(value('float', Math.fround(0.1))).toBe(Math.fround(0.1))
    expect(value('float', '-0.25')).toBe(-0.25)
    expect(value('float', Number.NaN)).toBeNaN()
    expect(value('float', Number.POSITIVE_INFINITY)).toBe(Number.POSITIVE_INFINITY)
    expect(error('float', 0.1)).toBe("table db.events: field 'v' expected float, got number 0.1")
    expect(error('float', new LosslessNumber('16777217'))).toMatch(/expected float, got object 16777217/)
    expect(value('double', 0.1)).toBe(0.1)
  })
})

describe('case-insensitive tables', () => {
  it('match record keys to fields ignoring case only with caseInsensitive', () => {
    const schema = schemaOf([{ id: 1, name: 'userId', required: false, type: 'long' }, { id: 2, name: 'n', required: false, type: { type: 'struct', fields: [{ id: 3, name: 'Deep', required: false, type: 'string' }] } }])
    const ci = compileCoercer(schema, { table: 'db.t', caseInsensitive: true })({ USERID: 5, N: { deep: 'x' } })
    expect({ row: ci.row, unknown: ci.unknown }).toEqual({ row: { userId: 5n, n: { Deep: 'x' } }, unknown: [] })
    const exact = compileCoercer(schema, { table: 'db.t' })({ USERID: 5, n: { deep: 'x' } })
    expect(exact.row).toEqual({ userId: null, n: { Deep: null } })
    expect(exact.unknown.map((u) => u.path)).toEqual(['n.deep', 'USERID'])
  })
})

describe('other primitives', () => {
  it('dates, times, uuids, binary, fixed, booleans, floats', () => {
    expect(value('date', '2024-05-01')).toBe(19844)
    expect(value('date', 19844)).toBe(19844)
    expect(error('date', '2024-05-01T00:00:00Z')).toMatch(/expected date/)
    expect(value('time', '10:15:30.5')).toBe(36930500000n)
    expect(value('time', 1000)).toBe(1000000n)
    expect(Array.from(value('uuid', '123e4567-e89b-12d3-a456-426614174000') as Uint8Array).slice(0, 3)).toEqual([0x12, 0x3e, 0x45])
    expect(error('uuid', 'not-a-uuid')).toBe("table db.events: field 'v' expected uuid, got string 'not-a-uuid'")
    expect(Array.from(value('binary', 'AQID') as Uint8Array)).toEqual([1, 2, 3])
    expect(error('fixed[4]', 'AQID')).toMatch(/expected fixed\[4\]/)
    expect(value('boolean', 'true')).toBe(true)
    expect(error('boolean', 1)).toBe("table db.events: field 'v' expected boolean, got number 1")
    expect(value('double', 'NaN')).toBeNaN()
    expect(value('float', '1.5')).toBe(1.5)
  })
  it('strings take text, numbers and booleans as text, objects as JSON text', () => {
    expect(value('string', 'x')).toBe('x')
    expect(value('string', 12)).toBe('12')
    expect(value('string', { a: 1 })).toBe('{"a":1}')
  })
})

describe('nested types', () => {
  const schema = schemaOf([
    { id: 1, name: 'id', required: true, type: 'long' },
    {
      id: 2,
      name: 'user',
      required: false,
      type: { type: 'struct', fields: [{ id: 5, name: 'name', required: true, type: 'string' }] },
    },
    { id: 3, name: 'items', required: false, type: { type: 'list', 'element-id': 6, element: { type: 'struct', fields: [{ id: 8, name: 'price', required: false, type: 'decimal(9, 2)' }] }, 'element-required': true } },
    { id: 4, name: 'attrs', required: false, type: { type: 'map', 'key-id': 9, key: 'string', 'value-id': 10, value: 'int', 'value-required': false } },
  ])
  const coerce = compileCoercer(schema, { table: 'db.orders' })

  it('structs, lists and JSON objects as maps', () => {
    const { row, unknown } = coerce({ id: 1, user: { name: 'ann' }, items: [{ price: '9.99' }], attrs: { a: 1, b: null } })
    expect(row).toEqual({ id: 1n, user: { name: 'ann' }, items: [{ price: 999n }], attrs: new Map([['a', 1], ['b', null]]) })
    expect(unknown).toEqual([])
  })
  it('missing optional fields are null; a missing required one is an error with its path', () => {
    expect(coerce({ id: 2 }).row).toEqual({ id: 2n, user: null, items: null, attrs: null })
    expect(() => coerce({ user: { name: 'x' } })).toThrow("table db.orders: field 'id' expected long (required), got undefined")
    expect(() => coerce({ id: 1, user: {} })).toThrow("table db.orders: field 'user.name' expected string (required), got undefined")
    expect(() => coerce({ id: 1, items: [{ price: 1 }, null] })).toThrow("table db.orders: field 'items[1]' expected struct (required), got null")
  })
  it('a bad value deep inside names the element and key', () => {
    expect(() => coerce({ id: 1, items: [{ price: 1 }, { price: 'x' }] })).toThrow("table db.orders: field 'items[1].price' expected decimal(9, 2), got string 'x'")
    expect(() => coerce({ id: 1, attrs: { ok: 1, bad: 'y' } })).toThrow(`table db.orders: field 'attrs["bad"]' expected int, got string 'y'`)
    expect(() => coerce({ id: 1, items: 'none' })).toThrow("table db.orders: field 'items' expected list, got string 'none'")
  })
  it('unknown fields are reported with Iceberg-style paths and a sample value; null ones are not', () => {
    const { row, unknown } = coerce({ id: 1, extra: 5, gone: null, empty: [], user: { name: 'a', age: 3 }, items: [{ price: 1, sku: 'x' }] })
    expect(row).toEqual({ id: 1n, user: { name: 'a' }, items: [{ price: 100n }], attrs: null })
    expect(unknown).toEqual([
      { path: 'user.age', value: 3 },
      { path: 'items.element.sku', value: 'x' },
      { path: 'extra', value: 5 },
    ])
  })
  it('a record that is not an object is rejected', () => {
    expect(() => coerce([1])).toThrow('table db.orders: record expected struct, got array [1]')
    expect(() => coerce('x')).toThrow(RecordError)
  })
})

describe('coerceRecord', () => {
  it('caches one compiled coercer per schema and table and counts unknown fields', () => {
    const schema = schemaOf([{ id: 1, name: 'a', required: false, type: 'int' }])
    expect(coerceRecord(schema, { a: 1, b: 2, c: 3 }, { table: 't' })).toMatchObject({ row: { a: 1 }, unknownFields: 2 })
    expect(() => coerceRecord(schema, { a: 'x' }, { table: 'ns.t' })).toThrow("table ns.t: field 'a' expected int, got string 'x'")
  })
  it('a type the writer cannot store fails when compiling, not per record', () => {
    expect(() => one('variant')).toThrow(SchemaError)
  })
})

describe('unknown fields drive evolution', () => {
  it('a record with new fields: infer, evolve, recompile, and the new fields are kept with fresh ids', () => {
    const table: Schema = schemaOf([
      { id: 1, name: 'id', required: true, type: 'long' },
      { id: 2, name: 'user', required: false, type: { type: 'struct', fields: [{ id: 3, name: 'name', required: false, type: 'string' }] } },
    ])
    const record = { id: 7, user: { name: 'a', plan: 'pro' }, ts: '2024-05-01T10:00:00Z' }
    const first = compileCoercer(table, { table: 'db.t' })(record)
    expect(first.unknown.map((u) => u.path)).toEqual(['user.plan', 'ts'])
    const evolved = evolveSchema(table, inferSchema([record]), 3, { table: 'db.t' }).schema!
    const again = compileCoercer(evolved, { table: 'db.t' })(record)
    expect(again.unknown).toEqual([])
    expect(again.row).toEqual({ id: 7n, user: { name: 'a', plan: 'pro' }, ts: 1714557600000000n })
    expect(evolved.fields.map((f) => [f.id, f.name])).toEqual([
      [1, 'id'],
      [2, 'user'],
      [5, 'ts'],
    ])
  })
})

describe('floating-point columns store values exactly or refuse them', () => {
  it('integers a double holds exactly pass; ones it would round are refused, naming the value', () => {
    expect(value('double', 2n ** 60n)).toBe(2 ** 60)
    expect(value('double', 9007199254740992n)).toBe(9007199254740992)
    expect(error('double', 9223372036854775807n)).toBe("table db.events: field 'v' expected double (exactly), got bigint 9223372036854775807")
    expect(error('double', new LosslessNumber('9007199254740993'))).toMatch(/expected double \(exactly\)/)
  })
  it('finite text that overflows to Infinity is refused; NaN and Infinity said as such pass', () => {
    expect(error('double', new LosslessNumber('1e400'))).toMatch(/expected double \(exactly\), got object 1e400/)
    expect(error('double', '-1e400')).toMatch(/expected double \(exactly\)/)
    expect(value('double', 'Infinity')).toBe(Infinity)
    expect(Number.isNaN(value('double', 'NaN'))).toBe(true)
    expect(value('double', new LosslessNumber('0.1000000000000000055511151231257827'))).toBe(0.1)
  })
  it('a float column refuses doubles past float range', () => {
    expect(value('float', 1.5)).toBe(1.5)
    expect(error('float', 1e39)).toMatch(/expected float, got number 1e\+39/)
    expect(error('float', '1e39')).toMatch(/expected float \(exactly\)/)
  })
})

describe('row size', () => {
  it('is the estimate buffers charge (estimateRowBytes of the row), summed while the row is built', async () => {
    const { estimateRowBytes } = await import('../../../lib/writer/buffers.js')
    const schema = schemaOf([
      { id: 1, name: 'id', required: true, type: 'long' },
      { id: 2, name: 'name', required: false, type: 'string' },
      { id: 3, name: 'score', required: false, type: 'double', 'write-default': 1.5 },
      { id: 4, name: 'tags', required: false, type: { type: 'list', 'element-id': 5, element: 'string', 'element-required': false } },
      { id: 6, name: 'attrs', required: false, type: { type: 'map', 'key-id': 7, key: 'string', 'value-id': 8, value: 'int', 'value-required': false } },
      { id: 9, name: 'device', required: false, type: { type: 'struct', fields: [{ id: 10, name: 'os', required: false, type: 'string' }, { id: 11, name: 'inner', required: false, type: { type: 'struct', fields: [{ id: 12, name: 'v', required: false, type: 'boolean' }] } }] } },
      { id: 13, name: 'ts', required: false, type: 'timestamptz' },
      { id: 14, name: 'raw', required: false, type: 'binary' },
      { id: 15, name: 'd', required: false, type: 'decimal(9, 2)' },
    ])
    const coerce = compileCoercer(schema, { table: 'db.t' })
    const records = [
      { id: 1 },
      { id: 2, name: 'München ✓', score: null, tags: ['a', null, 'ccc'], attrs: { x: 1, y: null }, device: { os: 'ios', inner: { v: true } }, ts: '2024-05-01T10:00:00Z', raw: 'AAEC', d: '12.345' },
      { id: 3, device: null, tags: [], extra: 'unknown field' },
      { id: 4, device: { inner: null }, attrs: {} },
    ]
    for (const r of records) {
      const { row, bytes } = coerce(r)
      expect(bytes).toBe(estimateRowBytes(row))
    }
  })
})
