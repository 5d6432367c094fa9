import { describe, expect, it } from 'vitest'
import { avroToIcebergSchema, avroToIcebergType, resolveAvroSchema } from '../../lib/codec/avro-schema.js'
import { SchemaError } from '../../lib/errors.js'
import { everythingSchema } from './avro-fixtures.js'

const typeOf = (schema: unknown) => avroToIcebergType(resolveAvroSchema(schema))

describe('Avro → Iceberg schema mapping', () => {
  it('maps every primitive and logical type, unions, enums, fixed, arrays, maps and records', () => {
    const schema = avroToIcebergSchema(resolveAvroSchema(everythingSchema))
    const f = (id: number, name: string, type: unknown, required = true, extra: object = {}) => ({ id, name, required, type, ...extra })
    expect(schema).toEqual({
      'schema-id': 0,
      type: 'struct',
      fields: [
        f(1, 'b', 'boolean'),
        f(2, 'i', 'int'),
        f(3, 'l', 'long'),
        f(4, 'f', 'float'),
        f(5, 'd', 'double'),
        f(6, 's', 'string', true, { doc: 'a string' }),
        f(7, 'raw', 'binary'),
        f(8, 'dec', 'decimal(10, 2)'),
        f(9, 'decFixed', 'decimal(38, 9)'),
        f(10, 'day', 'date'),
        f(11, 'tMillis', 'time'),
        f(12, 'tMicros', 'time'),
        f(13, 'tsMillis', 'timestamptz'),
        f(14, 'tsMicros', 'timestamptz'),
        f(15, 'tsNanos', 'timestamptz_ns'),
        f(16, 'localMillis', 'timestamp'),
        f(17, 'localMicros', 'timestamp'),
        f(18, 'id', 'uuid'),
        f(19, 'idFixed', 'uuid'),
        f(20, 'hash', 'fixed[16]'),
        f(21, 'color', 'string'),
        f(22, 'opt', 'string', false),
        f(23, 'choice', { type: 'struct', fields: [f(28, 'tag', 'int'), f(29, 'field0', 'int', false), f(30, 'field1', 'string', false)] }, false),
        f(24, 'tags', { type: 'list', 'element-id': 31, element: 'string', 'element-required': true }),
        f(25, 'attrs', { type: 'map', 'key-id': 32, key: 'string', 'value-id': 33, value: 'long', 'value-required': false }),
        f(26, 'inner', { type: 'struct', fields: [f(34, 'x', 'int'), f(35, 'when', 'timestamptz', false)] }),
        f(27, 'again', { type: 'struct', fields: [f(36, 'x', 'int'), f(37, 'when', 'timestamptz', false)] }),
      ],
    })
  })

  it('a non-record schema becomes a one-field struct { value }', () => {
    expect(avroToIcebergSchema(resolveAvroSchema('string'))).toEqual({
      'schema-id': 0,
      type: 'struct',
      fields: [{ id: 1, name: 'value', required: true, type: 'string' }],
    })
    expect(avroToIcebergSchema(resolveAvroSchema(['null', 'long'])).fields[0]).toMatchObject({ required: false, type: 'long' })
  })

  it('ignores a logical type on the wrong underlying type or with an invalid precision (Avro spec)', () => {
    expect(typeOf({ type: 'string', logicalType: 'date' })).toBe('string')
    expect(typeOf({ type: 'int', logicalType: 'timestamp-millis' })).toBe('int')
    expect(typeOf({ type: 'bytes', logicalType: 'decimal', precision: 39, scale: 0 })).toBe('binary')
    expect(typeOf({ type: 'fixed', name: 'Small', size: 2, logicalType: 'decimal', precision: 10 })).toBe('fixed[2]')
    expect(typeOf({ type: 'fixed', name: 'NotUuid', size: 8, logicalType: 'uuid' })).toBe('fixed[8]')
    expect(typeOf({ type: 'bytes', logicalType: 'decimal', precision: 5 })).toBe('decimal(5, 0)')
    expect(typeOf({ type: 'long', logicalType: 'something-custom' })).toBe('long')
  })

  it('resolves names by namespace, including short references inside the namespace', () => {
    const schema = {
      type: 'record',
      name: 'Outer',
      namespace: 'a.b',
      fields: [
        { name: 'first', type: { type: 'enum', name: 'Kind', symbols: ['X'] } },
        { name: 'second', type: 'Kind' },
        { name: 'third', type: 'a.b.Kind' },
        // a dotted name sets its own namespace ("c"), so the short name Kind no longer resolves there
        { name: 'other', type: { type: 'record', name: 'c.Other', fields: [{ name: 'k', type: ['null', 'a.b.Kind'] }] } },
      ],
    }
    expect(avroToIcebergType(resolveAvroSchema(schema))).toMatchObject({
      fields: [{ type: 'string' }, { type: 'string' }, { type: 'string' }, { type: { type: 'struct', fields: [{ name: 'k', type: 'string', required: false }] } }],
    })
    const shortInOtherNamespace = structuredClone(schema)
    shortInOtherNamespace.fields[3]!.type = { type: 'record', name: 'c.Other', fields: [{ name: 'k', type: ['null', 'Kind'] }] }
    expect(() => resolveAvroSchema(shortInOtherNamespace)).toThrow(/unknown type "Kind"/)
  })

  it('rejects recursive records with SchemaError', () => {
    const linked = { type: 'record', name: 'Node', fields: [{ name: 'next', type: ['null', 'Node'] }] }
    expect(() => resolveAvroSchema(linked)).toThrow(SchemaError)
    expect(() => resolveAvroSchema(linked)).toThrow(/Node is recursive/)
  })

  it('a union of only null is an optional string', () => {
    expect(avroToIcebergSchema(resolveAvroSchema({ type: 'record', name: 'R', fields: [{ name: 'n', type: 'null' }] })).fields[0]).toMatchObject({
      type: 'string',
      required: false,
    })
  })
})
