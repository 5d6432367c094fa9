import { describe, expect, it } from 'vitest'
import { RoutesSchema } from '../../lib/config.js'
import { compileRoutes, normalizeTableName, sanitizeName } from '../../lib/writer/routing.js'

const router = (routes: unknown) => compileRoutes(RoutesSchema.parse(routes))

describe('table names', () => {
  it('are lowercased, with each run of other characters turned into one underscore', () => {
    expect(sanitizeName('Orders-EU v2')).toBe('orders_eu_v2')
    expect(sanitizeName('---')).toBe('')
  })
  it('take the namespace before the last dot, else the default namespace', () => {
    expect(normalizeTableName('Analytics.Page-Views', 'default')).toBe('analytics.page_views')
    expect(normalizeTableName('events', 'raw')).toBe('raw.events')
    expect(normalizeTableName('a.b.c', 'raw')).toBe('a.b.c')
    expect(() => normalizeTableName('db.!!!', 'raw')).toThrow(/empty part/)
  })
})

describe('compileRoutes', () => {
  it('puts every record of a topic in a static table, with {topic} replaced by the sanitised topic', () => {
    const r = router({ routes: [{ table: 'raw.{topic}' }] })
    expect(r.route('Orders.EU', {})).toEqual({ kind: 'tables', tables: ['raw.orders_eu'] })
  })

  it('maps exact topics and topic patterns to tables; a record can go to several tables', () => {
    const r = router({
      defaultNamespace: 'db',
      routes: [
        { topic: 'orders', table: 'orders' },
        { topicPattern: '^ord', table: 'all_orders' },
        { topicPattern: '^clicks-', table: 'clicks' },
      ],
    })
    expect(r.route('orders', {})).toEqual({ kind: 'tables', tables: ['db.orders', 'db.all_orders'] })
    expect(r.route('clicks-eu', {})).toEqual({ kind: 'tables', tables: ['db.clicks'] })
    expect(r.needsValue).toBe(false)
  })

  it('matches a route field against per-table regexes', () => {
    const r = router({ routes: [{ field: 'meta.type', match: { 'ev.signups': '^signup$', 'ev.all': '.*' } }] })
    expect(r.route('t', { meta: { type: 'signup' } })).toEqual({ kind: 'tables', tables: ['ev.signups', 'ev.all'] })
    expect(r.route('t', { meta: { type: 'login' } })).toEqual({ kind: 'tables', tables: ['ev.all'] })
    expect(r.needsValue).toBe(true)
  })

  it('names dynamic tables after a field value, sanitised, with prefix and namespace', () => {
    const r = router({ routes: [{ tableFromField: 'type', namespace: 'dyn', prefix: 'ev_' }] })
    expect(r.route('t', { type: 'Page View' })).toEqual({ kind: 'tables', tables: ['dyn.ev_page_view'] })
  })

  it('dead-letters an unrouted record by default, saying why', () => {
    const r = router({ routes: [{ topic: 'a', table: 'a' }, { tableFromField: 'type' }] })
    const out = r.route('b', { other: 1 })
    expect(out.kind).toBe('dead-letter')
    expect(out.kind !== 'tables' && out.reason).toMatch(/no route matched topic 'b'.*field 'type' is missing/)
  })

  it('drops unrouted records when told to, and sends them to a default table when one is given', () => {
    expect(router({ routes: [{ topic: 'a', table: 'a' }], unrouted: 'drop' }).route('b', {}).kind).toBe('drop')
    expect(router({ routes: [{ topic: 'a', table: 'a' }], unrouted: { table: 'misc.other' } }).route('b', {})).toEqual({
      kind: 'tables',
      tables: ['misc.other'],
    })
  })

  it('looks up table options by normalised name and falls back to tableDefaults', () => {
    const r = router({
      routes: [{ table: 'x' }],
      tables: { 'default.Clicks': { partitionBy: ['day(ts)'] } },
      tableDefaults: { evolveSchema: false },
    })
    expect(r.options('default.clicks').partitionBy).toEqual(['day(ts)'])
    expect(r.options('default.other').evolveSchema).toBe(false)
  })
})
