/**
 * The scanner lane (FLOE_WRITER_SCAN, lib/writer/scan-lane.ts) end to end: the same batches
 * written with the lane on and off register the same rows (read back from the Parquet files),
 * counts, offset ranges, checkpoints, dead letters and column metrics; the lane writes its own
 * file only where it read records, and hands them back to the present path when the table
 * evolves, when the batch needs several registration groups, when its memory share is spent and
 * when a group attempt is retried. DynamoDB Local and s3rver.
 */
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../lib/config.js'
import { ConfigError } from '../../lib/errors.js'
import { writeBatch } from '../../lib/writer/pipeline.js'
import { existingLane } from '../../lib/writer/scan-tables.js'
import { TableSet } from '../../lib/writer/tables.js'
import { expectSame, laneRun, type Run } from './lane-compare.js'
import { registeredRows } from './readback.js'
import { checkpoints, kafkaEvent, writerSetup, type EventRecord, type WriterSetup } from './support.js'

const ROUTES = JSON.stringify({
  defaultNamespace: 'sl',
  routes: [{ topic: 'clicks', table: 'clicks' }, { topic: 'parts', table: 'parts' }, { topic: 'meta', table: 'meta' }, { topic: 'where', table: 'where' }],
  tables: { parts: { partitionBy: ['city'] }, meta: { kafkaMetadata: true }, where: { kafkaMetadata: ['topic', 'partition', 'offset', 'timestamp'] } },
})
const CITIES = ['Oslo', 'Lima', 'Kyiv', 'São Paulo']

const click = (i: number): Record<string, unknown> => ({
  id: i,
  user: 9_007_199_254_740_000 + i,
  ts: new Date(1_714_557_600_000 + i * 37).toISOString(),
  amount: i / 3 + 0.25,
  ok: i % 3 === 0,
  city: CITIES[i % 4],
  tags: i % 4 === 0 ? null : ['a', `t${i % 10}`],
  device: { os: i % 2 ? 'ios' : 'android', v: i % 17 },
})

/** Records the table is created from (every field seen, so later clean records fit it as it is). */
const seed = (): EventRecord[] => [
  ...Array.from({ length: 20 }, (_, i) => ({ topic: 'clicks', partition: 0, offset: i, value: click(i) })),
  ...Array.from({ length: 8 }, (_, i) => ({ topic: 'parts', partition: 0, offset: i, value: click(i) })),
  ...Array.from({ length: 4 }, (_, i) => ({ topic: 'meta', partition: 0, offset: i, value: click(i) })),
  ...Array.from({ length: 4 }, (_, i) => ({ topic: 'where', partition: 0, offset: i, value: click(i) })),
]

/** A later batch: clean records, and what the scanner must leave to the present path. */
function mixed(extra: EventRecord[] = []): EventRecord[] {
  const out: EventRecord[] = []
  for (let i = 0; i < 600; i++) out.push({ topic: 'clicks', partition: i % 3, offset: 100 + i, value: click(i + 100), timestamp: 1_714_521_600_000 + i })
  const odd = [
    '{"id": 1, "city": "Oslo"}',
    '{"city":"Lima","id":2}',
    '{"id":3,"amount":"4.5"}',
    '{"id":4,"city":"\\u004fslo"}',
    '{"id":5,"user":12345678901234567890}',
    '{"id":6,"amount":1e400}',
    '{"id":7,"city":"\\ud800"}',
    '{"id": 8, "ts": "2024-05-01T10:00:00+02:00"}',
    '{"id":9,"ts":1714557600000}',
    '{"id": 10',
    '[1, 2]',
  ]
  odd.forEach((value, k) => out.push({ topic: 'clicks', partition: 3, offset: 10 + k, value }))
  out.push({ topic: 'clicks', partition: 3, offset: 40, value: null })
  out.push({ topic: 'clicks', partition: 3, offset: 41, value: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]) })
  for (let i = 0; i < 30; i++) out.push({ topic: 'parts', partition: 0, offset: 50 + i, value: click(i) })
  for (let i = 0; i < 10; i++) out.push({ topic: 'meta', partition: 0, offset: 50 + i, value: click(i) })
  // The lane fills `_kafka` from the metadata: offsets past 2^53, timestamps of every kind; a value with a `_kafka` key is a dead letter.
  // Offsets past 2^53 are text in the event: those partitions are parsed (lib/kafka event-parts.ts), not read raw.
  const big = 2n ** 60n
  for (let i = 0; i < 10; i++) out.push({ topic: 'where', partition: 1 + (i % 2), offset: big + BigInt(i), value: click(i), timestamp: [1_714_521_600_123, -5, 0, 253_402_300_799_999][i % 4] })
  for (let i = 0; i < 12; i++) out.push({ topic: 'where', partition: 4, offset: 2 ** 53 - 13 + i, value: click(i), timestamp: [1_714_521_600_123, -1, 0, 253_402_300_799_999][i % 4] })
  out.push({ topic: 'where', partition: 3, offset: 0, value: { id: 1, _kafka: { topic: 'x' } } })
  out.push({ topic: 'where', partition: 3, offset: 1, value: '{"id":2,"city":"\\u0041"}' })
  // A `_kafka` key is a dead letter whatever its value, null included (the lane once took this one as a row).
  out.push({ topic: 'where', partition: 3, offset: 2, value: '{"id":3,"_kafka":null}' })
  return [...out, ...extra]
}

/** A table's file entry (scan-files.ts fileBytes), charged when its lane opens: 1,792 bytes and 64 a column, by the row's 8 bytes a column. */
const entry = (rowBytes: number) => 1792 + 8 * rowBytes

/** How many of the first charges fit within `share` bytes, in order. */
function heldWithin(share: number, charges: number[]): number {
  let [bytes, held] = [0, 0]
  while (held < charges.length && bytes + charges[held]! <= share) bytes += charges[held++]!
  return held
}

const run = (scan: boolean, batches: EventRecord[][], settings: Record<string, string> = {}, before?: (s: WriterSetup) => void): Promise<Run> =>
  laneRun(scan, batches, { FLOE_ROUTES: ROUTES, ...settings }, before)

describe('FLOE_WRITER_SCAN', () => {
  it('on: the same rows, counts, ranges, checkpoints, dead letters and metrics as off; its own file only for a table it read', async () => {
    const batches = [seed(), mixed()]
    const [on, off] = [await run(true, batches), await run(false, batches)]
    await expectSame(on, off)
    // clicks: the lane's file and the present path's for the records it left; parts (partitioned) and meta (_kafka) are not read by the lane.
    const second = (x: Run, t: string) => x.results[1]!.tables.find((r) => r.table === t)!.files
    expect(second(on, 'sl.clicks')).toBe(2)
    expect(second(off, 'sl.clicks')).toBe(1)
    expect(second(on, 'sl.parts')).toBe(second(off, 'sl.parts'))
    expect(second(on, 'sl.meta')).toBe(1)
    // where (_kafka of topic, partition, offset, timestamp): the lane's file and one for the escaped record.
    expect(second(on, 'sl.where')).toBe(2)
    expect(second(off, 'sl.where')).toBe(1)
    expect(on.results[1]!.deadLetters).toBeGreaterThanOrEqual(5)
    // RecordsScanned: the clean clicks and `where` records at least, none with the lane off.
    expect(on.results[1]!.recordsScanned).toBeGreaterThanOrEqual(600 + 12)
    expect(on.results[1]!.recordsScanned).toBeLessThan(on.results[1]!.recordsIn)
    expect(off.results[1]!.recordsScanned).toBe(0)
  }, 120_000)

  it('a field route on another topic leaves the lane on for the topics routed by topic alone', async () => {
    const routes = JSON.parse(ROUTES) as { routes: unknown[] }
    // `ev` goes to ev_all by its topic, and to signups by a field: its tables need each value, so the lane leaves it alone.
    routes.routes.push({ topic: 'ev', table: 'ev_all' }, { topic: 'ev', field: 'kind', match: { 'sl.signups': '^signup$' } })
    const settings = { FLOE_ROUTES: JSON.stringify(routes) }
    const ev = (from: number) => Array.from({ length: 6 }, (_, i) => ({ topic: 'ev', partition: 0, offset: from + i, value: { kind: i % 2 ? 'signup' : 'login', n: i } }))
    const batches = [[...seed(), ...ev(0)], [...mixed(), ...ev(10)]]
    const [on, off] = [await run(true, batches, settings), await run(false, batches, settings)]
    await expectSame(on, off)
    expect(on.results[1]!.tables.filter((t) => t.table === 'sl.signups' || t.table === 'sl.ev_all').map((t) => [t.table, t.rows]).sort()).toEqual([['sl.ev_all', 6], ['sl.signups', 3]])
    expect(on.results[1]!.recordsScanned).toBeGreaterThanOrEqual(600 + 12)
  }, 120_000)

  it('gives its records back when the table evolves in the same batch (a new field)', async () => {
    const batches = [seed(), mixed([{ topic: 'clicks', partition: 4, offset: 0, value: { id: 77, brand_new: 'x' } }])]
    const [on, off] = [await run(true, batches), await run(false, batches)]
    await expectSame(on, off)
    const clicks = on.results[1]!.tables.find((t) => t.table === 'sl.clicks')!
    expect(clicks.evolvedToSchemaId).toBeDefined()
    // Scanned under the old schema, so written the present way under the new one: one file.
    expect(clicks.files).toBe(1)
  }, 120_000)

  it('gives its records back when the batch needs more than one registration group', async () => {
    // 101 partitions + the table: more items than one transaction holds.
    const wide = Array.from({ length: 101 }, (_, p) => ({ topic: 'clicks', partition: p, offset: 5, value: click(p) }))
    const batches = [seed(), wide]
    const [on, off] = [await run(true, batches), await run(false, batches)]
    expect(on.results[1]!.transactions).toBeGreaterThan(1)
    expect(on.results[1]!.recordsScanned).toBe(0)
    await expectSame(on, off)
  }, 120_000)

  it('gives its records back when the batch is cut at FLOE_MAX_TABLES_PER_BATCH (the deferred ones stay out of the file)', async () => {
    // clicks partition 0, then where partition 0: the second table is past the limit of one, so that partition waits.
    const batch = [
      ...Array.from({ length: 30 }, (_, i) => ({ topic: 'clicks', partition: 0, offset: 100 + i, value: click(i) })),
      ...Array.from({ length: 30 }, (_, i) => ({ topic: 'where', partition: 0, offset: 100 + i, value: click(i) })),
    ]
    // The seed batch reaches all four tables; the limit of one applies from the second batch.
    const limit = (s: WriterSetup) => void ((s.deps.config.limits as { maxTablesPerBatch: number }).maxTablesPerBatch = 1)
    const [on, off] = [await run(true, [seed(), batch], {}, limit), await run(false, [seed(), batch], {}, limit)]
    await expectSame(on, off)
    expect(on.results[1]!.tables.map((t) => [t.table, t.rows])).toEqual([['sl.clicks', 30]])
    expect((await checkpoints(on.s.control))['where-0']).toBe('4')
  }, 120_000)

  it('leaves a record over FLOE_MAX_RECORD_KB to the present path (a dead letter), the rest scanned', async () => {
    const settings = { FLOE_MAX_RECORD_KB: '1' }
    const batch = Array.from({ length: 40 }, (_, i) => ({ topic: 'clicks', partition: 0, offset: 100 + i, value: i % 10 === 3 ? { ...click(i), city: 'x'.repeat(1100) } : click(i) }))
    const [on, off] = [await run(true, [seed(), batch], settings), await run(false, [seed(), batch], settings)]
    await expectSame(on, off)
    expect(on.results[1]!.deadLetters).toBe(4)
    expect(on.results[1]!.recordsScanned).toBe(36)
  }, 120_000)

  it('leaves records past its memory share to the present path', async () => {
    const settings = { FLOE_MEMORY_BUDGET_MB: '1' }
    const many = Array.from({ length: 4000 }, (_, i) => ({ topic: 'clicks', partition: 0, offset: 100 + i, value: click(i) }))
    const [on, off] = [await run(true, [seed(), many], settings), await run(false, [seed(), many], settings)]
    // The budget cuts the rows into files at other places when the lane holds part of it: counts, not per-file bounds.
    await expectSame(on, off, false)
    // ~0.8 MB of JSON: the lane's file holds the records up to half the budget, the rows path the rest.
    // Each record is charged its JSON bytes (more than its row takes in the columns), the table's file entry with the first.
    const held = heldWithin(512 * 1024 - entry(9 * 8), many.map((r) => Buffer.byteLength(JSON.stringify(r.value))))
    expect(held).toBeLessThan(many.length)
    const counts = (x: Run) => x.files.get('sl.clicks')!.map((f) => f.recordCount)
    expect(counts(on)).toContain(held)
    expect(counts(off)).not.toContain(held)
  }, 120_000)

  it('charges a sparse record of a wide table what its row takes in the columns, not its few JSON bytes', async () => {
    const routes = JSON.parse(ROUTES) as { routes: unknown[] }
    routes.routes.push({ topic: 'sparse', table: 'sparse' })
    const settings = { FLOE_ROUTES: JSON.stringify(routes), FLOE_MEMORY_BUDGET_MB: '1' }
    const every = Object.fromEntries(Array.from({ length: 300 }, (_, k) => [`f${String(k).padStart(3, '0')}`, k]))
    const first = [{ topic: 'sparse', partition: 0, offset: 0, value: every }]
    const sparse = Array.from({ length: 4000 }, (_, i) => ({ topic: 'sparse', partition: 0, offset: 1 + i, value: { f000: i } }))
    const [on, off] = [await run(true, [first, sparse], settings), await run(false, [first, sparse], settings)]
    await expectSame(on, off, false)
    // 300 columns: 2,400 bytes a row against the lane's half of the budget (48 KB of JSON would all fit).
    expect(on.files.get('sl.sparse')!.map((f) => f.recordCount)).toContain(Math.floor((512 * 1024 - entry(2400)) / 2400))
  }, 120_000)

  it("charges a list's elements what they take in the columns: a list of small numbers is not charged its few JSON bytes", async () => {
    const routes = JSON.parse(ROUTES) as { routes: unknown[] }
    routes.routes.push({ topic: 'bits', table: 'bits' })
    const settings = { FLOE_ROUTES: JSON.stringify(routes), FLOE_MEMORY_BUDGET_MB: '1' }
    const bits = (i: number) => ({ id: i, bits: Array.from({ length: 100 }, (_, k) => (i >> k % 8) & 1) })
    const first = [{ topic: 'bits', partition: 0, offset: 0, value: bits(0) }]
    const records = Array.from({ length: 1000 }, (_, i) => ({ topic: 'bits', partition: 0, offset: 1 + i, value: bits(i) }))
    const [on, off] = [await run(true, [first, records], settings), await run(false, [first, records], settings)]
    await expectSame(on, off, false)
    // ~215 KB of JSON, all of it within the lane's 512 KB; in the columns a row takes 2 leaves' 16 bytes and 8 an element: 816 bytes, so the lane holds 640.
    const json = records.reduce((n, r) => n + Buffer.byteLength(JSON.stringify(r.value)), 0)
    expect(json).toBeLessThan(512 * 1024)
    const held = heldWithin(512 * 1024 - entry(16), records.map(() => 16 + 8 * 100))
    expect(held).toBe(640)
    expect(on.files.get('sl.bits')!.map((f) => f.recordCount)).toContain(held)
  }, 120_000)

  it("charges a split file's copy of a list 4 bytes an element more, for the element's index while gathered", async () => {
    const routes = JSON.parse(ROUTES) as { routes: unknown[]; tables: Record<string, unknown> }
    routes.routes.push({ topic: 'pbits', table: 'pbits' })
    routes.tables.pbits = { partitionBy: ['k'] }
    const settings = { FLOE_ROUTES: JSON.stringify(routes), FLOE_MEMORY_BUDGET_MB: '1' }
    const bits = (i: number) => ({ k: i % 2 ? 'x' : 'y', bits: Array.from({ length: 100 }, (_, k) => (i >> k % 8) & 1) })
    const first = [{ topic: 'pbits', partition: 0, offset: 0, value: bits(0) }]
    const batch = (n: number) => Array.from({ length: n }, (_, i) => ({ topic: 'pbits', partition: 0, offset: 1 + i, value: bits(i) }))
    // A row: 2 leaves (16 bytes), its value `x` or `y` (1), 100 elements (800) and its place (PLACE_BYTES, 32): 849 bytes; its copy
    // 400 more for the elements' indexes. N rows in two files hold 849 N, 2 file entries (1,920 each), the larger file's copy
    // (1,249 N / 2) and an empty copy's arrays (170 × 16): over the lane's 512 KB past N = 351 (past 406 without the indexes).
    const scanned = async (n: number) => {
      const [on, off] = [await run(true, [first, batch(n)], settings), await run(false, [first, batch(n)], settings)]
      await expectSame(on, off, false)
      return on.results[1]!.recordsScanned
    }
    expect(await scanned(340)).toBe(340)
    expect(await scanned(380)).toBe(0)
  }, 120_000)

  it('a retried group attempt (another writer registered part of the batch) registers the rest once, the present way', async () => {
    const s = await writerSetup({ FLOE_ROUTES: ROUTES })
    await writeBatch(s.deps, kafkaEvent(seed()), { writerId: 'setup' })
    let reached!: () => void
    const reachedP = new Promise<void>((r) => (reached = r))
    let open!: () => void
    const gate = new Promise<void>((r) => (open = r))
    // The slow writer has read the checkpoints and scanned its records when it writes its first file; the fast one registers then.
    let writes = 0
    const slow = {
      ...s.deps,
      io: {
        ...s.deps.io,
        write: async (...args: Parameters<typeof s.deps.io.write>) => {
          if (writes++ === 0) {
            reached()
            await gate
          }
          return s.deps.io.write(...args)
        },
      },
    }
    const recs = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => ({ topic: 'clicks', partition: 0, offset: from + i, value: click(from + i) }))
    const slowRun = writeBatch(slow, kafkaEvent(recs(20, 60)), { writerId: 'slow' })
    await reachedP
    const fast = await writeBatch(s.deps, kafkaEvent(recs(20, 40)), { writerId: 'fast' })
    open()
    const late = await slowRun
    expect(fast.outcome).toBe('registered')
    expect(late.outcome).toBe('registered')
    // Attempt one wrote the lane's file and was fenced; attempt two wrote the records past the new checkpoint the present way.
    expect(writes).toBe(2)
    expect(late.recordsScanned).toBe(0)
    expect(late.tables.find((t) => t.table === 'sl.clicks')!.rows).toBe(20)
    const ids = (await registeredRows(s)).get('sl.clicks')!.map((r) => Number(r.id))
    expect(ids.sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i))
    expect(await checkpoints(s.control)).toMatchObject({ 'clicks-0': '60' })
  }, 120_000)

  it('a table the lane cannot load is left to prepare: loaded again there, and not at all when every record is below its checkpoint', async () => {
    const s = await writerSetup({ FLOE_ROUTES: ROUTES })
    await writeBatch(s.deps, kafkaEvent(seed()), { writerId: 'setup' })
    const catalog = s.deps.catalog
    let loads = 0
    let failures = 0
    const flaky = {
      ...s.deps,
      catalog: Object.assign(Object.create(Object.getPrototypeOf(catalog) as object) as typeof catalog, catalog, {
        loadTable: async (id: Parameters<typeof catalog.loadTable>[0]) => {
          if (loads++ < failures) throw new Error('catalog briefly unavailable')
          return catalog.loadTable(id)
        },
      }),
    }
    const recs = Array.from({ length: 10 }, (_, i) => ({ topic: 'clicks', partition: 0, offset: 20 + i, value: click(20 + i) }))
    failures = 1
    const r = await writeBatch(flaky, kafkaEvent(recs), { writerId: 'w1' })
    expect([r.outcome, r.recordsScanned, r.tables.find((t) => t.table === 'sl.clicks')?.rows, loads]).toEqual(['registered', 0, 10, 2])
    // Delivered again: every record is below the checkpoint, so a failing load costs nothing.
    ;[loads, failures] = [0, Infinity]
    const again = await writeBatch(flaky, kafkaEvent(recs), { writerId: 'w2' })
    expect([again.outcome, again.belowCheckpoint]).toEqual(['nothing-new', 10])
  }, 120_000)

  it('batches at once in one process never share a scanner (the one kept from the last batch goes to one of them)', async () => {
    const s = await writerSetup({ FLOE_ROUTES: ROUTES })
    const part = (partition: number, from: number, n: number): EventRecord[] =>
      Array.from({ length: n }, (_, k) => ({ topic: 'clicks', partition, offset: from + k, value: click(1000 * partition + from + k) }))
    // The first batch creates the table and leaves its built scanner for the next.
    await writeBatch(s.deps, kafkaEvent(part(0, 0, 5)), { writerId: 'w0' })
    for (let round = 0; round < 3; round++) {
      const results = await Promise.all([0, 1, 2].map((p) => writeBatch(s.deps, kafkaEvent(part(p, 5 + 50 * round, 50)), { writerId: `w${round}-${p}` })))
      for (const r of results) expect(r.recordsScanned).toBe(50)
    }
    const rows = (await registeredRows(s)).get('sl.clicks')!
    const expected = [...part(0, 0, 5), ...[0, 1, 2].flatMap((round) => [0, 1, 2].flatMap((p) => part(p, 5 + 50 * round, 50)))].map((r) => (r.value as { id: number }).id)
    expect(rows.map((r) => Number(r.id as bigint)).sort((a, b) => a - b)).toEqual(expected.sort((a, b) => a - b))
  }, 60_000)

  it('keeps the last built scanner for the next lane of the same table, and gives it to one lane only', async () => {
    const s = await writerSetup({ FLOE_ROUTES: ROUTES })
    await writeBatch(s.deps, kafkaEvent(Array.from({ length: 5 }, (_, i) => ({ topic: 'clicks', partition: 0, offset: i, value: click(i) }))), { writerId: 'w0' })
    const state = (await new TableSet(s.deps).preload('sl.clicks'))!
    const first = existingLane(s.deps, state)!
    expect(first.scanner.add(Buffer.from(JSON.stringify(click(1))))).toBe(true)
    first.scanner.build()
    first.stow!()
    const [second, third] = [existingLane(s.deps, state)!, existingLane(s.deps, state)!]
    expect(second.scanner).toBe(first.scanner)
    expect(third.scanner).not.toBe(first.scanner)
    // Another table's lane empties the slot: nothing is kept past the next lane asked for.
    second.scanner.build()
    second.stow!()
    await writeBatch(s.deps, kafkaEvent(Array.from({ length: 5 }, (_, i) => ({ topic: 'where', partition: 0, offset: i, value: click(i) }))), { writerId: 'w1' })
    const where = existingLane(s.deps, (await new TableSet(s.deps).preload('sl.where'))!)!
    expect(existingLane(s.deps, state)!.scanner).not.toBe(first.scanner)
    expect(where.scanner).not.toBe(first.scanner)
  }, 60_000)

  it('is true or false; anything else fails at cold start naming the key', () => {
    const base = { FLOE_WAREHOUSE: 's3://bucket/warehouse' }
    expect(loadConfig({}, base).writerScan).toBe(true)
    expect(loadConfig({}, { ...base, FLOE_WRITER_SCAN: 'false' }).writerScan).toBe(false)
    expect(() => loadConfig({}, { ...base, FLOE_WRITER_SCAN: 'yes' })).toThrow(ConfigError)
    expect(() => loadConfig({}, { ...base, FLOE_WRITER_SCAN: 'yes' })).toThrow(/FLOE_WRITER_SCAN/)
  })
})
