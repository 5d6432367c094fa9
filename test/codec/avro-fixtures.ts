/**
 * Avro schemas and payloads shared by the codec tests, produced with avsc (bigint longs, wrapped
 * unions: the same setup a Java producer's output decodes to).
 */
import { avscType } from '../../lib/codec/avro.js'

/** Every primitive, every logical type Floe maps, named-type reuse, unions, enums, arrays, maps. */
export const everythingSchema = {
  type: 'record',
  name: 'Everything',
  namespace: 'com.example',
  fields: [
    { name: 'b', type: 'boolean' },
    { name: 'i', type: 'int' },
    { name: 'l', type: 'long' },
    { name: 'f', type: 'float' },
    { name: 'd', type: 'double' },
    { name: 's', type: 'string', doc: 'a string' },
    { name: 'raw', type: 'bytes' },
    { name: 'dec', type: { type: 'bytes', logicalType: 'decimal', precision: 10, scale: 2 } },
    { name: 'decFixed', type: { type: 'fixed', name: 'Dec16', size: 16, logicalType: 'decimal', precision: 38, scale: 9 } },
    { name: 'day', type: { type: 'int', logicalType: 'date' } },
    { name: 'tMillis', type: { type: 'int', logicalType: 'time-millis' } },
    { name: 'tMicros', type: { type: 'long', logicalType: 'time-micros' } },
    { name: 'tsMillis', type: { type: 'long', logicalType: 'timestamp-millis' } },
    { name: 'tsMicros', type: { type: 'long', logicalType: 'timestamp-micros' } },
    { name: 'tsNanos', type: { type: 'long', logicalType: 'timestamp-nanos' } },
    { name: 'localMillis', type: { type: 'long', logicalType: 'local-timestamp-millis' } },
    { name: 'localMicros', type: { type: 'long', logicalType: 'local-timestamp-micros' } },
    { name: 'id', type: { type: 'string', logicalType: 'uuid' } },
    { name: 'idFixed', type: { type: 'fixed', name: 'Uuid16', size: 16, logicalType: 'uuid' } },
    { name: 'hash', type: { type: 'fixed', name: 'Md5', size: 16 } },
    { name: 'color', type: { type: 'enum', name: 'Color', symbols: ['RED', 'GREEN'] } },
    { name: 'opt', type: ['null', 'string'], default: null },
    { name: 'choice', type: ['null', 'int', 'string'] },
    { name: 'tags', type: { type: 'array', items: 'string' } },
    { name: 'attrs', type: { type: 'map', values: ['null', 'long'] } },
    {
      name: 'inner',
      type: { type: 'record', name: 'Inner', fields: [{ name: 'x', type: 'int' }, { name: 'when', type: ['null', { type: 'long', logicalType: 'timestamp-millis' }] }] },
    },
    { name: 'again', type: 'Inner' },
  ],
}

const UUID = '123e4567-e89b-12d3-a456-426614174000'

/** One datum of everythingSchema in avsc's raw form (underlying types, wrapped unions). */
export const everythingDatum = {
  b: true,
  i: -42,
  l: 9007199254740993n, // 2^53 + 1: not representable as a JS number
  f: 1.5,
  d: -0.25,
  s: 'héllo',
  raw: Buffer.from([0, 1, 2, 255]),
  dec: Buffer.from([0xff, 0x85]), // -123 unscaled, scale 2 → -1.23
  decFixed: Buffer.from('00000000000000000de0b6b3a7640001', 'hex'), // 10^18 + 1 unscaled, scale 9
  day: 19_844, // 2024-05-01
  tMillis: 45_296_789, // 12:34:56.789
  tMicros: 45_296_789_012n, // 12:34:56.789012
  tsMillis: 1_714_567_890_123n, // 2024-05-01T12:51:30.123Z
  tsMicros: 1_714_567_890_123_456n,
  tsNanos: 1_714_567_890_123_456_789n,
  localMillis: 1_714_567_890_123n,
  localMicros: -1n, // one microsecond before the epoch
  id: UUID,
  idFixed: Buffer.from(UUID.replace(/-/g, ''), 'hex'),
  hash: Buffer.alloc(16, 7),
  color: 'GREEN',
  opt: null,
  choice: { string: 'two' },
  tags: ['a', 'b'],
  attrs: { k1: { long: -9223372036854775808n }, k2: null },
  inner: { x: 1, when: { long: 0n } },
  again: { x: 2, when: null },
}

/** The decoded value Floe must produce for everythingDatum (the shape documented in lib/codec/index.ts). */
export const everythingDecoded = {
  b: true,
  i: -42,
  l: 9007199254740993n,
  f: 1.5,
  d: -0.25,
  s: 'héllo',
  raw: new Uint8Array([0, 1, 2, 255]),
  dec: '-1.23',
  decFixed: '1000000000.000000001',
  day: '2024-05-01',
  tMillis: '12:34:56.789000',
  tMicros: '12:34:56.789012',
  tsMillis: '2024-05-01T12:51:30.123000Z',
  tsMicros: '2024-05-01T12:51:30.123456Z',
  tsNanos: '2024-05-01T12:51:30.123456789Z',
  localMillis: '2024-05-01T12:51:30.123000',
  localMicros: '1969-12-31T23:59:59.999999',
  id: UUID,
  idFixed: UUID,
  hash: new Uint8Array(16).fill(7),
  color: 'GREEN',
  opt: null,
  choice: { tag: 1, field0: null, field1: 'two' },
  tags: ['a', 'b'],
  attrs: { k1: -9223372036854775808n, k2: null },
  inner: { x: 1, when: '1970-01-01T00:00:00.000000Z' },
  again: { x: 2, when: null },
}

/** Encode a datum with avsc (a producer's serializer). */
export function avroEncode(schema: unknown, datum: unknown): Uint8Array {
  return new Uint8Array(avscType(schema).toBuffer(datum))
}

export const userV1 = {
  type: 'record',
  name: 'User',
  namespace: 'com.example',
  fields: [
    { name: 'id', type: 'long' },
    { name: 'name', type: 'string' },
  ],
}

/** v1 plus an optional field: a compatible evolution. */
export const userV2 = {
  ...userV1,
  fields: [...userV1.fields, { name: 'email', type: ['null', 'string'], default: null }],
}
