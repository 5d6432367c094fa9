import * as fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { daysFromCivil, fastIsoMicros, fastIsoMicrosBytes, isoToEpochDays, isoToEpochNanos, isZonedTimestampText } from '../../lib/schema/temporal.js'

const floorDiv = (a: bigint, b: bigint) => (a % b !== 0n && a < 0n ? a / b - 1n : a / b)

describe('ISO-8601 parsing', () => {
  it('daysFromCivil agrees with the JS calendar', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('1000-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true }), (d) => {
        expect(daysFromCivil(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate())).toBe(Math.floor(d.getTime() / 86_400_000))
      }),
    )
  })
  it('the fast path gives the same microseconds as the general parser, for any instant, fraction and offset', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('1000-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true }),
        fc.integer({ min: 0, max: 999_999_999 }),
        fc.integer({ min: 0, max: 9 }),
        fc.constantFrom('Z', '+00:00', '+05:30', '-08:00', '+14:00'),
        (d, nanos, digits, zone) => {
          const fraction = digits ? `.${String(nanos).padStart(9, '0').slice(0, digits)}` : ''
          const text = `${d.toISOString().slice(0, 19)}${fraction}${zone}`
          const fast = fastIsoMicros(text)
          const exact = floorDiv(isoToEpochNanos(text)!, 1000n)
          // Either the same value, or no fast answer at all: beyond 2^53 µs, or nanoseconds a µs value cannot hold.
          const subMicros = isoToEpochNanos(text)! % 1000n !== 0n
          expect(fast === undefined ? exact > 2n ** 53n || exact < -(2n ** 53n) || subMicros : !subMicros && BigInt(fast) === exact).toBe(true)
        },
      ),
    )
  })
  it('the byte reader gives what the text reader gives, for dates as JSON writes them and any near miss of that form', () => {
    const date = fc.date({ min: new Date('1600-01-01T00:00:00Z'), max: new Date('2400-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString())
    // One character of the text replaced or removed: digits, separators, the zone, the length.
    const edit = fc.tuple(date, fc.nat(), fc.constantFrom('', '0', '9', '.', 'Z', 'z', ' ', ':', '-', '+', 'T', '/', '\u00e9'), fc.boolean())
    const text = fc.oneof(date, date.map((t) => t.replace(/\.\d{3}Z$/, 'Z')), edit.map(([t, at, c, remove]) => (remove ? t.slice(0, at % t.length) + t.slice((at % t.length) + 1) : t.slice(0, at % t.length) + c + t.slice((at % t.length) + 1))))
    fc.assert(
      fc.property(text, fc.nat({ max: 3 }), (t, pad) => {
        const bytes = Buffer.from(`${'x'.repeat(pad)}${t}"`)
        expect(fastIsoMicrosBytes(bytes, pad, bytes.length - 1)).toBe(fastIsoMicros(t))
      }),
      { numRuns: 20_000 },
    )
    for (const t of ['2024-02-29T10:00:00.123Z', '2023-02-29T10:00:00.123Z', '2024-01-01T00:00:00Z', '2024-13-01T00:00:00.000Z', '2024-01-01T00:00:60.000Z', '1000-01-01T00:00:00.000Z']) {
      const bytes = Buffer.from(t)
      expect([t, fastIsoMicrosBytes(bytes, 0, bytes.length)]).toEqual([t, fastIsoMicros(t)])
    }
  })
  it('the byte reader reads texts of one day in a row as the text reader does (it keeps the last day it read)', () => {
    const day = ['2024-03-01T10:00:00.000Z', '2024-03-01T23:59:59.999Z', '2024-03-01T24:00:00.000Z', '2024-03-01T10:60:00.000Z', '2024-03-01T10:00:00.0x0Z', '2024-03-01T10:00:00Z']
    const other = ['2024-02-29T01:02:03.004Z', '2023-02-29T01:02:03.004Z', '2023-02-28T01:02:03.004Z', '2024-03-0xT10:00:00.000Z', '2024-03-01T10:00:00.000Z']
    for (const t of [...day, ...other, ...day.toReversed()]) {
      const bytes = Buffer.from(t)
      expect([t, fastIsoMicrosBytes(bytes, 0, bytes.length)]).toEqual([t, fastIsoMicros(t)])
    }
  })
  it('rejects impossible dates and times on both paths', () => {
    for (const text of ['2023-02-29T00:00:00Z', '2024-04-31T00:00:00Z', '2024-01-01T24:00:00Z', '2024-01-01T00:60:00Z', '2024-01-01T00:00:00+19:00']) {
      expect([text, fastIsoMicros(text), isoToEpochNanos(text)]).toEqual([text, undefined, undefined])
    }
    expect(isoToEpochNanos('2024-02-29T00:00:00Z')).toBe(1709164800000000000n)
  })
  it('years before 100 are not shifted into the 1900s', () => {
    const jsDate = new Date(0)
    jsDate.setUTCFullYear(50, 0, 1)
    expect(isoToEpochDays('0050-01-01')).toBe(jsDate.getTime() / 86_400_000)
  })
  it('only date-times with a zone count as zoned timestamps', () => {
    expect(isZonedTimestampText('2024-05-01T10:00:00Z')).toBe(true)
    expect(isZonedTimestampText('2024-05-01 10:00:00.5+02:00')).toBe(true)
    expect(isZonedTimestampText('2024-05-01T10:00:00')).toBe(false)
    expect(isZonedTimestampText('2024-05-01')).toBe(false)
  })
})
