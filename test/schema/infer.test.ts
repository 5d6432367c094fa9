import { describe, expect, it } from 'vitest'
import { SchemaError } from '../../lib/errors.js'
import { inferSchema } from '../../lib/schema/infer.js'
import { maxFieldId } from '../../lib/schema/walk.js'

describe('inferSchema', () => {
  it('maps JSON values to Iceberg types, every field optional, ids in Iceberg order', () => {
    const schema = inferSchema([{ id: 1, price: 9.5, ok: true, name: 'x', ts: '2024-05-01T10:00:00Z', user: { city: 'Oslo' }, tags: ['a'] }])
    expect(schema).toEqual({
      type: 'struct',
      'schema-id': 0,
      fields: [
        { id: 1, name: 'id', required: false, type: 'long' },
        { id: 2, name: 'price', required: false, type: 'double' },
        { id: 3, name: 'ok', required: false, type: 'boolean' },
        { id: 4, name: 'name', required: false, type: 'string' },
        { id: 5, name: 'ts', required: false, type: 'timestamptz' },
        { id: 6, name: 'user', required: false, type: { type: 'struct', fields: [{ id: 8, name: 'city', required: false, type: 'string' }] } },
        { id: 7, name: 'tags', required: false, type: { type: 'list', 'element-id': 9, element: 'string', 'element-required': false } },
      ],
    })
  })
  it('widens across records: long + double → double, timestamptz + string → string, other conflicts → string', () => {
    const schema = inferSchema([
      { n: 1, t: '2024-05-01T10:00:00+02:00', c: true, s: { a: 1 } },
      { n: 1.5, t: 'yesterday', c: 3, s: { b: 'x' } },
    ])
    expect(schema.fields.map((f) => [f.name, f.type])).toEqual([
      ['n', 'double'],
      ['t', 'string'],
      ['c', 'string'],
      ['s', { type: 'struct', fields: [{ id: 5, name: 'a', required: false, type: 'long' }, { id: 6, name: 'b', required: false, type: 'string' }] }],
    ])
  })
  it('date-time text with non-zero digits past microseconds: timestamptz_ns from format v3, a string before (never floored)', () => {
    const types = (records: object[], formatVersion?: number) => inferSchema(records, { formatVersion }).fields.map((f) => f.type)
    const ns = { at: '2024-05-01T12:51:30.123456789Z' }
    const us = { at: '2024-05-01T12:51:30.123456Z' }
    expect(types([ns], 3)).toEqual(['timestamptz_ns'])
    expect(types([ns, us, us], 3)).toEqual(['timestamptz_ns'])
    expect(types([ns])).toEqual(['string'])
    expect(types([ns, us, us])).toEqual(['timestamptz'])
    expect(types([{ at: '2024-05-01T12:51:30.123456000Z' }], 3)).toEqual(['timestamptz'])
  })

  it('a timestamp without a zone stays a string (its meaning is ambiguous)', () => {
    expect(inferSchema([{ t: '2024-05-01T10:00:00' }]).fields[0]!.type).toBe('string')
  })
  it('fields only ever null, [] or {} are left out until they carry a value', () => {
    expect(inferSchema([{ a: null, b: [], c: {}, d: [null], e: 1 }, { a: null }]).fields.map((f) => f.name)).toEqual(['e'])
    expect(inferSchema([{ a: null }, { a: 'x' }]).fields.map((f) => [f.name, f.type])).toEqual([['a', 'string']])
    // …but an empty object still conflicts with a primitive, so the column is a string that holds both.
    expect(inferSchema([{ a: {} }, { a: false }]).fields.map((f) => [f.name, f.type])).toEqual([['a', 'string']])
  })
  it('starts at startId (for fields added to an existing table)', () => {
    const schema = inferSchema([{ a: 1, b: { c: 2 } }], { startId: 10 })
    expect(schema.fields.map((f) => f.id)).toEqual([10, 11])
    expect(maxFieldId(schema)).toBe(12)
  })
  it('identifier columns become required and are listed; unknown or floating ones are rejected', () => {
    const schema = inferSchema([{ id: 1, v: 2.5 }], { idColumns: ['id'] })
    expect(schema['identifier-field-ids']).toEqual([1])
    expect(schema.fields[0]!.required).toBe(true)
    expect(() => inferSchema([{ id: 1 }], { idColumns: ['key'] })).toThrow(SchemaError)
    expect(() => inferSchema([{ v: 2.5 }], { idColumns: ['v'] })).toThrow("identifier column 'v' must be a non-floating primitive, got double")
  })

  it('a minority of mistyped values does not decide a type; without a majority the column is a string', () => {
    const records = [...Array.from({ length: 9 }, () => ({ ts: '2024-05-01T10:00:00Z', n: 1, ok: true })), { ts: 'yesterday-ish', n: 'x', ok: 'maybe' }]
    expect(inferSchema(records).fields.map((f) => [f.name, f.type])).toEqual([
      ['ts', 'timestamptz'],
      ['n', 'long'],
      ['ok', 'boolean'],
    ])
    expect(inferSchema([{ a: 1 }, { a: 'x' }, { a: true }]).fields[0]!.type).toBe('string')
    // Integers beyond 2^53 outnumbering the doubles keep the column long (a double cannot hold them).
    expect(inferSchema([{ n: 2n ** 62n }, { n: 2n ** 62n + 1n }, { n: 1.5 }]).fields[0]!.type).toBe('long')
  })

  it('refuses to recurse past maxDepth instead of overflowing the stack', () => {
    let deep: unknown = 1
    for (let i = 0; i < 10_000; i++) deep = [deep]
    expect(() => inferSchema([{ a: deep }], { maxDepth: 64 })).toThrow(/nests deeper than 64 levels/)
  })
})
