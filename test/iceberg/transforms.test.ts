import { describe, expect, it } from 'vitest'
import { IcebergError } from '../../lib/errors.js'
import { applyTransform, civilFromDays, hashValue, murmur3x86, parseTransform, transformResultType } from '../../lib/iceberg/transforms.js'

const days = (iso: string) => Date.parse(`${iso}T00:00:00Z`) / 86_400_000
const micros = (iso: string) => BigInt(Date.parse(iso)) * 1000n
const bytes = (...b: number[]) => Uint8Array.from(b)

describe('32-bit Murmur3 hash (spec Appendix B test values)', () => {
  it('matches the reference x86_32 implementation on known vectors', () => {
    // SMHasher's MurmurHash3_x86_32 with seed 0: "" → 0, and 0xffffffff → 0x76293b50.
    expect(murmur3x86(new Uint8Array(0))).toBe(0)
    expect(murmur3x86(bytes(0xff, 0xff, 0xff, 0xff)) >>> 0).toBe(1982413648)
    expect(murmur3x86(bytes(0x21, 0x43, 0x65, 0x87)) >>> 0).toBe(4116402539)
  })

  // Copied from the spec's Appendix B table (format/spec.md, apache/iceberg).
  const spec: [string, unknown, number][] = [
    ['int', 34, 2017239379],
    ['long', 34n, 2017239379],
    ['decimal(4, 2)', 1420n, -500754589], // 14.20
    ['date', days('2017-11-16'), -653330422],
    ['time', (22n * 3600n + 31n * 60n + 8n) * 1_000_000n, -662762989], // 22:31:08
    ['timestamp', micros('2017-11-16T22:31:08Z'), -2047944441],
    ['timestamp', micros('2017-11-16T22:31:08Z') + 1n, -1207196810], // .000001
    ['timestamptz', micros('2017-11-16T14:31:08-08:00'), -2047944441],
    ['timestamptz', micros('2017-11-16T14:31:08-08:00') + 1n, -1207196810],
    ['timestamp_ns', micros('2017-11-16T22:31:08Z') * 1000n, -2047944441],
    ['timestamp_ns', micros('2017-11-16T22:31:08Z') * 1000n + 1001n, -1207196810], // .000001001
    ['timestamptz_ns', micros('2017-11-16T14:31:08-08:00') * 1000n + 1001n, -1207196810],
    ['string', 'iceberg', 1210000089],
    ['uuid', 'f79c3e09-677c-4bbd-a479-3f349cb785e7', 1488055340],
    ['uuid', bytes(0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd, 0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7), 1488055340],
    ['fixed[4]', bytes(0, 1, 2, 3), -188683207],
    ['binary', bytes(0, 1, 2, 3), -188683207],
  ]

  it.each(spec)('%s %s hashes to %d', (type, value, expected) => {
    expect(hashValue(type, value)).toBe(expected)
  })

  it('hashes "34" differently from 34 (why int cannot be promoted to string under bucket)', () => {
    expect(hashValue('string', '34')).toBe(-427558391)
  })

  it('refuses to hash types the spec does not bucket', () => {
    expect(() => hashValue('double', 1)).toThrow(/type double cannot be bucketed/)
  })
})

describe('bucket[N]', () => {
  it('is the hash with the sign bit dropped, mod N', () => {
    expect(applyTransform('bucket[100]', 'int', 34)).toBe(2017239379 % 100)
    // negative hash: -500754589 & 0x7fffffff = 1646729059
    expect(applyTransform('bucket[16]', 'decimal(4, 2)', 1420n)).toBe(1646729059 % 16)
    expect(applyTransform('bucket[16]', 'long', 34)).toBe(applyTransform('bucket[16]', 'int', 34))
  })

  it('maps null to null', () => {
    expect(applyTransform('bucket[16]', 'string', null)).toBeNull()
  })
})

describe('truncate[W] (spec examples)', () => {
  it('ints and longs round toward negative infinity', () => {
    expect(applyTransform('truncate[10]', 'int', 1)).toBe(0)
    expect(applyTransform('truncate[10]', 'int', -1)).toBe(-10)
    expect(applyTransform('truncate[10]', 'int', 10)).toBe(10)
    expect(applyTransform('truncate[10]', 'long', 1n)).toBe(0n)
    expect(applyTransform('truncate[10]', 'long', -1n)).toBe(-10n)
  })

  it('decimals truncate the unscaled value: 10.65 with W=50, scale 2 → 10.50', () => {
    expect(applyTransform('truncate[50]', 'decimal(9, 2)', 1065n)).toBe(1050n)
    expect(applyTransform('truncate[50]', 'decimal(9, 2)', -1065n)).toBe(-1100n)
  })

  it('strings keep the first W code points; binary the first W bytes', () => {
    expect(applyTransform('truncate[3]', 'string', 'iceberg')).toBe('ice')
    expect(applyTransform('truncate[3]', 'string', 'ic')).toBe('ic')
    expect(applyTransform('truncate[2]', 'string', '😀😀😀')).toBe('😀😀')
    expect(applyTransform('truncate[3]', 'binary', bytes(1, 2, 3, 4, 5))).toEqual(bytes(1, 2, 3))
  })
})

describe('year, month, day, hour', () => {
  const ts = micros('2024-05-01T13:45:00Z')

  it('count whole units from 1970-01-01 for timestamps and dates', () => {
    expect(applyTransform('year', 'timestamp', ts)).toBe(54)
    expect(applyTransform('month', 'timestamptz', ts)).toBe(54 * 12 + 4)
    expect(applyTransform('day', 'timestamp', ts)).toBe(days('2024-05-01'))
    expect(applyTransform('hour', 'timestamptz', ts)).toBe(days('2024-05-01') * 24 + 13)
    expect(applyTransform('year', 'date', days('2024-05-01'))).toBe(54)
    expect(applyTransform('month', 'date', days('2024-05-01'))).toBe(652)
    expect(applyTransform('day', 'date', days('2024-05-01'))).toBe(days('2024-05-01'))
    expect(applyTransform('day', 'timestamp_ns', ts * 1000n + 999n)).toBe(days('2024-05-01'))
  })

  it('floor before the epoch (one microsecond before 1970 is day -1, hour -1, month -1, year -1)', () => {
    expect(applyTransform('day', 'timestamp', -1n)).toBe(-1)
    expect(applyTransform('hour', 'timestamp', -1n)).toBe(-1)
    expect(applyTransform('month', 'timestamp', -1n)).toBe(-1)
    expect(applyTransform('year', 'timestamp', -1n)).toBe(-1)
    expect(applyTransform('year', 'date', -1)).toBe(-1)
    expect(applyTransform('month', 'date', days('1969-01-31'))).toBe(-12)
    expect(applyTransform('hour', 'timestamp_ns', -1n)).toBe(-1)
  })

  it('civilFromDays is the proleptic Gregorian calendar', () => {
    expect(civilFromDays(0)).toEqual([1970, 1, 1])
    expect(civilFromDays(-1)).toEqual([1969, 12, 31])
    expect(civilFromDays(days('2000-02-29'))).toEqual([2000, 2, 29])
  })
})

describe('identity and void', () => {
  it('identity keeps the value (uuid as its 16 bytes, longs as bigint)', () => {
    expect(applyTransform('identity', 'string', 'DE')).toBe('DE')
    expect(applyTransform('identity', 'long', 5)).toBe(5n)
    expect(applyTransform('identity', 'uuid', 'f79c3e09-677c-4bbd-a479-3f349cb785e7')).toEqual(
      bytes(0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd, 0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7),
    )
  })

  it('void always gives null', () => {
    expect(applyTransform('void', 'string', 'x')).toBeNull()
  })
})

describe('result types and errors', () => {
  it('result types follow the spec table', () => {
    expect(transformResultType('identity', 'string')).toBe('string')
    expect(transformResultType('bucket[4]', 'string')).toBe('int')
    expect(transformResultType('truncate[4]', 'decimal(9, 2)')).toBe('decimal(9, 2)')
    expect(transformResultType('day', 'timestamptz')).toBe('date')
    expect(transformResultType('hour', 'timestamp')).toBe('int')
    expect(transformResultType('month', 'date')).toBe('int')
    expect(transformResultType('void', 'long')).toBe('long')
  })

  it('rejects unknown transforms and transforms that do not fit the source type', () => {
    expect(() => parseTransform('bucket[0]')).toThrow(/unknown partition transform 'bucket\[0\]'/)
    expect(() => parseTransform('days')).toThrow(IcebergError)
    expect(() => transformResultType('hour', 'date')).toThrow(/hour cannot be applied to type date/)
    expect(() => applyTransform('truncate[2]', 'double', 1.5)).toThrow(/truncate\[2\] cannot be applied to type double/)
  })

  it('names the transform, type and value when the value has the wrong representation', () => {
    expect(() => applyTransform('day', 'timestamp', '2024-05-01')).toThrow(/partition transform day: timestamp value expected a bigint, got string "2024-05-01"/)
  })
})
