import { describe, expect, it } from 'vitest'
import { fromBoundBytes } from '../../lib/iceberg/conversions.js'
import {
  boundsFor,
  metricsModeFor,
  parseMetricsMode,
  truncateLowerBinary,
  truncateLowerString,
  truncateUpperBinary,
  truncateUpperString,
} from '../../lib/iceberg/metrics.js'

const hex = (b: Uint8Array | undefined) => (b === undefined ? undefined : Array.from(b, (x) => x.toString(16).padStart(2, '0')).join(' '))
const bytes = (h: string) => Uint8Array.from(h.split(' ').filter(Boolean).map((x) => parseInt(x, 16)))

describe('bound truncation', () => {
  it('truncates a lower string bound to N code points, never splitting a surrogate pair', () => {
    expect(truncateLowerString('iceberg', 3)).toBe('ice')
    expect(truncateLowerString('ice', 3)).toBe('ice')
    expect(truncateLowerString('😀😀😀', 2)).toBe('😀😀')
  })

  it('an upper string bound increments the last code point', () => {
    expect(truncateUpperString('iceberg', 3)).toBe('icf')
    expect(truncateUpperString('ice', 3)).toBe('ice') // short enough: unchanged
    expect(truncateUpperString('a\u{10FFFF}bc', 2)).toBe('b') // last one cannot grow: carry left
    expect(truncateUpperString('a\uD7FFz', 2)).toBe('a\uE000') // skips the surrogate range
    expect(truncateUpperString('😀😀😀', 2)).toBe('😀😁')
    expect(truncateUpperString('\u{10FFFF}\u{10FFFF}x', 2)).toBeNull()
  })

  it('binary bounds truncate by bytes; the upper one increments the last byte below 0xff', () => {
    expect(hex(truncateLowerBinary(bytes('01 02 03 04 05'), 3))).toBe('01 02 03')
    expect(hex(truncateUpperBinary(bytes('01 02 03 04 05'), 3) ?? undefined)).toBe('01 02 04')
    expect(hex(truncateUpperBinary(bytes('01 ff ff 00'), 3) ?? undefined)).toBe('02')
    expect(truncateUpperBinary(bytes('ff ff ff 00'), 3)).toBeNull()
    expect(hex(truncateUpperBinary(bytes('01 02'), 3) ?? undefined)).toBe('01 02')
  })

  it('boundsFor applies the mode: truncate(16) shortens strings, full keeps them, counts stores none', () => {
    const long = 'abcdefghijklmnopqrstuvwxyz'
    const t16 = boundsFor('string', { kind: 'truncate', length: 16 }, long, long)
    expect(fromBoundBytes('string', t16.lower!)).toBe('abcdefghijklmnop')
    expect(fromBoundBytes('string', t16.upper!)).toBe('abcdefghijklmnoq')
    const full = boundsFor('string', { kind: 'full' }, long, long)
    expect(fromBoundBytes('string', full.upper!)).toBe(long)
    expect(boundsFor('string', { kind: 'counts' }, long, long)).toEqual({})
    expect(boundsFor('int', { kind: 'none' }, 1, 2)).toEqual({})
    const ints = boundsFor('int', { kind: 'truncate', length: 1 }, 1, 300)
    expect(fromBoundBytes('int', ints.upper!)).toBe(300) // non-string types are never truncated
    const noUpper = boundsFor('string', { kind: 'truncate', length: 1 }, 'a', '\u{10FFFF}\u{10FFFF}')
    expect(noUpper.upper).toBeUndefined()
  })
})

describe('metrics modes from table properties', () => {
  it('defaults to truncate(16)', () => {
    expect(metricsModeFor({}, 'name')).toEqual({ kind: 'truncate', length: 16 })
  })

  it('honours write.metadata.metrics.default and per-column overrides by full column name', () => {
    const props = {
      'write.metadata.metrics.default': 'counts',
      'write.metadata.metrics.column.payload.id': 'full',
      'write.metadata.metrics.column.note': 'TRUNCATE(4)',
      'write.metadata.metrics.column.blob': 'none',
    }
    expect(metricsModeFor(props, 'other')).toEqual({ kind: 'counts' })
    expect(metricsModeFor(props, 'payload.id')).toEqual({ kind: 'full' })
    expect(metricsModeFor(props, 'note')).toEqual({ kind: 'truncate', length: 4 })
    expect(metricsModeFor(props, 'blob')).toEqual({ kind: 'none' })
  })

  it('an invalid mode falls back to the default, as Iceberg Java does', () => {
    expect(metricsModeFor({ 'write.metadata.metrics.default': 'truncate(0)' }, 'x')).toEqual({ kind: 'truncate', length: 16 })
    expect(metricsModeFor({ 'write.metadata.metrics.default': 'full', 'write.metadata.metrics.column.x': 'bogus' }, 'x')).toEqual({ kind: 'full' })
  })

  it('parseMetricsMode names the bad value', () => {
    expect(() => parseMetricsMode('sometimes')).toThrow(/invalid metrics mode 'sometimes'/)
  })
})
