/**
 * Schema evolution through the real writer path (writeBatch on DynamoDB Local + s3rver, the
 * DynamoDB catalog, a Confluent registry on loopback), from every source of a new schema:
 * Avro writer-schema versions, JSON records, Kafka Connect envelopes, Glue (its registry API has
 * no local server: GetSchemaVersion is answered by aws-sdk-client-mock). What lands is read back
 * with hyparquet, not Floe's code: promoted types in the files' Parquet schema, every value exact.
 */
import { GetSchemaVersionCommand, GlueClient } from '@aws-sdk/client-glue'
import { mockClient } from 'aws-sdk-client-mock'
import { parquetMetadataAsync, parquetReadObjects, type FileMetaData } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCommitter } from '../../lib/commit/committer.js'
import { confluentFrame } from '../../lib/codec/confluent.js'
import { glueFrame } from '../../lib/codec/glue.js'
import { createDecoders } from '../../lib/codec/index.js'
import { currentSchema } from '../../lib/iceberg/metadata.js'
import type { NestedField, Schema, StructType } from '../../lib/schema/types.js'
import { indexByName } from '../../lib/schema/walk.js'
import { writeBatch } from '../../lib/writer/pipeline.js'
import type { WriterCatalog } from '../../lib/writer/types.js'
import { readTable } from '../chaos/verify.js'
import { avroEncode } from '../codec/avro-fixtures.js'
import { testAws } from '../helpers/aws.js'
import { startTestRegistry, type TestRegistry } from '../helpers/registry.js'
import { deadLetterLines, kafkaEvent, registered, writerSetup, type WriterSetup } from './support.js'

const routes = (tables: Record<string, unknown> = {}) => JSON.stringify({ defaultNamespace: 'db', routes: [{ topic: 'payments', table: 'payments' }], tables })
const id = { namespace: 'db', name: 'payments' }

let registry: TestRegistry
beforeAll(async () => {
  registry = await startTestRegistry()
})
afterAll(async () => {
  await registry.close()
})

/** An event of raw values (Avro frames, envelopes as text), by partition and offset. */
function rawEvent(values: { partition?: number; offset: number; bytes: Uint8Array | string }[]): Record<string, unknown> {
  const event = kafkaEvent(values.map((v) => ({ topic: 'payments', partition: v.partition ?? 0, offset: v.offset, value: 'x' }))) as { records: Record<string, { partition: number; offset: number; value: string }[]> }
  const byKey = new Map(values.map((v) => [`${v.partition ?? 0}:${v.offset}`, v.bytes]))
  for (const list of Object.values(event.records)) for (const r of list) r.value = Buffer.from(byKey.get(`${r.partition}:${r.offset}`)!).toString('base64')
  return event
}

/** Two's-complement big-endian bytes of an unscaled decimal (Avro's decimal encoding). */
function decBytes(unscaled: bigint): Buffer {
  let hex = BigInt.asUintN(128, unscaled).toString(16).padStart(32, '0')
  while (hex.length > 2 && ((hex.startsWith('00') && parseInt(hex[2]!, 16) < 8) || (hex.startsWith('ff') && parseInt(hex[2]!, 16) >= 8))) hex = hex.slice(2)
  return Buffer.from(hex, 'hex')
}

interface ReadBack {
  rows: Record<string, unknown>[]
  /** Per file: Parquet physical (and decimal) type by Iceberg field id. */
  files: { rows: Record<string, unknown>[]; types: Map<number, string> }[]
}

/** Every registered row of db.payments, read with hyparquet, in file order (by first offset). */
async function readBack(s: WriterSetup): Promise<ReadBack> {
  const reg = (await registered(s.control)).get('db.payments')!
  const batches = reg.batches.sort((a, b) => Number(a.ranges[0]!.firstOffset - b.ranges[0]!.firstOffset))
  const files: ReadBack['files'] = []
  for (const batch of batches) {
    for (const file of reg.files.get(batch.batchId)!) {
      const bytes = await s.io.read(file.filePath)
      const buf = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
      const metadata: FileMetaData = await parquetMetadataAsync(buf)
      const types = new Map<number, string>()
      for (const e of metadata.schema) if (e.field_id !== undefined && e.type) types.set(e.field_id, e.converted_type === 'DECIMAL' ? `${e.type} decimal(${e.precision}, ${e.scale})` : e.type)
      // Dates as epoch days and timestamps as epoch micros, exactly (hyparquet's default is a millisecond Date).
      const parsers = { timestampFromMicroseconds: (us: bigint) => us, dateFromDays: (days: number) => days }
      files.push({ rows: (await parquetReadObjects({ file: buf, compressors, parsers })) as Record<string, unknown>[], types })
    }
  }
  return { rows: files.flatMap((f) => f.rows), files }
}

/**
 * Commit what is pending (the real committer), then every row of the table's current snapshot,
 * found by an independent reader (raw DynamoDB, plain avsc for the manifests) and read with hyparquet.
 */
async function commitAndScan(s: WriterSetup): Promise<Record<string, unknown>[]> {
  const run = await runCommitter({ control: s.control, catalog: s.catalog, io: s.io, config: s.deps.config })
  expect(run.failures).toBe(0)
  const aws = testAws()
  const table = (await readTable(aws.ddb, aws.s3, s.deps.config.catalogTable, 'db', 'payments'))!
  const rows: Record<string, unknown>[] = []
  for (const path of table.dataFiles) {
    const bytes = await s.io.read(path)
    rows.push(...((await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer, compressors })) as Record<string, unknown>[]))
  }
  return rows
}

const tableSchema = async (s: WriterSetup) => currentSchema((await s.catalog.loadTable(id)).metadata)
const typeAt = (schema: StructType, name: string) => indexByName(schema).get(name)
const idAt = (schema: StructType, name: string) => indexByName(schema).get(name)!.id

const customer = (cidType: string, scoreType: string, balPrecision: number, extra: unknown[] = []) => ({
  type: 'record',
  name: 'Customer',
  fields: [{ name: 'cid', type: cidType }, { name: 'name', type: 'string' }, { name: 'score', type: scoreType }, { name: 'bal', type: { type: 'bytes', logicalType: 'decimal', precision: balPrecision, scale: 2 } }, ...extra],
})
const item = (nType: string, extra: unknown[] = []) => ({ type: 'record', name: 'Item', fields: [{ name: 'n', type: nType }, ...extra] })
const paymentV1 = {
  type: 'record',
  name: 'Payment',
  namespace: 'shop',
  fields: [
    { name: 'id', type: 'long' },
    { name: 'qty', type: 'int' },
    { name: 'price', type: 'float' },
    { name: 'amount', type: { type: 'bytes', logicalType: 'decimal', precision: 9, scale: 2 } },
    { name: 'customer', type: customer('int', 'float', 9) },
    { name: 'items', type: { type: 'array', items: item('int') } },
    { name: 'tags', type: { type: 'map', values: 'int' } },
    { name: 'note', type: 'string' },
  ],
}
/** v2 widens every int/float/decimal at every depth, adds fields at the top and nested, and drops `note`. */
const paymentV2 = {
  ...paymentV1,
  fields: [
    { name: 'id', type: 'long' },
    { name: 'qty', type: 'long' },
    { name: 'price', type: 'double' },
    { name: 'amount', type: { type: 'bytes', logicalType: 'decimal', precision: 18, scale: 2 } },
    { name: 'customer', type: customer('long', 'double', 18, [{ name: 'email', type: ['null', 'string'], default: null }]) },
    { name: 'items', type: { type: 'array', items: item('long', [{ name: 'sku', type: ['null', 'string'], default: null }]) } },
    { name: 'tags', type: { type: 'map', values: 'long' } },
    { name: 'added', type: ['null', 'string'], default: null },
  ],
}
const v1Datum = (n: number) => ({ id: BigInt(n), qty: n, price: 1.5, amount: decBytes(1234n), customer: { cid: n, name: `c${n}`, score: 2.5, bal: decBytes(99n) }, items: [{ n }], tags: { k: n }, note: `note ${n}` })
const v2Datum = (n: number) => ({
  id: BigInt(n),
  qty: 5_000_000_000n + BigInt(n),
  price: 0.1,
  amount: decBytes(123_456_789_012_345n), // 1234567890123.45: 15 digits, beyond decimal(9, 2)
  customer: { cid: 6_000_000_000n, name: `c${n}`, score: 0.2, bal: decBytes(987_654_321_012_345n), email: { string: `c${n}@example.com` } },
  items: [{ n: 7_000_000_000n, sku: { string: 'sku-1' } }],
  tags: { k: 8_000_000_000n },
  added: { string: 'new' },
})

describe('schema evolution from Avro writer-schema versions (Confluent registry)', () => {
  it('promotes int → long, float → double and decimal precision at the top, in structs, list elements and map values; adds nested fields; relaxes a dropped field', async () => {
    // With a `_kafka` column, so the independent table reader (test/chaos/verify.ts) can identify the committed rows.
    const s = await writerSetup({ FLOE_ROUTES: routes({ payments: { kafkaMetadata: ['topic', 'partition', 'offset'] } }), FLOE_VALUE_FORMAT: 'avro-confluent', FLOE_SCHEMA_REGISTRY_URL: registry.url })
    const subject = `payments-${randomUUID()}-value`
    const v1 = await registry.register(subject, paymentV1)
    const v2 = await registry.register(subject, paymentV2)
    const first = await writeBatch(s.deps, rawEvent([0, 1].map((o) => ({ offset: o, bytes: confluentFrame(v1, avroEncode(paymentV1, v1Datum(o))) }))))
    expect(first).toMatchObject({ deadLetters: 0, tables: [{ rows: 2, created: true }] })
    const created = await tableSchema(s)
    // Non-nullable Avro fields stay required (evolution can relax them later).
    expect(created.fields.filter((f) => f.name !== '_kafka').map((f) => [f.name, typeof f.type === 'string' ? f.type : f.type.type, f.required])).toEqual([
      ['id', 'long', true],
      ['qty', 'int', true],
      ['price', 'float', true],
      ['amount', 'decimal(9, 2)', true],
      ['customer', 'struct', true],
      ['items', 'list', true],
      ['tags', 'map', true],
      ['note', 'string', true],
    ])
    const lastBefore = (await s.catalog.loadTable(id)).metadata['last-column-id']

    // v2 records, and a v1 record still in flight, in one batch.
    const second = await writeBatch(
      s.deps,
      rawEvent([
        { offset: 2, bytes: confluentFrame(v2, avroEncode(paymentV2, v2Datum(2))) },
        { offset: 3, bytes: confluentFrame(v1, avroEncode(paymentV1, v1Datum(3))) },
        { offset: 4, bytes: confluentFrame(v2, avroEncode(paymentV2, v2Datum(4))) },
      ]),
    )
    expect(second).toMatchObject({ deadLetters: 0, tables: [{ rows: 3, evolvedToSchemaId: 1 }] })
    const evolved = await tableSchema(s)
    for (const [name, type] of [['qty', 'long'], ['price', 'double'], ['amount', 'decimal(18, 2)'], ['customer.cid', 'long'], ['customer.score', 'double'], ['customer.bal', 'decimal(18, 2)'], ['items.element.n', 'long'], ['tags.value', 'long']] as const) {
      expect(typeAt(evolved, name)?.type, name).toBe(type)
      expect(idAt(evolved, name), `${name} keeps its id`).toBe(idAt(created, name))
    }
    expect(typeAt(evolved, 'note')!.required).toBe(false)
    expect(typeAt(evolved, 'qty')!.required).toBe(true)
    // New fields get ids from last-column-id, in Iceberg Java's order: deeper additions first.
    expect([idAt(evolved, 'customer.email'), idAt(evolved, 'items.element.sku'), idAt(evolved, 'added')]).toEqual([lastBefore + 1, lastBefore + 2, lastBefore + 3])
    expect((await s.catalog.loadTable(id)).metadata['last-column-id']).toBe(lastBefore + 3)

    const back = await readBack(s)
    expect(back.files).toHaveLength(2)
    // The first file keeps its int/float/decimal(9) columns; the second has the promoted ones.
    const [old, promoted] = back.files
    expect([idAt(evolved, 'qty'), idAt(evolved, 'price'), idAt(evolved, 'customer.cid'), idAt(evolved, 'items.element.n'), idAt(evolved, 'tags.value')].map((i) => old!.types.get(i))).toEqual(['INT32', 'FLOAT', 'INT32', 'INT32', 'INT32'])
    expect([idAt(evolved, 'qty'), idAt(evolved, 'price'), idAt(evolved, 'customer.cid'), idAt(evolved, 'items.element.n'), idAt(evolved, 'tags.value')].map((i) => promoted!.types.get(i))).toEqual(['INT64', 'DOUBLE', 'INT64', 'INT64', 'INT64'])
    expect(promoted!.types.get(idAt(evolved, 'amount'))).toMatch(/decimal\(18, 2\)$/)
    const byId = new Map(back.rows.map((r) => [r.id, r]))
    expect(byId.get(0n)).toMatchObject({ qty: 0, price: 1.5, amount: 12.34, customer: { cid: 0, name: 'c0', score: 2.5, bal: 0.99 }, items: [{ n: 0 }], note: 'note 0' })
    for (const n of [2n, 4n]) {
      expect(byId.get(n)).toMatchObject({
        qty: 5_000_000_000n + n,
        price: 0.1,
        amount: 1234567890123.45,
        customer: { cid: 6_000_000_000n, name: `c${n}`, score: 0.2, bal: 9876543210123.45, email: `c${n}@example.com` },
        items: [{ n: 7_000_000_000n, sku: 'sku-1' }],
        added: 'new',
        note: null,
      })
      expect(Object.values(byId.get(n)!.tags as object)).toEqual([8_000_000_000n])
    }
    // The v1 record written with the promoted schema: its values exact in the wider columns.
    expect(byId.get(3n)).toMatchObject({ qty: 3n, price: 1.5, amount: 12.34, customer: { cid: 3n, score: 2.5, bal: 0.99, email: null }, note: 'note 3', added: null })
    // Committed: the snapshot holds the files of both schema ids, readable as they were written.
    const snapshot = await commitAndScan(s)
    expect(snapshot.map((r) => r.id).sort()).toEqual([0n, 1n, 2n, 3n, 4n])
    expect(snapshot.find((r) => r.id === 1n)).toMatchObject({ qty: 1, customer: { cid: 1 } })
    expect(snapshot.find((r) => r.id === 4n)).toMatchObject({ qty: 5_000_000_004n, customer: { cid: 6_000_000_000n } })
  })

  it('never applies a change the spec forbids: the records of that schema are dead letters naming the field, the table type and the value', async () => {
    const s = await writerSetup({ FLOE_ROUTES: routes(), FLOE_VALUE_FORMAT: 'avro-confluent', FLOE_SCHEMA_REGISTRY_URL: registry.url })
    const subject = `forbidden-${randomUUID()}-value`
    const base = { type: 'record', name: 'P', fields: [{ name: 'id', type: 'long' }, { name: 'qty', type: 'long' }, { name: 'price', type: 'double' }, { name: 'c', type: { type: 'record', name: 'C', fields: [{ name: 'cid', type: 'long' }] } }] }
    const withField = (name: string, type: unknown) => ({ ...base, fields: base.fields.map((f) => (f.name === name ? { name, type } : f)) })
    const ok = await registry.register(subject, base)
    const toString = await registry.register(subject, withField('qty', 'string')) // long → string
    const toLong = await registry.register(subject, withField('price', 'long')) // double → long
    const nested = await registry.register(subject, withField('c', { type: 'record', name: 'C', fields: [{ name: 'cid', type: 'string' }] }))
    const narrower = await registry.register(subject, withField('qty', 'int')) // long → int: not a change, the values fit
    await writeBatch(s.deps, rawEvent([{ offset: 0, bytes: confluentFrame(ok, avroEncode(base, { id: 0n, qty: 1n, price: 1.5, c: { cid: 1n } })) }]))
    const r = await writeBatch(
      s.deps,
      rawEvent([
        { offset: 1, bytes: confluentFrame(toString, avroEncode(withField('qty', 'string'), { id: 1n, qty: '12', price: 1.5, c: { cid: 1n } })) },
        { offset: 2, bytes: confluentFrame(toLong, avroEncode(withField('price', 'long'), { id: 2n, qty: 1n, price: 9007199254740993n, c: { cid: 1n } })) },
        { offset: 3, bytes: confluentFrame(nested, avroEncode(withField('c', { type: 'record', name: 'C', fields: [{ name: 'cid', type: 'string' }] }), { id: 3n, qty: 1n, price: 1.5, c: { cid: 'x' } })) },
        { offset: 4, bytes: confluentFrame(narrower, avroEncode(withField('qty', 'int'), { id: 4n, qty: 7, price: 2.5, c: { cid: 4n } })) },
        { offset: 5, bytes: confluentFrame(ok, avroEncode(base, { id: 5n, qty: 5n, price: 5.5, c: { cid: 5n } })) },
      ]),
    )
    expect(r).toMatchObject({ deadLetters: 3, tables: [{ rows: 2 }] })
    expect(r.tables[0]!.evolvedToSchemaId).toBeUndefined()
    expect((await tableSchema(s)).fields.map((f) => f.type)).toEqual(['long', 'long', 'double', { type: 'struct', fields: [{ id: 5, name: 'cid', required: true, type: 'long' }] }])
    const reasons = Object.fromEntries((await deadLetterLines(s.io, s.deps.config.dlq)).map((l) => [l.offset, l.reason]))
    expect(reasons['1']).toMatch(/^table db.payments: field 'qty' is long in the table and cannot become string \(format v2 allows only int → long.*\): value string '12'$/)
    expect(reasons['2']).toMatch(/field 'price' is double in the table and cannot become long .*: value bigint 9007199254740993$/)
    expect(reasons['3']).toMatch(/field 'c.cid' is long in the table and cannot become string .*: value string 'x'$/)
    const rows = (await readBack(s)).rows
    expect(rows.map((x) => [x.id, x.qty, x.price])).toEqual([
      [0n, 1n, 1.5],
      [4n, 7n, 2.5],
      [5n, 5n, 5.5],
    ])
  })

  it('adds fields (optional: the struct exists) to a struct that was empty, from a later Avro version', async () => {
    const s = await writerSetup({ FLOE_ROUTES: routes(), FLOE_VALUE_FORMAT: 'avro-confluent', FLOE_SCHEMA_REGISTRY_URL: registry.url })
    const subject = `empty-${randomUUID()}-value`
    const bare = { name: 'bare', type: { type: 'record', name: 'Bare', fields: [] } } // not nullable, but empty
    const e1 = { type: 'record', name: 'E', fields: [{ name: 'id', type: 'long' }, { name: 'meta', type: ['null', { type: 'record', name: 'Meta', fields: [] }], default: null }, bare] }
    const e2 = { ...e1, fields: [e1.fields[0], { name: 'meta', type: ['null', { type: 'record', name: 'Meta', fields: [{ name: 'a', type: 'int' }, { name: 'b', type: ['null', 'string'], default: null }] }], default: null }, bare] }
    const v1 = await registry.register(subject, e1)
    const v2 = await registry.register(subject, e2)
    const first = await writeBatch(s.deps, rawEvent([{ offset: 0, bytes: confluentFrame(v1, avroEncode(e1, { id: 0n, meta: { Meta: {} }, bare: {} })) }]))
    expect(first).toMatchObject({ deadLetters: 0, tables: [{ rows: 1, created: true }] })
    expect(typeAt(await tableSchema(s), 'meta')!.type).toEqual({ type: 'struct', fields: [] })
    // Parquet files cannot hold an empty struct, so readers read it as null: it is created optional.
    expect(typeAt(await tableSchema(s), 'bare')).toMatchObject({ type: { type: 'struct', fields: [] }, required: false })
    const second = await writeBatch(s.deps, rawEvent([{ offset: 1, bytes: confluentFrame(v2, avroEncode(e2, { id: 1n, meta: { Meta: { a: 42, b: { string: 'x' } } }, bare: {} })) }]))
    expect(second).toMatchObject({ deadLetters: 0, tables: [{ rows: 1, evolvedToSchemaId: 1 }] })
    const schema = await tableSchema(s)
    expect(typeAt(schema, 'meta')!.type).toEqual({ type: 'struct', fields: [{ id: 4, name: 'a', required: false, type: 'int' }, { id: 5, name: 'b', required: false, type: 'string' }] })
    const rows = (await readBack(s)).rows
    expect(rows.find((r) => r.id === 1n)).toMatchObject({ meta: { a: 42, b: 'x' } })
  })
})

/** A table as an outside engine (Spark) would create it: narrow types at every depth, some required. */
function sparkSchema(): Schema {
  const f = (fid: number, name: string, type: NestedField['type'], required = false): NestedField => ({ id: fid, name, required, type })
  return {
    type: 'struct',
    'schema-id': 0,
    fields: [
      f(1, 'id', 'long', true),
      f(2, 'qty', 'int'),
      f(3, 'price', 'float'),
      f(4, 'amount', 'decimal(9, 2)'),
      f(5, 'customer', { type: 'struct', fields: [f(9, 'cid', 'int', true), f(10, 'name', 'string'), f(15, 'score', 'float'), f(16, 'bal', 'decimal(9, 2)')] }),
      f(6, 'items', { type: 'list', 'element-id': 11, element: { type: 'struct', fields: [f(12, 'n', 'int')] }, 'element-required': false }),
      f(7, 'tags', { type: 'map', 'key-id': 13, key: 'string', 'value-id': 14, value: 'int', 'value-required': false }),
      f(8, 'meta', { type: 'struct', fields: [] }),
    ],
    'identifier-field-ids': [1],
  }
}

describe('schema evolution from JSON records', () => {
  it('promotes only what a value needs, at any depth, relaxes a required field a record lacks, fills an empty struct, and dead-letters what no promotion holds', async () => {
    const s = await writerSetup({ FLOE_ROUTES: routes() })
    await s.catalog.createNamespace('db')
    await s.catalog.createTable(id, { schema: sparkSchema() })
    const fits = { id: 1, qty: 5, price: 1.5, amount: '12.34', customer: { cid: 7, name: 'a' }, items: [{ n: 1 }], tags: { a: 1 } }
    const r0 = await writeBatch(s.deps, kafkaEvent([{ topic: 'payments', partition: 0, offset: 0, value: fits }]))
    expect(r0).toMatchObject({ deadLetters: 0, tables: [{ rows: 1 }] })
    expect(r0.tables[0]!.evolvedToSchemaId).toBeUndefined() // a JSON integer that fits an int column is no reason to widen

    const r1 = await writeBatch(
      s.deps,
      kafkaEvent([
        { topic: 'payments', partition: 0, offset: 1, value: { id: 2, qty: 5_000_000_000, price: 0.1, amount: '1234567890123.45', customer: { cid: 6_000_000_000, name: 'b', score: 0.2, bal: 9876543210123.45 }, items: [{ n: 7_000_000_000, sku: 'new' }], tags: { a: 8_000_000_000 }, meta: { source: 'web' } } },
        { topic: 'payments', partition: 0, offset: 2, value: { id: 3, customer: { name: 'no cid' } } },
        { topic: 'payments', partition: 0, offset: 3, value: { id: 4, qty: 'abc' } },
        { topic: 'payments', partition: 0, offset: 4, value: { id: 5, qty: 1.5 } },
        { topic: 'payments', partition: 0, offset: 5, value: { qty: 1 } }, // no id: an identifier field stays required
      ]),
    )
    expect(r1).toMatchObject({ deadLetters: 3, tables: [{ rows: 2, evolvedToSchemaId: 1 }] })
    const schema = await tableSchema(s)
    for (const [name, type] of [['qty', 'long'], ['price', 'double'], ['amount', 'decimal(18, 2)'], ['customer.cid', 'long'], ['customer.score', 'double'], ['customer.bal', 'decimal(18, 2)'], ['items.element.n', 'long'], ['tags.value', 'long']] as const) {
      expect(typeAt(schema, name)?.type, name).toBe(type)
    }
    expect(typeAt(schema, 'customer.cid')!.required).toBe(false)
    expect(typeAt(schema, 'id')!.required).toBe(true)
    expect([idAt(schema, 'items.element.sku'), idAt(schema, 'meta.source')]).toEqual([17, 18])
    const reasons = Object.fromEntries((await deadLetterLines(s.io, s.deps.config.dlq)).map((l) => [l.offset, l.reason]))
    expect(reasons).toEqual({
      '3': "table db.payments: field 'qty' expected long, got string 'abc'",
      '4': "table db.payments: field 'qty' expected long, got number 1.5",
      '5': "table db.payments: field 'id' expected long (required), got undefined",
    })
    const rows = new Map((await readBack(s)).rows.map((r) => [r.id, r]))
    expect(rows.get(1n)).toMatchObject({ qty: 5, price: 1.5, amount: 12.34, customer: { cid: 7 } })
    expect(rows.get(2n)).toMatchObject({ qty: 5_000_000_000n, price: 0.1, amount: 1234567890123.45, customer: { cid: 6_000_000_000n, name: 'b', score: 0.2, bal: 9876543210123.45 }, items: [{ n: 7_000_000_000n, sku: 'new' }], meta: { source: 'web' } })
    expect(Object.values(rows.get(2n)!.tags as object)).toEqual([8_000_000_000n])
    expect(rows.get(3n)).toMatchObject({ customer: { cid: null, name: 'no cid' } })
  })

  it('matches names case-insensitively with the table option caseInsensitive, exactly otherwise', async () => {
    const s = await writerSetup({ FLOE_ROUTES: routes({ payments: { caseInsensitive: true } }) })
    await writeBatch(s.deps, kafkaEvent([{ topic: 'payments', partition: 0, offset: 0, value: { id: 1, name: 'a' } }]))
    const r = await writeBatch(s.deps, kafkaEvent([{ topic: 'payments', partition: 0, offset: 1, value: { ID: 2, Name: 'b', Extra: true } }]))
    expect(r).toMatchObject({ deadLetters: 0, tables: [{ rows: 1, unknownFieldsIgnored: 0 }] })
    expect((await tableSchema(s)).fields.map((f) => f.name)).toEqual(['id', 'name', 'Extra'])
    expect((await readBack(s)).rows.find((x) => x.id === 2n)).toMatchObject({ name: 'b', Extra: true })

    const exact = await writerSetup({ FLOE_ROUTES: routes() })
    await writeBatch(exact.deps, kafkaEvent([{ topic: 'payments', partition: 0, offset: 0, value: { id: 1 } }]))
    await writeBatch(exact.deps, kafkaEvent([{ topic: 'payments', partition: 0, offset: 1, value: { ID: 2 } }]))
    expect((await tableSchema(exact)).fields.map((f) => f.name)).toEqual(['id', 'ID'])
  })
})

describe('schema evolution of a format v3 table', () => {
  it('promotes date → timestamp where v3 allows it, and not for an identity partition source', async () => {
    const s = await writerSetup({ FLOE_ROUTES: routes() })
    await s.catalog.createNamespace('db')
    const schema: Schema = { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: false, type: 'long' }, { id: 2, name: 'd', required: false, type: 'date' }, { id: 3, name: 'p', required: false, type: 'date' }] }
    const created = await s.catalog.createTable(id, { schema, spec: { 'spec-id': 0, fields: [{ 'source-id': 3, 'field-id': 1000, name: 'p', transform: 'identity' }] } })
    // Upgraded as an outside engine would (ALTER TABLE … SET TBLPROPERTIES ('format-version'='3')).
    await s.catalog.commit(id, { base: created.metadataLocation, metadata: { ...created.metadata, 'format-version': 3, 'next-row-id': 0n } })
    await writeBatch(s.deps, kafkaEvent([{ topic: 'payments', partition: 0, offset: 0, value: { id: 1, d: '2024-05-01', p: '2024-05-01' } }]))
    const r = await writeBatch(
      s.deps,
      kafkaEvent([
        { topic: 'payments', partition: 0, offset: 1, value: { id: 2, d: '2024-05-02T10:30:00.123456', p: '2024-05-02' } },
        { topic: 'payments', partition: 0, offset: 2, value: { id: 3, d: '2024-05-03', p: '2024-05-03T10:30:00' } },
      ]),
    )
    expect(r).toMatchObject({ deadLetters: 1, tables: [{ rows: 1, evolvedToSchemaId: 1 }] })
    const after = await tableSchema(s)
    expect([typeAt(after, 'd')!.type, typeAt(after, 'p')!.type]).toEqual(['timestamp', 'date'])
    const [line] = await deadLetterLines(s.io, s.deps.config.dlq)
    expect(line).toMatchObject({ offset: '2', reason: "table db.payments: field 'p' expected date, got string '2024-05-03T10:30:00'" })
    const rows = new Map((await readBack(s)).rows.map((x) => [x.id, x]))
    expect(rows.get(1n)).toMatchObject({ d: 19_844, p: 19_844 }) // the old file: days
    expect(rows.get(2n)).toMatchObject({ d: 1_714_645_800_123_456n, p: 19_845 }) // the promoted column: microseconds, exact
    const files = (await readBack(s)).files
    expect([files[0]!.types.get(2), files.at(-1)!.types.get(2)]).toEqual(['INT32', 'INT64'])
  })
})

describe('schema evolution from Kafka Connect envelopes', () => {
  const envelope = (int: 'int32' | 'int64', float: 'float' | 'double', precision: string, value: Record<string, unknown>) =>
    JSON.stringify({
      schema: {
        type: 'struct',
        fields: [
          { field: 'id', type: 'int64' },
          { field: 'qty', type: int },
          { field: 'price', type: float },
          { field: 'amount', type: 'bytes', name: 'org.apache.kafka.connect.data.Decimal', parameters: { scale: '2', 'connect.decimal.precision': precision } },
          { field: 'customer', type: 'struct', fields: [{ field: 'cid', type: int }] },
          { field: 'items', type: 'array', items: { type: int } },
        ],
      },
      payload: value,
    }).replace(/"@(\d+)"/g, '$1')
  it('promotes int32 → int64, float → double and Decimal precision, top level and nested', async () => {
    const s = await writerSetup({ FLOE_ROUTES: routes(), FLOE_VALUE_FORMAT: 'json-schema-envelope' })
    const b64 = (u: bigint) => decBytes(u).toString('base64')
    await writeBatch(s.deps, rawEvent([{ offset: 0, bytes: envelope('int32', 'float', '9', { id: 1, qty: 3, price: 0.1, amount: b64(1234n), customer: { cid: 4 }, items: [5] }) }]))
    const before = await tableSchema(s)
    expect(['qty', 'price', 'amount', 'customer.cid', 'items.element'].map((n) => typeAt(before, n)!.type)).toEqual(['int', 'float', 'decimal(9, 2)', 'int', 'int'])
    const r = await writeBatch(
      s.deps,
      rawEvent([{ offset: 1, bytes: envelope('int64', 'double', '20', { id: 2, qty: '@5000000000', price: 0.1, amount: b64(123_456_789_012_345n), customer: { cid: '@6000000000' }, items: ['@7000000000'] }) }]),
    )
    expect(r).toMatchObject({ deadLetters: 0, tables: [{ rows: 1, evolvedToSchemaId: 1 }] })
    const after = await tableSchema(s)
    expect(['qty', 'price', 'amount', 'customer.cid', 'items.element'].map((n) => typeAt(after, n)!.type)).toEqual(['long', 'double', 'decimal(20, 2)', 'long', 'long'])
    const rows = new Map((await readBack(s)).rows.map((x) => [x.id, x]))
    // The float32 0.1 of the first record is the float it stands for; the double 0.1 of the second is 0.1.
    expect(rows.get(1n)).toMatchObject({ qty: 3, price: Math.fround(0.1), amount: 12.34, customer: { cid: 4 }, items: [5] })
    expect(rows.get(2n)).toMatchObject({ qty: 5_000_000_000n, price: 0.1, amount: 1234567890123.45, customer: { cid: 6_000_000_000n }, items: [7_000_000_000n] })
  })
})

describe('schema evolution from the Glue Schema Registry', () => {
  it('promotes int → long from a new schema version (GetSchemaVersion mocked: Glue has no local server)', async () => {
    const glue = new GlueClient({ region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } })
    const glueMock = mockClient(glue)
    const s = await writerSetup({ FLOE_ROUTES: routes(), FLOE_VALUE_FORMAT: 'avro-glue' })
    const g1 = { type: 'record', name: 'G', fields: [{ name: 'id', type: 'long' }, { name: 'qty', type: 'int' }] }
    const g2 = { type: 'record', name: 'G', fields: [{ name: 'id', type: 'long' }, { name: 'qty', type: 'long' }] }
    const versions: Record<string, unknown> = { [randomUUID()]: g1, [randomUUID()]: g2 }
    const [id1, id2] = Object.keys(versions)
    glueMock.on(GetSchemaVersionCommand).callsFake((input: { SchemaVersionId?: string }) => ({ SchemaVersionId: input.SchemaVersionId, DataFormat: 'AVRO', SchemaDefinition: JSON.stringify(versions[input.SchemaVersionId!]), Status: 'AVAILABLE' }))
    const deps = { ...s.deps, decoders: createDecoders(s.deps.config, { glue: () => glue, secrets: () => { throw new Error('not used') } }) }
    await writeBatch(deps, rawEvent([{ offset: 0, bytes: glueFrame(id1!, avroEncode(g1, { id: 1n, qty: 1 })) }]))
    const r = await writeBatch(deps, rawEvent([{ offset: 1, bytes: glueFrame(id2!, avroEncode(g2, { id: 2n, qty: 9_007_199_254_740_993n })) }]))
    expect(r).toMatchObject({ deadLetters: 0, tables: [{ rows: 1, evolvedToSchemaId: 1 }] })
    expect(typeAt(await tableSchema(s), 'qty')!.type).toBe('long')
    expect((await readBack(s)).rows.map((x) => x.qty)).toEqual([1, 9_007_199_254_740_993n])
    glueMock.restore()
  })
})

describe('concurrent evolution', () => {
  it('two writers evolving the same table at once both land: different new fields and a promotion, committed one on top of the other', async () => {
    const s = await writerSetup({ FLOE_ROUTES: routes({ payments: { kafkaMetadata: ['topic', 'partition', 'offset'] } }) })
    await s.catalog.createNamespace('db')
    await s.catalog.createTable(id, { schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: false, type: 'long' }, { id: 2, name: 'qty', required: false, type: 'int' }] } })
    // Both writers reach their schema commit before either commits (a barrier), so one must lose the swap.
    let waiting: (() => void)[] = []
    let commits = 0
    const barrier: WriterCatalog = {
      loadTable: (i) => s.catalog.loadTable(i),
      createTable: (i, req) => s.catalog.createTable(i, req),
      async commit(i, req) {
        if (++commits <= 2) {
          await new Promise<void>((resolve) => {
            waiting.push(resolve)
            if (waiting.length === 2) {
              for (const w of waiting) w()
              waiting = []
            }
          })
        }
        return s.catalog.commit(i, req)
      },
    }
    const deps = { ...s.deps, catalog: barrier }
    const [a, b] = await Promise.all([
      writeBatch(deps, kafkaEvent([{ topic: 'payments', partition: 0, offset: 0, value: { id: 1, qty: 5_000_000_000, a: 'from a' } }])),
      writeBatch(deps, kafkaEvent([{ topic: 'payments', partition: 1, offset: 0, value: { id: 2, qty: 2, b: { deep: true } } }])),
    ])
    expect(commits).toBeGreaterThanOrEqual(3) // two racing commits and the loser's rebased one
    expect([a.deadLetters, b.deadLetters]).toEqual([0, 0])
    const schema = await tableSchema(s)
    expect(schema.fields.map((f) => [f.name, typeof f.type === 'string' ? f.type : f.type.type])).toEqual(
      expect.arrayContaining([['id', 'long'], ['qty', 'long'], ['a', 'string'], ['b', 'struct'], ['_kafka', 'struct']]),
    )
    expect(schema.fields).toHaveLength(5)
    const ids = [...indexByName(schema).values()].map((f) => f.id)
    expect(new Set(ids).size).toBe(ids.length)
    const rows = new Map((await readBack(s)).rows.map((x) => [x.id, x]))
    expect(rows.get(1n)).toMatchObject({ qty: 5_000_000_000n, a: 'from a' })
    expect(rows.get(2n)).toMatchObject({ b: { deep: true } })
    expect([2n, 2]).toContainEqual(rows.get(2n)!.qty) // written as int or long, depending on who committed first
    const snapshot = await commitAndScan(s)
    expect(snapshot.map((r) => [r.id, r.a ?? null]).sort()).toEqual([
      [1n, 'from a'],
      [2n, null],
    ])
  })
})
