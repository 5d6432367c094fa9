/**
 * "A record can only hurt itself" (DESIGN.md invariant 9), case by case from issue 15, through
 * the real writer handler (createWriterHandler) on DynamoDB Local + s3rver: each hostile record
 * is a dead letter whose reason names the field, the limit and the value; the batch registers;
 * every other record lands; no table its route does not allow changes.
 */
import { mkdtemp, readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createWriterHandler } from '../../functions/writer.js'
import { loadConfig } from '../../lib/config.js'
import type { WriterSummary } from '../../lib/writer/index.js'
import { ConfigError } from '../../lib/errors.js'
import { currentSchema } from '../../lib/iceberg/metadata.js'
import { checkpoints, kafkaEvent, listAll, registered, writerSetup, type EventRecord, type WriterSetup } from './support.js'
import { deadLines, lambdaContext, registeredRows } from './readback.js'

async function run(s: WriterSetup, records: EventRecord[], id = 'req-1'): Promise<WriterSummary> {
  const handler = createWriterHandler({ ...s.deps, router: undefined })
  return (await handler(kafkaEvent(records), lambdaContext(id, 300_000))) as WriterSummary
}

const ev = (offset: number, value: unknown, partition = 0, topic = 'events'): EventRecord => ({ topic, partition, offset, value })

describe('hostile records through the writer handler', () => {
  it("a value field named '_kafka' in a table with kafkaMetadata is a dead letter, never a second _kafka field", async () => {
    const s = await writerSetup({
      FLOE_ROUTES: JSON.stringify({ defaultNamespace: 'db', routes: [{ table: 'events' }], tableDefaults: { kafkaMetadata: true } }),
    })
    const out = await run(s, [ev(0, { _kafka: 'x', a: 1 }), ev(1, { a: 2 }), ev(2, { a: 3, _kafka: { offset: 'forged' } })])
    expect(out).toMatchObject({ outcome: 'registered', deadLetters: 2, tables: [{ table: 'db.events', rows: 1 }] })
    const dead = await deadLines(s)
    expect(dead.map((d) => d.offset).sort()).toEqual(['0', '2'])
    expect(dead[0]!.reason).toMatch(/field '_kafka' is reserved for the Kafka metadata column/)
    const schema = currentSchema((await s.catalog.loadTable({ namespace: 'db', name: 'events' })).metadata)
    expect(schema.fields.filter((f) => f.name === '_kafka')).toHaveLength(1)
    // Later batches keep working.
    expect(await run(s, [ev(3, { a: 4 })], 'req-2')).toMatchObject({ outcome: 'registered', deadLetters: 0, tables: [{ rows: 1 }] })
  })

  it('a value nested 5,000 deep and a 100,000-key record are dead letters naming the limit; the rest of the batch lands', async () => {
    // The 100,000-key record is 1.5 MB: past the default FLOE_MAX_RECORD_KB, so raise it to reach the column limit.
    const s = await writerSetup({ FLOE_ROUTES: JSON.stringify({ defaultNamespace: 'db', routes: [{ table: 'events' }] }), FLOE_MAX_RECORD_KB: '2048' })
    // JSON text built by hand: JSON.stringify itself would recurse 5,000 deep.
    const deep = `{"a":${'['.repeat(5_000)}1${']'.repeat(5_000)}}`
    const wide = `{${Array.from({ length: 100_000 }, (_, i) => `"k${i}":${i}`).join(',')}}`
    const started = Date.now()
    // Just inside the limit: 30 levels of lists and structs go through inference, Arrow and Parquet.
    const inside = `{"b":${'[{"c":'.repeat(15)}1${'}]'.repeat(15)}}`
    const out = await run(s, [ev(0, deep), ev(1, { a: 1 }), ev(2, wide), ev(3, { a: 2 }), ev(4, inside)])
    const elapsed = Date.now() - started
    expect(out).toMatchObject({ outcome: 'registered', deadLetters: 2, tables: [{ table: 'db.events', rows: 3 }] })
    const dead = await deadLines(s)
    expect(dead.find((d) => d.offset === '0')!.reason).toMatch(/^field 'a\[0\]\[0\]\[0\][[\]0]*…\(94 characters\)' nests deeper than FLOE_MAX_DEPTH=32$/)
    expect(dead.find((d) => d.offset === '2')!.reason).toMatch(/record has more than FLOE_MAX_COLUMNS=1000 columns \(the first past the limit: 'k\d+'\)/)
    // Not a timing assertion (benchmarks hold those): a sanity bound far above the ~0.3 s it takes,
    // far below the minutes the 100,000-column Parquet encoding took.
    expect(elapsed).toBeLessThan(30_000)
  })

  it('long field names, oversized values, lone surrogates and overflowing numbers are dead letters', async () => {
    const s = await writerSetup({ FLOE_ROUTES: JSON.stringify({ defaultNamespace: 'db', routes: [{ table: 'events' }] }), FLOE_MAX_RECORD_KB: '64' })
    const out = await run(s, [
      ev(0, { ['n'.repeat(300)]: 1 }),
      ev(1, { a: 'x'.repeat(70_000) }),
      ev(2, '{"a":"\\ud800"}'),
      ev(3, '{"a":1e400}'),
      ev(4, { a: 5 }),
    ])
    expect(out).toMatchObject({ outcome: 'registered', deadLetters: 4, tables: [{ rows: 1 }] })
    const reasons = Object.fromEntries((await deadLines(s)).map((d) => [d.offset, d.reason]))
    expect(reasons['0']).toMatch(/field name 'n{80}…\(300 characters\)' at '\(top\)' is 300 characters, more than FLOE_MAX_FIELD_NAME_LENGTH=255/)
    expect(reasons['1']).toMatch(/record value is \d+ bytes, more than FLOE_MAX_RECORD_KB=64/)
    expect(reasons['2']).toMatch(/field 'a' holds a string that is not valid Unicode/)
    expect(reasons['3']).toMatch(/field 'a' is Infinity: a JSON number that overflows a double/)
  })

  it('tableFromField cannot reach a statically routed table, another namespace, or a name past the limit', async () => {
    const s = await writerSetup({
      FLOE_ROUTES: JSON.stringify({
        defaultNamespace: 'shop',
        routes: [
          { topic: 'orders', table: 'orders' },
          { topic: 'events', tableFromField: 'type' },
          { topic: 'scoped', tableFromField: 'type', namespace: 'dyn', prefix: 'ev_', allow: 'ev_[a-z]{1,10}' },
        ],
      }),
    })
    await run(s, [ev(0, { id: 1, total: 9.5 }, 0, 'orders')], 'setup')
    const before = currentSchema((await s.catalog.loadTable({ namespace: 'shop', name: 'orders' })).metadata)
    const out = await run(s, [
      ev(0, { type: 'ORDERS', id: 'x', evil: true }),
      ev(1, { type: 'other.orders', id: 2 }),
      ev(2, { type: 'n'.repeat(1_000) }),
      ev(3, { type: 'clicks', a: 1 }),
      ev(0, { type: 'page1' }, 0, 'scoped'),
      ev(1, { type: 'page' }, 0, 'scoped'),
    ])
    expect(out.tables.map((t) => [t.table, t.rows]).sort()).toEqual([
      ['dyn.ev_page', 1],
      ['shop.clicks', 1],
      ['shop.other_orders', 1],
    ])
    const reasons = Object.fromEntries((await deadLines(s)).map((d) => [`${d.topic}/${d.offset}`, d.reason]))
    expect(reasons['events/0']).toMatch(/value "ORDERS" names shop.orders, a statically routed table that dynamic routes may not write/)
    expect(reasons['events/2']).toMatch(/longer than FLOE_MAX_TABLE_NAME_LENGTH=128/)
    expect(reasons['scoped/0']).toMatch(/makes table dyn.ev_page1, which the route's allow pattern "ev_\[a-z\]\{1,10\}" does not match/)
    const after = (await s.catalog.loadTable({ namespace: 'shop', name: 'orders' })).metadata
    expect(currentSchema(after)).toEqual(before)
    expect((await registered(s.control)).get('shop.orders')!.batches.reduce((n, b) => n + b.recordCount, 0)).toBe(1)
  })

  it('a route regex that backtracks exponentially in JavaScript runs in linear time; one RE2 cannot run is refused at config load', async () => {
    const s = await writerSetup({
      FLOE_ROUTES: JSON.stringify({ defaultNamespace: 'db', routes: [{ topic: 'events', field: 'name', match: { 'db.as': '^(a+)+$' } }], unrouted: 'drop' }),
    })
    const out = await run(s, [ev(0, { name: `${'a'.repeat(40)}!` }), ev(1, { name: 'aaaa' }), ev(2, { name: `${'a'.repeat(100_000)}!` })])
    expect(out).toMatchObject({ outcome: 'registered', dropped: 2, tables: [{ table: 'db.as', rows: 1 }] })
    const routes = JSON.stringify({ routes: [{ field: 'n', match: { t: '(?<=a)b' } }] })
    expect(() => loadConfig({}, { FLOE_WAREHOUSE: 'file:///tmp/x', FLOE_ROUTES: routes })).toThrow(ConfigError)
    expect(() => loadConfig({}, { FLOE_WAREHOUSE: 'file:///tmp/x', FLOE_ROUTES: routes })).toThrow(/FLOE_ROUTES: \$\.routes\[0\]: invalid regular expression "\(\?<=a\)b" for RE2/)
  })

  it('a 950-character identity partition value is a dead letter; others of the batch land', async () => {
    const s = await writerSetup({
      FLOE_ROUTES: JSON.stringify({ defaultNamespace: 'db', routes: [{ table: 'events' }], tableDefaults: { partitionBy: ['region'] } }),
    })
    const out = await run(s, [ev(0, { region: 'eu', a: 1 }), ev(1, { region: 'r'.repeat(950), a: 2 }), ev(2, { region: 'us', a: 3 })])
    expect(out).toMatchObject({ outcome: 'registered', deadLetters: 1, tables: [{ rows: 2, files: 2 }] })
    expect((await deadLines(s))[0]!.reason).toMatch(/partition region value "r{80}…\(950 characters\)" is 957 bytes in the file path, more than FLOE_MAX_PARTITION_VALUE_BYTES=256/)
    for (const p of await listAll(s.io, `${s.warehouse}/`)) expect(Buffer.byteLength(p.replace(/^s3:\/\/[^/]+\//, ''))).toBeLessThanOrEqual(1_024)
  })

  it('on a file:// warehouse an identity partition value "/../../../../../escaped" stays inside the table location', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'floe-hostile-'))
    const s = await writerSetup({
      FLOE_WAREHOUSE: `file://${dir}/wh`,
      FLOE_ROUTES: JSON.stringify({ defaultNamespace: 'db', routes: [{ table: 'events' }], tableDefaults: { partitionBy: ['p'] } }),
      // The flat layout: the partition path right under data/ is the fewest levels to escape from.
      FLOE_OBJECT_STORAGE_LAYOUT: 'false',
    })
    // Five levels up from <data>/p=… would be the temp dir itself, beside the warehouse.
    const escape = '/../../../../../escaped'
    const out = await run(s, [ev(0, { p: escape, a: 1 }), ev(1, { p: '..', a: 2 })])
    expect(out).toMatchObject({ outcome: 'registered', deadLetters: 0, tables: [{ rows: 2 }] })
    expect(await readdir(dir)).toEqual(['wh'])
    expect((await readdir(join(dir, 'wh/db.db/events/data'))).sort()).toEqual(['p=%2F..%2F..%2F..%2F..%2F..%2Fescaped', 'p=..'])
    const rows = (await registeredRows(s)).get('db.events')!
    expect(rows.map((r) => r.p).sort()).toEqual(['..', escape])
    const files = [...(await registered(s.control)).get('db.events')!.files.values()].flat().map((f) => f.filePath)
    for (const f of files) expect(f).toMatch(new RegExp(`^file://${dir}/wh/db\\.db/events/data/p=[^/]+/[^/]+\\.parquet$`))
  })

  it('a poison value in the batch that creates a table does not decide its type; inexact numbers are dead letters', async () => {
    const s = await writerSetup({
      FLOE_ROUTES: JSON.stringify({ defaultNamespace: 'db', routes: [{ table: 'events' }], tableDefaults: { partitionBy: ['day(ts)'] } }),
    })
    const records = Array.from({ length: 500 }, (_, i) => ev(i, { ts: '2024-05-01T10:00:00Z', n: i % 2 ? i + 0.5 : i }))
    records[7] = ev(7, { ts: 'yesterday-ish', n: 1 })
    records[8] = ev(8, '{"ts":"2024-05-01T10:00:00Z","n":9223372036854775807}')
    records[9] = ev(9, '{"ts":"2024-05-01T10:00:00Z","n":123456789012345678901234567890.0e370}')
    const out = await run(s, records)
    expect(out).toMatchObject({ outcome: 'registered', deadLetters: 3, tables: [{ rows: 497 }] })
    const schema = currentSchema((await s.catalog.loadTable({ namespace: 'db', name: 'events' })).metadata)
    expect(schema.fields.map((f) => [f.name, f.type])).toEqual([
      ['ts', 'timestamptz'],
      ['n', 'double'],
    ])
    const reasons = Object.fromEntries((await deadLines(s)).map((d) => [d.offset, d.reason]))
    expect(reasons['7']).toMatch(/field 'ts' expected timestamptz, got string 'yesterday-ish'/)
    expect(reasons['8']).toMatch(/field 'n' expected double \(exactly\), got bigint 9223372036854775807/)
    expect(reasons['9']).toMatch(/field 'n' expected double \(exactly\)/)
  })

  it('past FLOE_MAX_TABLES_PER_BATCH a partition stops at the first record that needs another table; the others go on; the retry takes the rest', async () => {
    const s = await writerSetup({ FLOE_ROUTES: JSON.stringify({ routes: [{ tableFromField: 'type', namespace: 'dyn' }] }), FLOE_MAX_TABLES_PER_BATCH: '3' })
    const records = [...Array.from({ length: 6 }, (_, i) => ev(i, { type: `t${i % 5}` })), ev(0, { type: 't0' }, 1), ev(1, { type: 't9' }, 1)]
    await expect(run(s, records)).rejects.toThrow(
      'the batch reaches more than FLOE_MAX_TABLES_PER_BATCH=3 tables: 3 tables registered, events-0 from offset 3, events-1 from offset 1 wait for the mapping\'s next delivery',
    )
    expect(await checkpoints(s.control)).toEqual({ 'events-0': '3', 'events-1': '1' })
    const first = await registered(s.control)
    expect([...first.keys()].sort()).toEqual(['dyn.t0', 'dyn.t1', 'dyn.t2'])
    // The retry drops what is registered: t3, t4 and t0 fill the limit again, events-1 waits once more.
    await expect(run(s, records, 'req-2')).rejects.toThrow(/3 tables registered, events-1 from offset 1 wait/)
    expect(await checkpoints(s.control)).toEqual({ 'events-0': '6', 'events-1': '1' })
    expect(await run(s, records, 'req-3')).toMatchObject({ outcome: 'registered', belowCheckpoint: 7, deadLetters: 0 })
    const all = await registered(s.control)
    expect([...all.keys()].sort()).toEqual(['dyn.t0', 'dyn.t1', 'dyn.t2', 'dyn.t3', 'dyn.t4', 'dyn.t9'])
    let total = 0
    for (const [, r] of all) total += r.batches.reduce((n, b) => n + b.recordCount, 0)
    expect(total).toBe(8)
    expect(await deadLines(s)).toHaveLength(0)
    expect(await checkpoints(s.control)).toEqual({ 'events-0': '6', 'events-1': '2' })
  })
})
