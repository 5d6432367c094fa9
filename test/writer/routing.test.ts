import { describe, expect, it } from 'vitest'
import { RoutesSchema } from '../../lib/config.js'
import { compileRoutes } from '../../lib/writer/routing.js'

const router = (routes: unknown) => compileRoutes(RoutesSchema.parse(routes))

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
    expect(r.needsValueFor('t')).toBe(true)
  })

  it('knows per topic whether a field route needs the value (the scanner lane reads the other topics)', () => {
    const r = router({ defaultNamespace: 'db', routes: [{ topic: 'clicks', table: 'clicks' }, { topicPattern: '^ev-', field: 'type', match: { 'ev.signups': '^signup$' } }, { topic: 'ev-x', table: 'ev_x' }] })
    expect(r.needsValue).toBe(true)
    expect([r.needsValueFor('clicks'), r.needsValueFor('ev-x'), r.needsValueFor('ev-y'), r.needsValueFor('other')]).toEqual([false, true, true, false])
    expect(r.route('clicks', undefined)).toEqual({ kind: 'tables', tables: ['db.clicks'] })
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

  it('keeps tableFromField inside its namespace and prefix, off static tables, within allow and the length limit', () => {
    const r = router({
      defaultNamespace: 'shop',
      routes: [{ topic: 'orders', table: 'orders' }, { topic: 'e', tableFromField: 't', prefix: 'ev_', allow: 'ev_[a-z]+' }, { topic: 'f', tableFromField: 't' }, { topic: 'g', tableFromField: 't', allowStatic: true }],
      tables: { 'shop.vip': {} },
    })
    expect(r.route('e', { t: 'Page.View' })).toEqual({ kind: 'dead-letter', reason: expect.stringMatching(/allow pattern "ev_\[a-z\]\+" does not match/) })
    expect(r.route('e', { t: 'click' })).toEqual({ kind: 'tables', tables: ['shop.ev_click'] })
    expect(r.route('f', { t: 'other.ns.x' })).toEqual({ kind: 'tables', tables: ['shop.other_ns_x'] })
    expect(r.route('f', { t: 'ORDERS' })).toEqual({ kind: 'dead-letter', reason: expect.stringMatching(/names shop.orders, a statically routed table/) })
    expect(r.route('f', { t: 'vip' })).toEqual({ kind: 'dead-letter', reason: expect.stringMatching(/names shop.vip, a statically routed table/) })
    expect(r.route('g', { t: 'ORDERS' })).toEqual({ kind: 'tables', tables: ['shop.orders'] })
    expect(r.route('f', { t: 'x'.repeat(200) })).toEqual({ kind: 'dead-letter', reason: expect.stringMatching(/longer than FLOE_MAX_TABLE_NAME_LENGTH=128/) })
  })

  it('matches regexes in linear time (RE2): a catastrophic JavaScript pattern answers at once', () => {
    const r = router({ routes: [{ field: 'v', match: { t: '^(a+)+$' } }], unrouted: 'drop' })
    expect(r.route('x', { v: `${'a'.repeat(5_000)}!` }).kind).toBe('drop')
    expect(r.route('x', { v: 'aaa' })).toEqual({ kind: 'tables', tables: ['default.t'] })
  })
})
