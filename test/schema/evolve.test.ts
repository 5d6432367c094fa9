import { describe, expect, it } from 'vitest'
import { evolveSchema } from '../../lib/schema/evolve.js'
import { canPromote, promotionsOf } from '../../lib/schema/promote.js'
import { applySchemaUpdates } from '../../lib/schema/updates.js'
import { inferSchema } from '../../lib/schema/infer.js'
import type { Schema } from '../../lib/schema/types.js'

const base: Schema = {
  type: 'struct',
  'schema-id': 3,
  'identifier-field-ids': [1],
  fields: [
    { id: 1, name: 'id', required: true, type: 'int' },
    { id: 2, name: 'v', required: true, type: 'float' },
    { id: 3, name: 'amount', required: false, type: 'decimal(9, 2)' },
    { id: 4, name: 'user', required: false, type: { type: 'struct', fields: [{ id: 6, name: 'name', required: false, type: 'string' }] } },
    { id: 5, name: 'items', required: false, type: { type: 'list', 'element-id': 7, element: { type: 'struct', fields: [{ id: 8, name: 'sku', required: false, type: 'string' }] }, 'element-required': true } },
  ],
}

describe('evolveSchema (add mode, for records)', () => {
  it('adds new nested and top-level fields as optional with ids above last-column-id (existing fields first, in schema order)', () => {
    const incoming = inferSchema([{ id: 1, note: 'x', user: { age: 3 }, items: [{ sku: 'a', qty: 2 }] }])
    const next = evolveSchema(base, incoming, 20, { table: 'db.t' }).schema!
    expect(next['schema-id']).toBe(4)
    expect(next['identifier-field-ids']).toEqual([1])
    expect(next.fields.find((f) => f.name === 'note')).toEqual({ id: 23, name: 'note', required: false, type: 'string' })
    expect(next.fields[3]!.type).toEqual({
      type: 'struct',
      fields: [
        { id: 6, name: 'name', required: false, type: 'string' },
        { id: 21, name: 'age', required: false, type: 'long' },
      ],
    })
    expect((next.fields[4]!.type as { element: unknown }).element).toEqual({
      type: 'struct',
      fields: [
        { id: 8, name: 'sku', required: false, type: 'string' },
        { id: 22, name: 'qty', required: false, type: 'long' },
      ],
    })
  })
  it('leaves existing types alone (a JSON integer in an int column is not a reason to widen)', () => {
    expect(evolveSchema(base, inferSchema([{ id: 5, v: 'text', user: 'flat' }]), 8)).toEqual({ rejected: [] })
  })
  it('gives a new nested struct fresh ids for all of its fields', () => {
    const next = evolveSchema(base, inferSchema([{ geo: { lat: 1.5, tags: ['x'] } }]), 8).schema!
    expect(next.fields.at(-1)).toEqual({
      id: 9,
      name: 'geo',
      required: false,
      type: { type: 'struct', fields: [{ id: 10, name: 'lat', required: false, type: 'double' }, { id: 11, name: 'tags', required: false, type: { type: 'list', 'element-id': 12, element: 'string', 'element-required': false } }] },
    })
  })
})

describe('evolveSchema (writer schemas such as Avro, Connect)', () => {
  const target = (fields: Schema['fields']): Schema => ({ type: 'struct', 'schema-id': 0, fields })
  const opts = { source: 'schema' as const, table: 'db.t' }
  it('widens int → long, float → double, decimal precision, and makes fields optional', () => {
    const next = evolveSchema(
      base,
      target([
        { id: 0, name: 'id', required: true, type: 'long' },
        { id: 0, name: 'v', required: false, type: 'double' },
        { id: 0, name: 'amount', required: false, type: 'decimal(18, 2)' },
      ]),
      8,
      opts,
    ).schema!
    expect(next.fields.slice(0, 3)).toEqual([
      { id: 1, name: 'id', required: true, type: 'long' },
      { id: 2, name: 'v', required: false, type: 'double' },
      { id: 3, name: 'amount', required: false, type: 'decimal(18, 2)' },
    ])
  })
  it('promotes inside structs, list elements and map values, and relaxes a list element', () => {
    const table: Schema = target([
      { id: 1, name: 'c', required: false, type: { type: 'struct', fields: [{ id: 4, name: 'cid', required: true, type: 'int' }] } },
      { id: 2, name: 'xs', required: false, type: { type: 'list', 'element-id': 5, element: 'float', 'element-required': true } },
      { id: 3, name: 'm', required: false, type: { type: 'map', 'key-id': 6, key: 'string', 'value-id': 7, value: 'decimal(5, 1)', 'value-required': false } },
    ])
    const next = evolveSchema(
      table,
      target([
        { id: 0, name: 'c', required: false, type: { type: 'struct', fields: [{ id: 0, name: 'cid', required: true, type: 'long' }] } },
        { id: 0, name: 'xs', required: false, type: { type: 'list', 'element-id': 0, element: 'double', 'element-required': false } },
        { id: 0, name: 'm', required: false, type: { type: 'map', 'key-id': 0, key: 'string', 'value-id': 0, value: 'decimal(20, 1)', 'value-required': false } },
      ]),
      7,
      opts,
    ).schema!
    expect(next.fields.map((f) => f.type)).toEqual([
      { type: 'struct', fields: [{ id: 4, name: 'cid', required: true, type: 'long' }] },
      { type: 'list', 'element-id': 5, element: 'double', 'element-required': false },
      { type: 'map', 'key-id': 6, key: 'string', 'value-id': 7, value: 'decimal(20, 1)', 'value-required': false },
    ])
  })
  it('makes a required field the writer schema no longer has optional, at any depth, but never an identifier field', () => {
    const table: Schema = {
      ...target([
        { id: 1, name: 'id', required: true, type: 'long' },
        { id: 2, name: 'gone', required: true, type: 'string' },
        { id: 3, name: 's', required: true, type: { type: 'struct', fields: [{ id: 4, name: 'deep', required: true, type: 'int' }, { id: 5, name: 'kept', required: true, type: 'int' }] } },
      ]),
      'identifier-field-ids': [1],
    }
    const next = evolveSchema(table, target([{ id: 0, name: 's', required: true, type: { type: 'struct', fields: [{ id: 0, name: 'kept', required: true, type: 'int' }] } }]), 5, opts).schema!
    expect(next.fields.map((f) => [f.name, f.required])).toEqual([
      ['id', true],
      ['gone', false],
      ['s', true],
    ])
    expect((next.fields[2]!.type as { fields: { name: string; required: boolean }[] }).fields.map((f) => [f.name, f.required])).toEqual([
      ['deep', false],
      ['kept', true],
    ])
  })
  it('adds fields to a struct that was empty', () => {
    const table = target([{ id: 1, name: 'meta', required: false, type: { type: 'struct', fields: [] } }])
    const next = evolveSchema(table, target([{ id: 0, name: 'meta', required: false, type: { type: 'struct', fields: [{ id: 0, name: 'a', required: false, type: 'int' }] } }]), 1, opts).schema!
    expect(next.fields[0]!.type).toEqual({ type: 'struct', fields: [{ id: 2, name: 'a', required: false, type: 'int' }] })
  })
  it('keeps a wider column when the incoming type is narrower (its values still fit)', () => {
    const wide: Schema = { ...base, fields: [{ id: 1, name: 'id', required: false, type: 'long' }] }
    expect(evolveSchema(wide, target([{ id: 0, name: 'id', required: false, type: 'int' }]), 1, opts)).toEqual({ rejected: [] })
  })
  it('adds a field the writer marks required as optional (the spec allows no other way)', () => {
    const next = evolveSchema(base, target([{ id: 0, name: 'extra', required: true, type: 'string' }]), 8, opts).schema!
    expect(next.fields.at(-1)).toEqual({ id: 9, name: 'extra', required: false, type: 'string' })
  })
  it('rejects (does not apply) a type change the spec forbids, naming the table, the field and both types', () => {
    const r = evolveSchema(base, target([{ id: 0, name: 'id', required: true, type: 'string' }, { id: 0, name: 'v', required: true, type: 'float' }, { id: 0, name: 'amount', required: false, type: 'decimal(12, 3)' }, { id: 0, name: 'user', required: false, type: 'string' }]), 8, opts)
    expect(r.schema).toBeUndefined()
    expect(r.rejected.map((x) => x.reason)).toEqual([
      "table db.t: field 'id' is int in the table and cannot become string (format v2 allows only int → long, float → double, decimal(P, S) → decimal(P', S) with P' > P)",
      "table db.t: field 'amount' is decimal(9, 2) in the table and cannot become decimal(12, 3) (format v2 allows only int → long, float → double, decimal(P, S) → decimal(P', S) with P' > P)",
      "table db.t: field 'user' is struct<name: string> in the table and cannot become string (format v2 allows only int → long, float → double, decimal(P, S) → decimal(P', S) with P' > P)",
    ])
  })
  it('promotes date → timestamp only in format v3, and not for an identity or bucket partition source', () => {
    const table = target([{ id: 1, name: 'd', required: false, type: 'date' }])
    const inc = target([{ id: 0, name: 'd', required: false, type: 'timestamp' }])
    expect(evolveSchema(table, inc, 1, opts).rejected).toHaveLength(1)
    expect(evolveSchema(table, inc, 1, { ...opts, formatVersion: 3 }).schema!.fields[0]!.type).toBe('timestamp')
    expect(evolveSchema(table, inc, 1, { ...opts, formatVersion: 3, transforms: new Map([[1, ['day']]]) }).schema!.fields[0]!.type).toBe('timestamp')
    const r = evolveSchema(table, inc, 1, { ...opts, formatVersion: 3, transforms: new Map([[1, ['bucket']]]) })
    expect(r.rejected[0]!.reason).toMatch(/source of a bucket partition field/)
    expect(evolveSchema(table, target([{ id: 0, name: 'd', required: false, type: 'timestamptz' }]), 1, { ...opts, formatVersion: 3 }).rejected).toHaveLength(1)
  })
  it('matches names case-insensitively only when asked', () => {
    const inc = target([{ id: 0, name: 'ID', required: true, type: 'long' }])
    expect(evolveSchema(base, inc, 8, opts).schema!.fields.map((f) => f.name)).toContain('ID')
    const ci = evolveSchema(base, inc, 8, { ...opts, caseInsensitive: true }).schema!
    expect(ci.fields.filter((f) => f.name.toLowerCase() === 'id')).toEqual([{ id: 1, name: 'id', required: true, type: 'long' }])
  })
})

describe('applySchemaUpdates', () => {
  it('applies adds (nested via list element), widenings and make-optional', () => {
    const next = applySchemaUpdates(
      base,
      [
        { op: 'add', parent: 'items', name: 'qty', type: 'int' },
        { op: 'widen', field: 'id', type: 'long' },
        { op: 'make-optional', field: 'v' },
      ],
      8,
    )
    expect(next.fields[0]).toEqual({ id: 1, name: 'id', required: true, type: 'long' })
    expect(next.fields[1]!.required).toBe(false)
    expect(JSON.stringify(next.fields[4])).toContain('{"id":9,"name":"qty","required":false,"type":"int"}')
  })
  it('rejects adding a required column, narrowing, changing a type, duplicates and unknown fields', () => {
    expect(() => applySchemaUpdates(base, [{ op: 'add', name: 'x', type: 'int', required: true }], 8, { table: 'db.t' })).toThrow(
      "table db.t: cannot add required column 'x' (int): the spec only allows adding optional columns",
    )
    expect(() => applySchemaUpdates({ ...base, fields: [{ id: 1, name: 'n', required: false, type: 'long' }] }, [{ op: 'widen', field: 'n', type: 'int' }], 8, { table: 'db.t' })).toThrow(
      "table db.t: field 'n' cannot change from long to int",
    )
    expect(() => applySchemaUpdates(base, [{ op: 'widen', field: 'user.name', type: 'binary' }], 8)).toThrow("field 'user.name' cannot change from string to binary")
    expect(() => applySchemaUpdates(base, [{ op: 'add', name: 'id', type: 'int' }], 8)).toThrow("cannot add column 'id': it already exists")
    expect(() => applySchemaUpdates(base, [{ op: 'make-optional', field: 'nope' }], 8)).toThrow("no field 'nope'")
  })
})

describe('canPromote', () => {
  it('follows the spec table', () => {
    expect(canPromote('int', 'long')).toBe(true)
    expect(canPromote('float', 'double')).toBe(true)
    expect(canPromote('decimal(9,2)', 'decimal(10, 2)')).toBe(true)
    expect(canPromote('long', 'int')).toBe(false)
    expect(canPromote('double', 'float')).toBe(false)
    expect(canPromote('int', 'double')).toBe(false)
    expect(canPromote('decimal(9, 2)', 'decimal(10, 3)')).toBe(false)
    expect(canPromote('date', 'timestamp')).toBe(false)
    expect(canPromote('date', 'timestamp_ns', { formatVersion: 3 })).toBe(true)
    expect(canPromote('date', 'timestamptz', { formatVersion: 3 })).toBe(false)
    expect(canPromote('unknown', 'string', { formatVersion: 3 })).toBe(true)
    expect(canPromote('unknown', 'string')).toBe(false)
  })
  it('lists the promotions a value is tried against, narrowest first', () => {
    expect(promotionsOf('int')).toEqual(['long'])
    expect(promotionsOf('decimal(5, 2)')).toEqual(['decimal(9, 2)', 'decimal(18, 2)', 'decimal(38, 2)'])
    expect(promotionsOf('date')).toEqual([])
    expect(promotionsOf('date', { formatVersion: 3, transforms: ['identity'] })).toEqual([])
    expect(promotionsOf('date', { formatVersion: 3 })).toEqual(['timestamp', 'timestamp_ns'])
  })
})

describe('empty structs', () => {
  it('are never left required (Parquet files leave them out, and readers read them as null)', () => {
    const table: Schema = { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: false, type: 'long' }] }
    const empty = { type: 'struct' as const, fields: [] }
    const inc: Schema = {
      type: 'struct',
      'schema-id': 0,
      fields: [{ id: 0, name: 'r', required: true, type: { type: 'struct', fields: [{ id: 0, name: 'e', required: true, type: empty }, { id: 0, name: 'l', required: true, type: { type: 'list', 'element-id': 0, element: empty, 'element-required': true } }] } }],
    }
    const next = evolveSchema(table, inc, 1, { source: 'schema' }).schema!
    expect(next.fields[1]).toEqual({
      id: 2,
      name: 'r',
      required: false,
      type: { type: 'struct', fields: [{ id: 3, name: 'e', required: false, type: empty }, { id: 4, name: 'l', required: true, type: { type: 'list', 'element-id': 5, element: empty, 'element-required': false } }] },
    })
  })
})
