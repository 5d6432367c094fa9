import { describe, expect, it } from 'vitest'
import { normalizeTableId, normalizeTableName, parseTableId, sanitizeName, tableName, validateTableId } from '../../lib/catalog/index.js'
import { IcebergError } from '../../lib/errors.js'

describe('parseTableId (a name as written)', () => {
  it('splits at the last dot like Iceberg Java: the namespace keeps its dots', () => {
    expect(parseTableId('db.events')).toEqual({ namespace: 'db', name: 'events' })
    expect(parseTableId('a.b.events')).toEqual({ namespace: 'a.b', name: 'events' })
  })

  it('takes the default namespace for a bare name, and refuses one without a default', () => {
    expect(parseTableId('events', 'default')).toEqual({ namespace: 'default', name: 'events' })
    expect(() => parseTableId('events')).toThrow(/table 'events' has no namespace/)
  })

  it('keeps case and characters (a table another engine created is found by its own name)', () => {
    expect(parseTableId('Sales.Page-Views')).toEqual({ namespace: 'Sales', name: 'Page-Views' })
  })

  it('refuses an empty namespace level or name, naming the value', () => {
    expect(() => parseTableId('.events')).toThrow(IcebergError)
    expect(() => parseTableId('a..events')).toThrow(/namespace 'a.' must be non-empty with no empty levels/)
    expect(() => parseTableId('db.')).toThrow(/table name '' in namespace 'db' must be non-empty/)
    expect(() => parseTableId('', 'default')).toThrow(/table name '' in namespace 'default'/)
    expect(() => parseTableId('events', 'a..b')).toThrow(/namespace 'a..b'/)
  })

  it('validates ids built elsewhere by the same rule: no dot in the name', () => {
    expect(() => validateTableId({ namespace: 'db', name: 'a.b' })).toThrow(/contain no dot/)
    expect(validateTableId({ namespace: 'a.b', name: 'c' })).toEqual({ namespace: 'a.b', name: 'c' })
  })
})

describe('normalizeTableId (names Floe creates)', () => {
  it('lowercases and turns each run of characters outside [a-z0-9_] into one underscore', () => {
    expect(sanitizeName('Orders-EU v2')).toBe('orders_eu_v2')
    expect(sanitizeName('---')).toBe('')
    expect(normalizeTableName('Analytics.Page-Views', 'default')).toBe('analytics.page_views')
  })

  it('takes the namespace before the last dot (dots kept, each level sanitised), else the default namespace', () => {
    expect(normalizeTableId('A-1.B.Events', 'raw')).toEqual({ namespace: 'a_1.b', name: 'events' })
    expect(normalizeTableName('a.b.c', 'raw')).toBe('a.b.c')
    expect(normalizeTableName('events', 'raw')).toBe('raw.events')
    expect(normalizeTableName('events', 'Raw.Zone')).toBe('raw.zone.events')
  })

  it('refuses a part with no letter or digit left, naming the name', () => {
    expect(() => normalizeTableName('db.!!!', 'raw')).toThrow(/table name "db.!!!" has an empty part after sanitising/)
    expect(() => normalizeTableName('..events', 'raw')).toThrow(IcebergError)
    expect(() => normalizeTableName('events', '--')).toThrow(/empty part/)
  })

  it('gives names that parse back to the same id and format to the same text', () => {
    for (const raw of ['Orders-EU.v2', 'a.B.c', 'events', 'X.y']) {
      const id = normalizeTableId(raw, 'Raw')
      expect(parseTableId(tableName(id))).toEqual(id)
      expect(tableName(parseTableId(normalizeTableName(raw, 'Raw')))).toBe(normalizeTableName(raw, 'Raw'))
    }
  })
})
