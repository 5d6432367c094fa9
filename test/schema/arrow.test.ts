import * as arrow from 'apache-arrow'
import { describe, expect, it } from 'vitest'
import { SchemaError } from '../../lib/errors.js'
import { FIELD_ID_KEY, fromArrowSchema, toArrowSchema } from '../../lib/schema/arrow.js'
import type { Schema } from '../../lib/schema/types.js'
import { fieldById, fieldByName, indexById, leafFields, maxFieldId } from '../../lib/schema/walk.js'

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'ts', required: false, type: 'timestamptz' },
    { id: 3, name: 'local', required: false, type: 'timestamp' },
    { id: 4, name: 'amount', required: false, type: 'decimal(10, 2)' },
    { id: 5, name: 'u', required: false, type: 'uuid' },
    { id: 6, name: 'd', required: false, type: 'date' },
    { id: 7, name: 't', required: false, type: 'time' },
    { id: 8, name: 'tags', required: false, type: { type: 'list', 'element-id': 11, element: 'string', 'element-required': true } },
    { id: 9, name: 'attrs', required: false, type: { type: 'map', 'key-id': 12, key: 'string', 'value-id': 13, value: 'int', 'value-required': false } },
    { id: 10, name: 'user', required: false, type: { type: 'struct', fields: [{ id: 14, name: 'f', required: true, type: 'fixed[3]' }] } },
  ],
}

describe('toArrowSchema', () => {
  const arrowSchema = toArrowSchema(schema)
  const byName = (name: string) => arrowSchema.fields.find((f) => f.name === name)!

  it('maps primitives to microsecond timestamps (UTC for timestamptz), Decimal128, fixed 16 for uuid, date32, time64', () => {
    expect(String(byName('ts').type)).toBe('Timestamp<MICROSECOND, UTC>')
    expect((byName('local').type as arrow.Timestamp).timezone).toBeNull()
    const dec = byName('amount').type as arrow.Decimal
    expect([dec.precision, dec.scale, dec.bitWidth]).toEqual([10, 2, 128])
    expect((byName('u').type as arrow.FixedSizeBinary).byteWidth).toBe(16)
    expect(byName('d').type).toBeInstanceOf(arrow.DateDay)
    expect(byName('t').type).toBeInstanceOf(arrow.TimeMicrosecond)
    expect(byName('id').nullable).toBe(false)
    expect(byName('ts').nullable).toBe(true)
  })
  it('puts PARQUET:field_id on every field, list elements and map keys/values included', () => {
    const ids: Record<string, string | undefined> = {}
    const visit = (f: arrow.Field, prefix: string): void => {
      ids[prefix + f.name] = f.metadata.get(FIELD_ID_KEY)
      for (const c of f.type.children ?? []) visit(c, `${prefix}${f.name}.`)
    }
    arrowSchema.fields.forEach((f) => visit(f, ''))
    expect(ids['tags.element']).toBe('11')
    expect(byName('tags').type.children[0]!.nullable).toBe(false)
    expect(ids['attrs.entries']).toBeUndefined()
    expect(ids['attrs.entries.key']).toBe('12')
    expect(ids['attrs.entries.value']).toBe('13')
    expect(ids['user.f']).toBe('14')
    expect(Object.entries(ids).filter(([, id]) => id !== undefined)).toHaveLength(14)
  })
  it('round-trips through fromArrowSchema', () => {
    expect(fromArrowSchema(arrowSchema)).toEqual(schema)
  })
  it('gives fields without ids fresh ones that do not collide', () => {
    const s = fromArrowSchema(new arrow.Schema([new arrow.Field('a', new arrow.Int32()), new arrow.Field('b', new arrow.Utf8(), true, new Map([[FIELD_ID_KEY, '1']]))]))
    expect(s.fields.map((f) => [f.name, f.id, f.type])).toEqual([
      ['a', 2, 'int'],
      ['b', 1, 'string'],
    ])
  })
  it('refuses types it cannot map', () => {
    expect(() => toArrowSchema({ type: 'struct', fields: [{ id: 1, name: 'g', required: false, type: 'geometry' }] })).toThrow(SchemaError)
  })
})

describe('schema walking', () => {
  it('indexes fields by id and dotted name, with Iceberg names for elements and map parts', () => {
    expect(fieldById(schema, 13)).toMatchObject({ name: 'attrs.value', type: 'int', repeated: true })
    expect(fieldByName(schema, 'user.f')).toMatchObject({ id: 14, repeated: false })
    expect(fieldByName(schema, 'tags.element')?.id).toBe(11)
    expect(maxFieldId(schema)).toBe(14)
    expect(leafFields(schema).map((f) => f.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 14])
  })
  it('rejects a schema that uses an id twice', () => {
    expect(() => indexById({ type: 'struct', fields: [{ id: 1, name: 'a', required: false, type: 'int' }, { id: 1, name: 'b', required: false, type: 'int' }] })).toThrow(
      "field id 1 is used twice: 'a' and 'b'",
    )
  })
})
