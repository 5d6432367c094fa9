import { describe, expect, it } from 'vitest'
import { compileAvro, decodeAvro } from '../../lib/codec/avro.js'
import { MAX_EMPTY_ITEMS } from '../../lib/codec/avro-guard.js'
import { RecordError } from '../../lib/errors.js'
import { avroEncode } from './avro-fixtures.js'

/** Avro's zig-zag varint of a long. */
function varint(n: bigint): number[] {
  let z = n >= 0n ? n << 1n : ((-n) << 1n) - 1n
  const out: number[] = []
  while (z >= 0x80n) {
    out.push(Number((z & 0x7fn) | 0x80n))
    z >>= 7n
  }
  out.push(Number(z))
  return out
}

describe('Avro decoding with avsc', () => {
  it('longs are exact over the whole int64 range, including logical-typed longs', () => {
    const schema = {
      type: 'record',
      name: 'L',
      fields: [
        { name: 'min', type: 'long' },
        { name: 'max', type: 'long' },
        { name: 'nanos', type: { type: 'long', logicalType: 'timestamp-nanos' } },
      ],
    }
    const c = compileAvro(JSON.stringify(schema))
    const datum = { min: -(2n ** 63n), max: 2n ** 63n - 1n, nanos: 2n ** 63n - 1n }
    expect(decodeAvro(c, avroEncode(schema, datum))).toEqual({ min: -(2n ** 63n), max: 2n ** 63n - 1n, nanos: '2262-04-11T23:47:16.854775807Z' })
  })

  it.each([
    ['an array', { type: 'array', items: 'int' }],
    ['a map', { type: 'map', values: 'string' }],
  ])('%s whose block claims a billion items in 6 bytes is refused before allocating (no poison pill)', (_, schema) => {
    const c = compileAvro(JSON.stringify(schema))
    const bytes = Uint8Array.from(varint(1_000_000_000n))
    expect(() => decodeAvro(c, bytes)).toThrow(RecordError)
    expect(() => decodeAvro(c, bytes)).toThrow(/block claims 1000000000 items but only 0 bytes are left/)
  })

  it('zero-byte items (nulls) are capped, real ones still decode', () => {
    const c = compileAvro(JSON.stringify({ type: 'array', items: 'null' }))
    expect(decodeAvro(c, Uint8Array.from([...varint(3n), 0]))).toEqual([null, null, null])
    expect(() => decodeAvro(c, Uint8Array.from([...varint(BigInt(MAX_EMPTY_ITEMS) + 1n), 0]))).toThrow(/block claims/)
  })

  it('a bad union index or enum symbol is a RecordError', () => {
    const c = compileAvro(JSON.stringify({ type: 'record', name: 'U', fields: [{ name: 'u', type: ['null', 'int'] }, { name: 'e', type: { type: 'enum', name: 'E', symbols: ['A'] } }] }))
    expect(() => decodeAvro(c, Uint8Array.from([...varint(5n), ...varint(0n)]))).toThrow(RecordError)
    expect(() => decodeAvro(c, Uint8Array.from([...varint(0n), ...varint(3n)]))).toThrow(RecordError)
  })

  it('an invalid schema is a SchemaError naming the problem', () => {
    expect(() => compileAvro('{"type": "record", "name": "R"}')).toThrow(/Avro record R has no fields array/)
    expect(() => compileAvro('not json')).toThrow(/invalid Avro schema/)
  })
})
