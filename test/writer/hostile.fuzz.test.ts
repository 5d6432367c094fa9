/**
 * Property: whatever a producer sends — deep, wide, huge, odd names, odd numbers, odd UTF-8,
 * colliding names, hostile dynamic table names — the real writer handler (DynamoDB Local +
 * s3rver) returns, every record is in exactly one place (a row of its table, read back with
 * hyparquet through its `_kafka.offset`, or a dead letter), checkpoints advance past the batch,
 * and the statically routed table's schema and rows do not change.
 *
 * Bounded for `npm test` (FUZZ_RUNS, default 12 batches of up to 24 records, ~1 minute). The
 * longer run: `FUZZ_RUNS=300 npx vitest run test/writer/hostile.fuzz.test.ts` (docs/writer.md).
 */
import * as fc from 'fast-check'
import { parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import { beforeAll, describe, expect, it } from 'vitest'
import { createWriterHandler } from '../../functions/writer.js'
import { dataFileFromJSON } from '../../lib/iceberg/datafile-json.js'
import { loadBatchFiles, listPendingTables, readPendingBatches } from '../../lib/control/pending.js'
import { currentSchema } from '../../lib/iceberg/metadata.js'
import type { Schema } from '../../lib/schema/types.js'
import { checkpoints, kafkaEvent, writerSetup, type EventRecord, type WriterSetup } from './support.js'
import { deadLines, lambdaContext } from './readback.js'

const RUNS = Number(process.env.FUZZ_RUNS ?? 12)
const KAFKA = '_kafka' // the metadata column

const ROUTES = {
  defaultNamespace: 'shop',
  routes: [
    { topic: 'orders', table: 'orders' },
    { topicPattern: '^fuzz-', tableFromField: 'type', namespace: 'dyn' },
  ],
  tableDefaults: { kafkaMetadata: ['topic', 'offset'] },
}

/** Table names a producer might try: static ones, collisions after sanitising, junk, long ones. */
const tableName = fc.oneof(
  fc.constantFrom('orders', 'ORDERS', 'shop.orders', 'Orders!!', '..', '', '_', ' ', 'a.b', 'ü', '🙂', 'events', 'Events', 'ev-1', 'x'.repeat(200)),
  fc.string({ maxLength: 12 }),
  fc.integer({ min: 0, max: 5 }).map((n) => `t${n}`),
)

/** Field names: ordinary, colliding with the metadata column or each other, dotted, empty, long, odd Unicode. */
const fieldName = fc.oneof(
  fc.constantFrom('a', 'A', 'b', 'a.b', '_kafka', 'type_', '', ' ', 'ts', 'n', 'ü', '\u0000', 'f'.repeat(300)),
  fc.string({ maxLength: 6 }),
)

/** Numbers as JSON text: exact longs, past int64, past a double, overflow and underflow, negative zero. */
const numberText = fc.oneof(
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
  fc.constantFrom('1e400', '-1e400', '1e-400', '9223372036854775807', '-9223372036854775808', '18446744073709551616', '9007199254740993', '1.0', '-0', '0.1', '123456789012345678901234567890.5'),
)

const stringText = fc.oneof(
  fc.string({ maxLength: 10 }).map((s) => JSON.stringify(s)),
  fc.constantFrom('"\\ud800"', '"\\udfff x"', '"2024-05-01T10:00:00Z"', '"yesterday-ish"', '"\\u0000"', '"🙂"'),
)

const scalarText = fc.oneof(numberText, stringText, fc.constantFrom('true', 'false', 'null', '{}', '[]'))

/** A JSON value as text (so it can hold what JSON.stringify would never write). */
const valueText: fc.Arbitrary<string> = fc.letrec<{ v: string }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    scalarText,
    fc.array(tie('v'), { maxLength: 3 }).map((xs) => `[${xs.join(',')}]`),
    fc.array(fc.tuple(fieldName, tie('v')), { maxLength: 3 }).map((kv) => `{${kv.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
  ),
})).v

const withType = (type: string | undefined, body: string) => (type === undefined ? body : body === '' ? `"type":${JSON.stringify(type)}` : `"type":${JSON.stringify(type)},${body}`)

/** One hostile record value (text or raw bytes). */
const hostileValue: fc.Arbitrary<string | Uint8Array> = fc.oneof(
  // Ordinary-looking records with odd fields.
  fc.tuple(fc.option(tableName, { nil: undefined }), fc.array(fc.tuple(fieldName, valueText), { maxLength: 5 })).map(
    ([t, kv]) => `{${withType(t, kv.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(','))}}`,
  ),
  // Deep.
  fc.tuple(tableName, fc.integer({ min: 1, max: 3_000 })).map(([t, d]) => `{${withType(t, `"deep":${'['.repeat(d)}1${']'.repeat(d)}`)}}`),
  // Wide.
  fc.tuple(tableName, fc.integer({ min: 1, max: 3_000 })).map(([t, n]) => `{${withType(t, Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(','))}}`),
  // Huge.
  fc.tuple(tableName, fc.integer({ min: 1_000, max: 80_000 })).map(([t, n]) => `{${withType(t, `"blob":"${'x'.repeat(n)}"`)}}`),
  // Not an object, not JSON, not UTF-8.
  fc.constantFrom('[]', '1', 'null', '"s"', '{', '{"type":"t1",}'),
  fc.uint8Array({ minLength: 1, maxLength: 8 }).map((b) => Uint8Array.from([0xff, ...b])),
)

async function rowsOf(s: WriterSetup, topic: string): Promise<Map<string, number>> {
  const landed = new Map<string, number>()
  for (const table of await listPendingTables(s.control, 'test')) {
    const batches = (await readPendingBatches(s.control, 'test', table)).filter((b) => b.ranges.some((r) => r.topic === topic))
    for (const file of [...(await loadBatchFiles(s.control, 'test', batches, dataFileFromJSON)).values()].flat()) {
      const bytes = await s.io.read(file.filePath)
      const rows = (await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer, compressors, columns: [KAFKA] })) as Record<
        string,
        { topic: string; offset: bigint }
      >[]
      for (const row of rows) {
        const meta = row[KAFKA]!
        if (meta.topic === topic) landed.set(String(meta.offset), (landed.get(String(meta.offset)) ?? 0) + 1)
      }
    }
  }
  return landed
}

describe('the writer handler against arbitrary hostile records', () => {
  let s: WriterSetup
  let ordersSchema: Schema
  beforeAll(async () => {
    s = await writerSetup({ FLOE_ROUTES: JSON.stringify(ROUTES), FLOE_MAX_RECORD_KB: '64' })
    const handler = createWriterHandler({ ...s.deps, router: undefined })
    await handler(kafkaEvent([{ topic: 'orders', partition: 0, offset: 0, value: { id: 1, total: 2.5 } }]), lambdaContext('setup'))
    ordersSchema = currentSchema((await s.catalog.loadTable({ namespace: 'shop', name: 'orders' })).metadata)
  })

  it('returns, puts every record in exactly one place, and leaves the static table alone', async () => {
    let run = 0
    const seen = { rows: 0, dead: 0 }
    await fc.assert(
      fc.asyncProperty(fc.array(hostileValue, { minLength: 1, maxLength: 24 }), async (values) => {
        const topic = `fuzz-${run++}`
        const records: EventRecord[] = values.map((value, i) => ({ topic, partition: 0, offset: i * 2 + 5, value }))
        const handler = createWriterHandler({ ...s.deps, router: undefined })
        const out = (await handler(kafkaEvent(records), lambdaContext(`fuzz-${run}`))) as { recordsIn: number }
        expect(out.recordsIn).toBe(records.length)

        const landed = await rowsOf(s, topic)
        const dead = new Set((await deadLines(s)).filter((d) => d.topic === topic).map((d) => d.offset))
        for (const r of records) {
          const offset = String(r.offset)
          const rows = landed.get(offset) ?? 0
          // Exactly one place: one row, or a dead letter — never both, never neither.
          expect({ offset, rows, dead: dead.has(offset) }).toEqual({ offset, rows: dead.has(offset) ? 0 : 1, dead: rows === 0 })
        }
        seen.rows += landed.size
        seen.dead += dead.size
        expect([...landed.keys()].every((o) => records.some((r) => String(r.offset) === o))).toBe(true)
        expect((await checkpoints(s.control))[`${topic}-0`]).toBe(String(records.at(-1)!.offset as number + 1))
        const orders = await s.catalog.loadTable({ namespace: 'shop', name: 'orders' })
        expect(currentSchema(orders.metadata)).toEqual(ordersSchema)
        const ordersBatches = await readPendingBatches(s.control, 'test', 'shop.orders')
        expect(ordersBatches.reduce((n, b) => n + b.recordCount, 0)).toBe(1)
      }),
      { numRuns: RUNS, endOnFailure: true },
    )
    // Not vacuous: the generators make records that land and records that are dead letters.
    expect(seen.rows).toBeGreaterThan(0)
    expect(seen.dead).toBeGreaterThan(0)
  }, 600_000)
})
