import { describe, expect, it } from 'vitest'
import { createEnvelopeDecoder } from '../../lib/codec/connect.js'
import { coerceRecord } from '../../lib/writer/columnar/index.js'

/** Kafka Connect JsonConverter output (schemas.enable=true) covering every Connect type and logical type. */
const envelope = `{
  "schema": {
    "type": "struct", "name": "com.example.Order", "optional": false,
    "fields": [
      {"field": "id", "type": "int64", "optional": false},
      {"field": "i8", "type": "int8", "optional": false},
      {"field": "i16", "type": "int16", "optional": false},
      {"field": "i32", "type": "int32", "optional": false},
      {"field": "f32", "type": "float", "optional": false},
      {"field": "f64", "type": "double", "optional": false},
      {"field": "flag", "type": "boolean", "optional": false},
      {"field": "note", "type": "string", "optional": true, "doc": "free text"},
      {"field": "blob", "type": "bytes", "optional": false},
      {"field": "price", "type": "bytes", "optional": false, "name": "org.apache.kafka.connect.data.Decimal", "version": 1,
       "parameters": {"scale": "2", "connect.decimal.precision": "10"}},
      {"field": "priceNum", "type": "bytes", "optional": false, "name": "org.apache.kafka.connect.data.Decimal",
       "parameters": {"scale": "2"}},
      {"field": "day", "type": "int32", "optional": false, "name": "org.apache.kafka.connect.data.Date", "version": 1},
      {"field": "t", "type": "int32", "optional": false, "name": "org.apache.kafka.connect.data.Time", "version": 1},
      {"field": "ts", "type": "int64", "optional": false, "name": "org.apache.kafka.connect.data.Timestamp", "version": 1},
      {"field": "tags", "type": "array", "optional": false, "items": {"type": "string", "optional": false}},
      {"field": "attrs", "type": "map", "optional": false, "keys": {"type": "string", "optional": false}, "values": {"type": "int32", "optional": true}},
      {"field": "pairs", "type": "map", "optional": false, "keys": {"type": "int32", "optional": false}, "values": {"type": "string", "optional": false}},
      {"field": "inner", "type": "struct", "optional": true, "fields": [{"field": "x", "type": "int32", "optional": false}]},
      {"field": "withDefault", "type": "int32", "optional": false, "default": 7}
    ]
  },
  "payload": {
    "id": 9007199254740993, "i8": -8, "i16": 300, "i32": 70000, "f32": 1.5, "f64": -0.1, "flag": true,
    "note": null, "blob": "AAEC/w==", "price": "MDk=", "priceNum": 12.5, "day": 19844, "t": 45296789,
    "ts": 1714567890123, "tags": ["a", "b"], "attrs": {"k": 1, "n": null}, "pairs": [[1, "one"], [2, "two"]],
    "inner": {"x": 3}
  }
}`

const decode = createEnvelopeDecoder()

describe('json-schema-envelope (Kafka Connect JsonConverter)', () => {
  it('maps the Connect schema to Iceberg types', () => {
    const out = decode(envelope)
    if (!out.ok) throw new Error(out.reason)
    const types = Object.fromEntries(out.schema.fields.map((f) => [f.name, [f.type, f.required]]))
    expect(types).toEqual({
      id: ['long', true],
      i8: ['int', true],
      i16: ['int', true],
      i32: ['int', true],
      f32: ['float', true],
      f64: ['double', true],
      flag: ['boolean', true],
      note: ['string', false],
      blob: ['binary', true],
      price: ['decimal(10, 2)', true],
      priceNum: ['decimal(38, 2)', true],
      day: ['date', true],
      t: ['time', true],
      ts: ['timestamptz', true],
      tags: [{ type: 'list', 'element-id': 20, element: 'string', 'element-required': true }, true],
      attrs: [{ type: 'map', 'key-id': 21, key: 'string', 'value-id': 22, value: 'int', 'value-required': false }, true],
      pairs: [{ type: 'map', 'key-id': 23, key: 'int', 'value-id': 24, value: 'string', 'value-required': true }, true],
      inner: [{ type: 'struct', fields: [{ id: 25, name: 'x', required: true, type: 'int' }] }, false],
      withDefault: ['int', true],
    })
    expect(out.schema.fields.find((f) => f.name === 'note')?.doc).toBe('free text')
  })

  it('converts the payload exactly: int64 past 2^53, decimals, dates, times, timestamps, bytes, maps', () => {
    const out = decode(envelope)
    expect(out).toMatchObject({
      ok: true,
      wrapped: false,
      value: {
        id: 9007199254740993n,
        i8: -8,
        i16: 300,
        i32: 70000,
        f32: 1.5,
        f64: -0.1,
        flag: true,
        note: null,
        blob: Uint8Array.from([0, 1, 2, 255]),
        price: '123.45',
        priceNum: '12.50',
        day: '2024-05-01',
        t: '12:34:56.789000',
        ts: '2024-05-01T12:51:30.123000Z',
        tags: ['a', 'b'],
        attrs: { k: 1, n: null },
        pairs: new Map([
          [1, 'one'],
          [2, 'two'],
        ]),
        inner: { x: 3 },
        withDefault: 7,
      },
    })
  })

  it("the converted values pass the writer's coercion", () => {
    const out = decode(envelope)
    if (!out.ok) throw new Error(out.reason)
    const { row } = coerceRecord(out.schema, out.value)
    expect(row).toMatchObject({ id: 9007199254740993n, price: 12345n, priceNum: 1250n, day: 19844, t: 45_296_789_000n, ts: 1_714_567_890_123_000n })
  })

  it('a non-struct schema is wrapped as { value }', () => {
    expect(decode('{"schema":{"type":"string","optional":false},"payload":"hi"}')).toMatchObject({
      ok: true,
      wrapped: true,
      value: { value: 'hi' },
      schema: { fields: [{ id: 1, name: 'value', required: true, type: 'string' }] },
    })
  })

  it.each([
    ['invalid JSON', '{"schema":', /^invalid JSON/],
    ['no envelope', '{"id": 1}', /not a Kafka Connect envelope/],
    ['a value of the wrong type', '{"schema":{"type":"struct","fields":[{"field":"n","type":"int32"}]},"payload":{"n":"x"}}', /\$\.n: expected int32, got string "x"/],
    ['a missing required field', '{"schema":{"type":"struct","fields":[{"field":"n","type":"int32","optional":false}]},"payload":{}}', /\$\.n: required int32 is missing/],
    ['an int32 out of range of JS integers', '{"schema":{"type":"int32"},"payload":1.5}', /expected int32, got number 1.5/],
    ['an unknown Connect type', '{"schema":{"type":"int128"},"payload":1}', /unknown Connect schema type "int128"/],
    ['a decimal with more digits than its scale', '{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"1"}},"payload":1.25}', /more than 1 fractional digits/],
  ])('%s is a failure with its reason', (_, text, reason) => {
    const out = decode(text)
    expect(out.ok).toBe(false)
    expect(!out.ok && out.reason).toMatch(reason)
  })

  it('a null payload is a tombstone', () => {
    expect(decode('{"schema":{"type":"string"},"payload":null}')).toEqual({ ok: false, reason: 'payload is null (tombstone)', tombstone: true })
  })
})
