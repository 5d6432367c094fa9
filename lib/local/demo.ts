/**
 * A realistic demo stream for `floe start`: clickstream and order events over several topics and
 * partitions, with nested fields, timestamps in two notations, fields that appear midway (schema
 * changes) and a handful of poison records. Deterministic for a given seed, so a run can be
 * reproduced and its counts checked.
 */
import type { Routes } from '../config.js'
import type { KafkaLog, LogRecord } from './kafka-log.js'

export interface DemoOptions {
  records: number
  seed?: number
  /** Epoch ms of the first event; events spread over ~3 days so day(ts) has several partitions. */
  startMs?: number
  /** Offset to start each partition at (a second run appends after the first). */
  startOffsets?: Map<string, bigint>
}

export interface DemoStats {
  produced: number
  poison: number
  byTopic: Record<string, number>
  /** "topic-partition" → next offset after this run's last record. */
  endOffsets: Map<string, bigint>
}

/** Routes used by the demo: clicks and page views to `demo.clicks` (by day), orders to `demo.orders`. */
export const DEMO_ROUTES: Routes = {
  defaultNamespace: 'demo',
  tables: {
    'demo.clicks': {
      autoCreate: true,
      partitionBy: ['day(ts)'],
      evolveSchema: true,
      caseInsensitive: false,
      idColumns: [],
      kafkaMetadata: ['topic', 'partition', 'offset', 'timestamp'],
      properties: {},
    },
    'demo.orders': {
      autoCreate: true,
      partitionBy: [],
      evolveSchema: true,
      caseInsensitive: false,
      idColumns: [],
      kafkaMetadata: false,
      properties: {},
    },
  },
  tableDefaults: { autoCreate: true, partitionBy: [], evolveSchema: true, caseInsensitive: false, idColumns: [], kafkaMetadata: false, properties: {} },
  routes: [
    { topicPattern: '^(clicks|pageviews)$', table: 'demo.clicks' },
    { topic: 'orders', table: 'demo.orders' },
  ],
  unrouted: 'dead-letter',
  formats: [],
}

export const DEMO_TOPICS = [
  { topic: 'clicks', partitions: 3, weight: 5 },
  { topic: 'pageviews', partitions: 2, weight: 3 },
  { topic: 'orders', partitions: 2, weight: 2 },
] as const

/** mulberry32: small, fast, good enough for demo data and reproducible chaos schedules. */
export function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const PAGES = ['/', '/search', '/product/42', '/product/7', '/cart', '/checkout', '/help']
const COUNTRIES = ['DE', 'FR', 'US', 'JP', 'BR', 'IN', 'NL']
const DEVICES = ['mobile', 'desktop', 'tablet']

function clickEvent(r: () => number, i: number, ts: number, phase: number): Record<string, unknown> {
  const event: Record<string, unknown> = {
    event_id: `e-${i}`,
    user_id: Math.floor(r() * 5000),
    ts: new Date(ts).toISOString(),
    client_ts: ts - Math.floor(r() * 5000),
    page: PAGES[Math.floor(r() * PAGES.length)],
    device: { type: DEVICES[Math.floor(r() * DEVICES.length)], os_version: `${1 + Math.floor(r() * 17)}.${Math.floor(r() * 4)}` },
    duration_ms: Math.floor(r() * 20_000),
    tags: r() < 0.3 ? ['promo', 'ab-test'] : [],
  }
  // Schema change midway: a nested geo struct and a referrer field appear.
  if (phase >= 1) event.geo = { country: COUNTRIES[Math.floor(r() * COUNTRIES.length)], lat: Math.round(r() * 18000 - 9000) / 100 }
  if (phase >= 2) event.referrer = r() < 0.5 ? 'https://example.com/' : null
  return event
}

function orderEvent(r: () => number, i: number, ts: number, phase: number): Record<string, unknown> {
  const items = Array.from({ length: 1 + Math.floor(r() * 3) }, () => ({
    sku: `SKU-${Math.floor(r() * 900) + 100}`,
    qty: 1 + Math.floor(r() * 4),
    price: (Math.floor(r() * 10_000) / 100).toFixed(2),
  }))
  const order: Record<string, unknown> = {
    order_id: `o-${i}`,
    user_id: Math.floor(r() * 5000),
    ts: new Date(ts).toISOString(),
    items,
    total: items.reduce((s, it) => s + Number(it.price) * it.qty, 0).toFixed(2),
  }
  if (phase >= 1) order.coupon = r() < 0.2 ? 'WELCOME10' : null
  return order
}

const POISONS: ((r: () => number) => Uint8Array)[] = [
  () => new TextEncoder().encode('{"event_id": "broken", "ts": '),
  () => new TextEncoder().encode('["not", "an", "object"]'),
  () => new TextEncoder().encode(JSON.stringify({ event_id: 'bad-ts', user_id: 1, ts: 'yesterday-ish' })),
  () => new TextEncoder().encode(JSON.stringify({ event_id: 'bad-user', user_id: 'not-a-number', ts: 0 })),
  () => new Uint8Array([0xff, 0xfe, 0x00, 0x01]),
]

/**
 * Append `records` demo records to the log. In the second half roughly 1 in 400 is poison (at
 * least 5), spread over topics. Returns what was produced so a run can be reconciled against the table.
 */
export function generateDemo(log: KafkaLog, opts: DemoOptions): DemoStats {
  const r = rng(opts.seed ?? 42)
  const start = opts.startMs ?? Date.UTC(2026, 10, 20)
  const spanMs = 3 * 24 * 3600 * 1000
  const totalWeight = DEMO_TOPICS.reduce((s, t) => s + t.weight, 0)
  // Poison only in the second half: tables are auto-created from the first batches' records.
  const poisonEvery = Math.max(2, Math.min(400, Math.floor(opts.records / 10)))
  const stats: DemoStats = { produced: 0, poison: 0, byTopic: {}, endOffsets: new Map() }
  const next = new Map(opts.startOffsets ?? [])
  for (let i = 0; i < opts.records; i++) {
    let pick = r() * totalWeight
    const t = DEMO_TOPICS.find((x) => (pick -= x.weight) < 0) ?? DEMO_TOPICS[0]
    const partition = Math.floor(r() * t.partitions)
    const ts = start + Math.floor((i / opts.records) * spanMs) + Math.floor(r() * 1000)
    const phase = Math.floor((3 * i) / opts.records)
    const poison = i >= opts.records / 2 && i % poisonEvery === poisonEvery - 1
    const value = poison
      ? POISONS[stats.poison % POISONS.length]!(r)
      : new TextEncoder().encode(JSON.stringify(t.topic === 'orders' ? orderEvent(r, i, ts, phase) : clickEvent(r, i, ts, phase)))
    const key = `${t.topic}-${partition}`
    const offset = next.get(key) ?? 0n
    // Leave an occasional gap, as compaction and transaction markers do.
    const record: Omit<LogRecord, 'offset'> & { offset: bigint } = {
      topic: t.topic,
      partition,
      offset,
      timestamp: ts,
      key: new TextEncoder().encode(`user-${i % 5000}`),
      value,
      headers: [{ key: 'source', value: new TextEncoder().encode('floe-demo') }],
    }
    log.append(record)
    next.set(key, offset + (r() < 0.02 ? 2n : 1n))
    stats.endOffsets.set(key, offset + 1n)
    stats.produced++
    if (poison) stats.poison++
    stats.byTopic[t.topic] = (stats.byTopic[t.topic] ?? 0) + 1
  }
  return stats
}
