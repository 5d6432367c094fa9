/**
 * The fixed input of the golden-output test (golden.test.ts): two MSK batches over three tables,
 * generated from a seeded PRNG so the JSON text is the same on every run and every machine.
 *
 * - `orders` (unpartitioned, evolution on): longs, ISO timestamps, doubles printed in full,
 *   `1.0`-style literals, a list, a struct, nulls, unicode; batch 2 adds a new field written
 *   `2.0` (must become a double), unsafe integers (beyond 2^53, odd: a double cannot hold them) into a long column, numbers into a
 *   string column, and hostile records (invalid JSON, an array, a tombstone, a wrong type).
 * - `metrics` (identity partition on `region`, `_kafka` metadata column, `columns` hints pinning a
 *   decimal and a long): 60 columns wide.
 * - `mixed` (day(ts) partition): the same topic as `orders` routed by a field.
 *
 * The records are JSON text (not objects) so number literals are exactly as written.
 */
import type { EventRecord } from '../support.js'

export const GOLDEN_ROUTES = {
  defaultNamespace: 'gold',
  routes: [
    { topic: 'orders', table: 'orders' },
    { topic: 'orders', field: 'kind', match: { 'gold.mixed': '^m' } },
    { topic: 'metrics', table: 'metrics' },
  ],
  tables: {
    'gold.mixed': { partitionBy: ['day(ts)'] },
    'gold.metrics': { partitionBy: ['region'], kafkaMetadata: true, columns: { price: 'decimal(12, 3)', counter: 'long' } },
  },
}

/** Mulberry32: a small seeded PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const WORDS = ['alpha', 'beta', 'gamma', 'δέλτα', 'epsilon', 'zeta', '東京', 'eta', 'theta', 'iota']

function orderText(rand: () => number, i: number, batch: number): string {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!
  const ts = new Date(Date.UTC(2026, 0, 1 + Math.floor(rand() * 5), Math.floor(rand() * 24), Math.floor(rand() * 60), Math.floor(rand() * 60), Math.floor(rand() * 1000))).toISOString()
  const amount = rand() < 0.2 ? `${Math.floor(rand() * 100)}.0` : String(rand() * 1000)
  const tags = JSON.stringify(Array.from({ length: Math.floor(rand() * 4) }, () => pick(WORDS)))
  const parts = [
    `"id":${batch === 2 && i % 7 === 0 ? `${9_007_199_254_740_993n + 2n * BigInt(i)}` : 1_000_000 + i * 13 + batch}`,
    `"kind":"${rand() < 0.3 ? 'mini' : 'order'}"`,
    `"ts":"${ts}"`,
    `"amount":${amount}`,
    `"qty":${Math.floor(rand() * 50)}`,
    `"name":${rand() < 0.1 ? 'null' : batch === 2 && i % 5 === 0 ? String(Math.floor(rand() * 1000)) : JSON.stringify(pick(WORDS) + i)}`,
    `"flag":${rand() < 0.15 ? 'null' : rand() < 0.5}`,
    `"tags":${tags}`,
    `"nested":{"a":${JSON.stringify(pick(WORDS))},"b":${Math.floor(rand() * 10)}}`,
  ]
  if (batch === 2 && i % 3 === 0) parts.push(`"extra":${Math.floor(rand() * 9)}.0`)
  return `{${parts.join(',')}}`
}

function metricText(rand: () => number, i: number): string {
  const parts = [`"region":"${['eu', 'us', 'ap'][i % 3]}"`, `"price":${(rand() * 10_000).toFixed(3)}`, `"counter":${Math.floor(rand() * 1e6)}`]
  for (let c = 0; c < 57; c++) {
    const kind = c % 4
    const v = kind === 0 ? String(Math.floor(rand() * 1e9)) : kind === 1 ? String(rand() * 100) : kind === 2 ? JSON.stringify(`s${Math.floor(rand() * 50)}`) : String(rand() < 0.5)
    parts.push(`"c${c}":${rand() < 0.05 ? 'null' : v}`)
  }
  return `{${parts.join(',')}}`
}

/** The two batches, as event records (values are JSON text or hostile bytes). */
export function goldenBatches(): EventRecord[][] {
  const rand = prng(20)
  const batches: EventRecord[][] = []
  for (const batch of [1, 2]) {
    const records: EventRecord[] = []
    const base = (batch - 1) * 400
    for (let i = 0; i < 400; i++) {
      const partition = i % 3
      const offset = base + i
      const timestamp = 1_767_225_600_000 + offset * 1000
      records.push({ topic: 'orders', partition, offset, timestamp, key: `k${i % 11}`, value: orderText(rand, i, batch) })
      if (i % 2 === 0) records.push({ topic: 'metrics', partition: 0, offset: base / 2 + i / 2, timestamp, key: `m${i}`, value: metricText(rand, i) })
    }
    if (batch === 2) {
      records.push({ topic: 'orders', partition: 0, offset: 900, value: '{"id": 1, "ts": ' })
      records.push({ topic: 'orders', partition: 1, offset: 901, value: '[1,2,3]' })
      records.push({ topic: 'orders', partition: 2, offset: 902, value: null })
      records.push({ topic: 'orders', partition: 0, offset: 903, value: '{"id":"not a number","ts":"2026-01-02T00:00:00Z"}' })
      records.push({ topic: 'metrics', partition: 0, offset: 900, value: '{"region":"eu","price":"abc","counter":1}' })
    }
    batches.push(records)
  }
  return batches
}
