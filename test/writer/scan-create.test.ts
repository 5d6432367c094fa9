/**
 * The scanner lane creating a table (lib/writer/scan-tables.ts probe): a batch whose table does
 * not exist yet, written with the lane on and off, gives the same table — schema (field ids,
 * order, types), rows, metrics, ranges, checkpoints, dead letters — whatever its records hold.
 * Generated batches (seeded) mix what inference types differently from a column the scanner reads:
 * integer and fractional literals, `1.0`, exponents, text that is a zoned date-time or nearly one,
 * epoch numbers, nested structs with other keys or key orders, lists of mixed kinds, fields null in
 * the first records of a partition and fields that come late; and scenarios where the first
 * records say otherwise than the batch (a later majority, keys first seen in another order, keys
 * that are array indexes, names alike but for case in a case-insensitive table, another topic's
 * records) or where the lane must create the table (`_kafka`, identifier columns, format v3,
 * metrics modes). DynamoDB Local and s3rver.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import type { KafkaRecord } from '../../lib/kafka/index.js'
import { rng } from '../../lib/local/demo.js'
import { decodeItem, type Item } from '../../lib/writer/decode.js'
import { createProbed, probeLane } from '../../lib/writer/scan-tables.js'
import { TableSet } from '../../lib/writer/tables.js'
import { expectSame, laneRun } from './lane-compare.js'
import { writerSetup, type EventRecord } from './support.js'

type Pick = <T>(xs: readonly T[]) => T

/** Each field: its usual value's JSON, and values a scanner of the inferred schema must not take as that type. */
const FIELDS: [string, (i: number, pick: Pick) => string, (i: number, pick: Pick) => string][] = [
  ['id', (i) => String(i), (i, p) => p([`${i}.0`, `"${i}"`, '12345678901234567890', '1e3'])],
  ['amount', (i) => `${i}.25`, (i, p) => p([String(i), `${i}e-2`, '-0', '1.0', '9007199254740993'])],
  ['name', (i) => `"n${i % 7}"`, (i, p) => p(['"2024-05-01T10:00:00Z"', '"2024-05-01T10:00:00.123+02:00"', '"\\u0032024-05-01T10:00:00Z"', '"2024-05-01"', '"a string of twenty chars"', String(i), ' "2024-05-01T10:00Z"'])],
  ['ts', (i) => `"${new Date(1_714_557_600_000 + i * 1000).toISOString()}"`, (i, p) => p(['"2024-05-01T10:00:00"', '"2024-05-01T10:00:00+01:00"', '"2024-05-01T10:00:00.123456789Z"', String(1_714_557_600_000 + i), '"2024-05-01"', '"2024-05-01T10:00:00.123456Z"', '"soon"'])],
  ['ok', (i) => (i % 2 ? 'true' : 'false'), (_i, p) => p(['"true"', '1', 'null'])],
  ['obj', (i) => `{"x":${i},"y":"v${i % 3}"}`, (i, p) => p(['{}', `{"y":"w","x":${i}}`, `{"x":${i},"z":1}`, '{"x":null}', `{"x":${i}.5,"y":"v"}`])],
  ['tags', (i) => `["a","t${i % 5}"]`, (_i, p) => p(['[]', '[1,2]', '["a",1]', '[null]', '["2024-05-01T10:00:00Z"]', '[1.5,2]'])],
]

/** One record's JSON: each field usual, hostile (`rate`), null or absent; now and then keys in another order or a field first seen late. */
function record(i: number, rate: number, r: () => number, late: boolean): string {
  const pick: Pick = (xs) => xs[Math.floor(r() * xs.length)]!
  const parts: string[] = []
  for (const [name, usual, hostile] of FIELDS) {
    const x = r()
    if (x < rate / 4) continue
    const value = x < rate / 2 ? 'null' : x < rate ? hostile(i, pick) : usual(i, pick)
    parts.push(`"${name}":${value}`)
  }
  if (late) parts.push(`"late":${i}`)
  if (r() < rate / 4) parts.reverse()
  return `{${parts.join(',')}}`
}

/** A batch for topic `t<k>` (table `t<k>`): 1–3 partitions, the first records of some of them with nulls where others have values. */
function batch(k: number, rate: number): EventRecord[] {
  const r = rng(1000 + k)
  const partitions = 1 + Math.floor(r() * 3)
  const n = 12 + Math.floor(r() * 40)
  const lateAt = r() < 0.3 ? Math.floor(r() * n) : -1
  return Array.from({ length: n }, (_, i) => {
    const partition = i % partitions
    // Partition 0 starts with nulls in every optional field: its first records say nothing of their types.
    const value = partition === 0 && i < 3 * partitions && r() < 0.5 ? `{"id":${i},"amount":null,"name":null,"tags":null}` : record(i, rate, r, i === lateAt)
    return { topic: `t${k}`, partition, offset: i, value }
  })
}

const CASES = 18
const routes = JSON.stringify({ defaultNamespace: 'sc', routes: Array.from({ length: CASES }, (_, k) => ({ topic: `t${k}`, table: `t${k}` })) })

const at = (topic: string, partition: number, offset: number | bigint, value: unknown): EventRecord => ({ topic, partition, offset, value })
const zulu = (i: number) => new Date(1_714_557_600_000 + i * 1000).toISOString()

/**
 * Batches where the records the schema is first inferred from (the first 8 past the checkpoint of
 * each partition) say otherwise than the batch as a whole, and where the lane must create the table.
 */
const SCENARIOS: Record<string, { records: EventRecord[]; lane: boolean }> = {
  // Partition 0's records all have `tags: null` (as the bench's): the other partitions' first records type it.
  nullInOnePartition: { records: Array.from({ length: 40 }, (_, i) => at('nullInOnePartition', i % 4, i, { id: i, tags: i % 4 === 0 ? null : ['a'], ts: zulu(i) })), lane: true },
  // Text, then a majority of zoned date-times past the first records: inference makes the column timestamptz.
  textThenTimestamps: { records: Array.from({ length: 40 }, (_, i) => at('textThenTimestamps', 0, i, { id: i, s: i < 10 ? `w${i}` : zulu(i) })), lane: false },
  // Zoned date-times, then a majority of epoch numbers: a long column.
  timestampsThenNumbers: { records: Array.from({ length: 40 }, (_, i) => at('timestampsThenNumbers', 0, i, { id: i, t: i < 10 ? zulu(i) : 1_714_557_600_000 + i })), lane: false },
  // Zoned date-times, then a majority without a zone: a string column.
  timestampsThenZoneless: { records: Array.from({ length: 40 }, (_, i) => at('timestampsThenZoneless', 0, i, { id: i, t: i < 10 ? zulu(i) : zulu(i).slice(0, 19) })), lane: false },
  // Partition 0 has `b` from its 11th record and `a` from its 12th (past its first records); partition 1's first records
  // have `a` first: inference over the batch in order puts `b` before `a`, over the first records `a` before `b`.
  keyOrder: {
    records: [
      ...Array.from({ length: 16 }, (_, i) => at('keyOrder', 0, i, i < 10 ? { id: i } : i < 11 ? { id: i, b: 2 } : { id: i, a: 1, b: 2 })),
      at('keyOrder', 1, 0, { id: 0, a: 1 }),
      at('keyOrder', 1, 1, { id: 1, a: 1, b: 2 }),
    ],
    lane: false,
  },
  // The same fields in the same order everywhere: created by the lane.
  keyOrderKept: {
    records: [...Array.from({ length: 16 }, (_, i) => at('keyOrderKept', 0, i, i < 10 ? { id: i } : { id: i, a: 1, b: 2 })), at('keyOrderKept', 1, 0, { id: 0, a: 1, b: 2 })],
    lane: true,
  },
  // A field first seen past the first records: not in the first records' schema.
  lateField: { records: Array.from({ length: 30 }, (_, i) => at('lateField', 0, i, i === 20 ? { id: i, extra: 'x' } : { id: i })), lane: false },
  // Keys that are array indexes: a JS object lists them first (`"1"` before `b`), so inference does not take the text's order.
  indexKeys: {
    records: [
      ...Array.from({ length: 9 }, (_, i) => at('indexKeys', 0, i, i < 8 ? '{"x":0}' : '{"x":0,"b":1,"1":2}')),
      at('indexKeys', 1, 0, '{"x":0,"b":1}'),
      at('indexKeys', 1, 1, '{"x":0,"b":1,"1":2}'),
    ],
    lane: false,
  },
  // Matching keys ignoring case with fields `a` and `A`: the present path reads `a` from `A` where a record has no `a`.
  caseAlike: { records: [at('caseAlike', 0, 0, '{"id":1,"a":1,"A":2}'), at('caseAlike', 0, 1, '{"id":2,"A":3}')], lane: false },
  // The same table once it exists: not the lane's either.
  caseAlikeAgain: { records: [at('caseAlike', 0, 2, '{"id":3,"A":4}'), at('caseAlike', 0, 3, '{"id":4,"a":5,"A":6}')], lane: false },
  // Matching keys ignoring case, no two names alike: a key in another case is refused by the scanner, the rest read.
  caseOther: { records: Array.from({ length: 12 }, (_, i) => at('caseOther', 0, i, i === 10 ? { ID: i, name: 'x' } : { id: i, name: `n${i}` })), lane: false },
  caseSame: { records: Array.from({ length: 12 }, (_, i) => at('caseSame', 0, i, { id: i, name: `n${i}` })), lane: true },
  // Table options the lane creates tables with: `_kafka` (with its int partition), identifier columns, format v3, metrics modes.
  withKafka: { records: Array.from({ length: 12 }, (_, i) => at('withKafka', i % 2, i, { id: i, ts: zulu(i) })), lane: true },
  withIds: { records: Array.from({ length: 12 }, (_, i) => at('withIds', 0, i, { id: i, v: i / 2 })), lane: true },
  v3: { records: Array.from({ length: 12 }, (_, i) => at('v3', 0, i, { id: i, ts: zulu(i), d: i + 0.5 })), lane: true },
  metricsModes: { records: Array.from({ length: 12 }, (_, i) => at('metricsModes', 0, i, { id: i, s: `s${i}`, long: 'x'.repeat(40 + i) })), lane: true },
  // Fields named like what every object inherits: a record without the key has null there, on both paths.
  inheritedNames: {
    records: Array.from({ length: 12 }, (_, i) => at('inheritedNames', 0, i, i % 3 ? `{"id":${i},"constructor":"c${i}","toString":${i},"__proto__":{"x":${i}}}` : `{"id":${i}}`)),
    lane: true,
  },
  // Records of another topic for the same table, not read by the lane (offsets past 2^53 are parsed): they shape it too.
  otherTopic: { records: [...Array.from({ length: 10 }, (_, i) => at('otherTopic', 0, i, { id: i })), ...Array.from({ length: 3 }, (_, i) => at('otherTopicBig', 0, 2n ** 60n + BigInt(i), { id: i, more: 'y' }))], lane: false },
}
const scenarioRoutes = JSON.stringify({
  defaultNamespace: 'sc',
  routes: [...Object.keys(SCENARIOS).map((t) => ({ topic: t, table: t })), { topic: 'otherTopicBig', table: 'otherTopic' }],
  tables: {
    caseAlike: { caseInsensitive: true },
    caseOther: { caseInsensitive: true },
    caseSame: { caseInsensitive: true },
    withKafka: { kafkaMetadata: ['topic', 'partition', 'offset', 'timestamp'] },
    withIds: { idColumns: ['id'] },
    v3: { formatVersion: 3 },
    metricsModes: { properties: { 'write.metadata.metrics.default': 'counts', 'write.metadata.metrics.column.s': 'full', 'write.metadata.metrics.column.long': 'truncate(8)' } },
  },
})
/** Hostile share per case: clean batches (the lane should create their tables) to mostly hostile ones. */
const rate = (k: number): number => [0, 0, 0.03, 0.1, 0.3, 0.6][k % 6]!

describe('the scanner lane creating a table', () => {
  it('creates the same table, with the same rows, metrics, ranges and dead letters, as the present path', async () => {
    const batches = Array.from({ length: CASES }, (_, k) => batch(k, rate(k)))
    const [on, off] = [await laneRun(true, batches, { FLOE_ROUTES: routes }), await laneRun(false, batches, { FLOE_ROUTES: routes })]
    await expectSame(on, off)
    // The lane read every record of the clean batches (it created their tables), and fell back on others.
    const scanned = on.results.map((r, k) => (r.recordsScanned === 0 ? 'present' : r.recordsScanned === batches[k]!.length ? 'lane' : 'partly'))
    expect(scanned.filter((s, k) => rate(k) === 0 && s === 'lane').length).toBeGreaterThanOrEqual(CASES / 6)
    expect(scanned).toContain('present')
    expect(scanned).not.toContain('partly')
    expect(on.results.every((r) => r.tables.every((t) => t.created))).toBe(true)
  }, 300_000)

  it('leaves a table to the present path where the first records say otherwise than the batch, and creates it where they do not', async () => {
    const batches = Object.values(SCENARIOS).map((c) => c.records)
    const [on, off] = [await laneRun(true, batches, { FLOE_ROUTES: scenarioRoutes }), await laneRun(false, batches, { FLOE_ROUTES: scenarioRoutes })]
    await expectSame(on, off)
    const used = Object.fromEntries(Object.keys(SCENARIOS).map((name, k) => [name, on.results[k]!.recordsScanned > 0]))
    expect(used).toEqual(Object.fromEntries(Object.entries(SCENARIOS).map(([name, c]) => [name, c.lane])))
  }, 120_000)

  it('holds none of the records it probed while the batch is read, and creates the table from them decoded again', async () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const { deps } = await writerSetup({ FLOE_ROUTES: JSON.stringify({ defaultNamespace: 'probe', routes: [{ topic: 'p', table: 'p' }] }) })
    const tables = new TableSet(deps)
    const held: WeakRef<Item>[] = []
    let decoded = 0
    // The probe's records, decoded from their bytes at each call (as ScanLane.probe's `firsts`), each watched.
    const value = (i: number) => new TextEncoder().encode(JSON.stringify({ id: i, name: `n${i}`, amount: i + 0.5, blob: 'x'.repeat(10_000) }))
    const firsts = (): Item[] =>
      Array.from({ length: 8 }, (_, i) => {
        const kafka: KafkaRecord = { topic: 'p', partition: 0, offset: BigInt(i), timestamp: 1_714_557_600_000, key: null, value: value(i), headers: [] }
        const item = decodeItem(deps, kafka, 'p-0', true) as Item
        held.push(new WeakRef(item))
        decoded++
        return item
      })
    await tables.preload('p')
    const lane = probeLane(deps, tables, 'p', firsts)
    expect(lane?.probe?.schema.fields.map((f) => f.name)).toEqual(['id', 'name', 'amount', 'blob'])
    // A WeakRef keeps its target to the end of the job that made it: collect in a later one.
    await new Promise((resolve) => setImmediate(resolve))
    gc()
    expect(held.filter((r) => r.deref() !== undefined)).toHaveLength(0)
    // The lane reads the batch's records (here the same 8), then the table is created from the
    // probed ones decoded again: the table its scanner was compiled for.
    for (let i = 0; i < 8; i++) expect(lane!.scanner.add(value(i))).toBe(true)
    expect(await createProbed(tables, 'p', lane!)).toBe(true)
    expect(decoded).toBe(16)
    expect(tables.get('p')?.schema.fields.map((f) => f.name)).toEqual(['id', 'name', 'amount', 'blob'])
  })
})
