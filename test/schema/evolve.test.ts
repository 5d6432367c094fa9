import { describe, expect, it } from 'vitest'
import { SchemaError } from '../../lib/errors.js'
import { applySchemaUpdates, canPromote, evolveSchema } from '../../lib/schema/evolve.js'
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
    const next = evolveSchema(base, incoming, 20, { table: 'db.t' })!
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
    expect(evolveSchema(base, inferSchema([{ id: 5, v: 'text', user: 'flat' }]), 8)).toBeUndefined()
  })
  it('gives a new nested struct fresh ids for all of its fields', () => {
    const next = evolveSchema(base, inferSchema([{ geo: { lat: 1.5, tags: ['x'] } }]), 8)!
    expect(next.fields.at(-1)).toEqual({
      id: 9,
      name: 'geo',
      required: false,
      type: { type: 'struct', fields: [{ id: 10, name: 'lat', required: false, type: 'double' }, { id: 11, name: 'tags', required: false, type: { type: 'list', 'element-id': 12, element: 'string', 'element-required': false } }] },
    })
  })
})

describe('evolveSchema (union mode, for writer schemas such as Avro)', () => {
  const target = (fields: Schema['fields']): Schema => ({ type: 'struct', 'schema-id': 0, fields })
  it('widens int → long, float → double, decimal precision, and makes fields optional', () => {
    const next = evolveSchema(
      base,
      target([
        { id: 0, name: 'id', required: true, type: 'long' },
        { id: 0, name: 'v', required: false, type: 'double' },
        { id: 0, name: 'amount', required: false, type: 'decimal(18, 2)' },
      ]),
      8,
      { mode: 'union', table: 'db.t' },
    )!
    expect(next.fields.slice(0, 3)).toEqual([
      { id: 1, name: 'id', required: true, type: 'long' },
      { id: 2, name: 'v', required: false, type: 'double' },
      { id: 3, name: 'amount', required: false, type: 'decimal(18, 2)' },
    ])
  })
  it('keeps a wider column when the incoming type is narrower (its values still fit)', () => {
    const wide: Schema = { ...base, fields: [{ id: 1, name: 'id', required: false, type: 'long' }] }
    expect(evolveSchema(wide, target([{ id: 0, name: 'id', required: false, type: 'int' }]), 1, { mode: 'union' })).toBeUndefined()
  })
  it('adds a field the writer marks required as optional (the spec allows no other way)', () => {
    const next = evolveSchema(base, target([{ id: 0, name: 'extra', required: true, type: 'string' }]), 8, { mode: 'union' })!
    expect(next.fields.at(-1)).toEqual({ id: 9, name: 'extra', required: false, type: 'string' })
  })
  it('rejects a type change with the table, field and both types', () => {
    expect(() => evolveSchema(base, target([{ id: 0, name: 'id', required: true, type: 'string' }]), 8, { mode: 'union', table: 'db.t' })).toThrow(
      "table db.t: field 'id' cannot change from int to string (only int → long, float → double and wider decimal precision are allowed)",
    )
    expect(() => evolveSchema(base, target([{ id: 0, name: 'amount', required: false, type: 'decimal(12, 3)' }]), 8, { mode: 'union', table: 'db.t' })).toThrow(
      "field 'amount' cannot change from decimal(9, 2) to decimal(12, 3)",
    )
    expect(() => evolveSchema(base, target([{ id: 0, name: 'user', required: false, type: 'string' }]), 8, { mode: 'union', table: 'db.t' })).toThrow(SchemaError)
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
  })
})
