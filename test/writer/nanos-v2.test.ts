/**
 * Avro timestamp-nanos / local-timestamp-nanos into Floe's format-v2 tables (the writer path on
 * DynamoDB Local + s3rver, a Confluent registry on loopback). Format v2 has no nanosecond type
 * and Iceberg Java refuses one in a v2 schema; a table holding one is read by no engine (Spark,
 * PyIceberg and DuckDB refuse it, test/interop). So the table never gets such a column: a record
 * with a value there is a dead letter naming the field, the limit and the value; a record with
 * null there lands; the table keeps every other field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { confluentFrame } from '../../lib/codec/confluent.js'
import { currentSchema } from '../../lib/iceberg/metadata.js'
import { evolveSchema } from '../../lib/schema/evolve.js'
import type { Schema, StructType } from '../../lib/schema/types.js'
import { writeBatch } from '../../lib/writer/pipeline.js'
import { avroEncode } from '../codec/avro-fixtures.js'
import { startTestRegistry, type TestRegistry } from '../helpers/registry.js'
import { deadLetterLines, kafkaEvent, writerSetup } from './support.js'

let registry: TestRegistry
beforeAll(async () => {
  registry = await startTestRegistry()
})
afterAll(async () => registry.close())

const nanos = { type: 'long', logicalType: 'timestamp-nanos' }
const schema = {
  type: 'record',
  name: 'Tick',
  fields: [
    { name: 'id', type: 'long' },
    { name: 'at', type: ['null', nanos] },
    { name: 'local', type: ['null', { type: 'long', logicalType: 'local-timestamp-nanos' }] },
    { name: 'inner', type: { type: 'record', name: 'Inner', fields: [{ name: 'n', type: 'long' }, { name: 'at', type: ['null', nanos] }] } },
  ],
}

function event(frames: Uint8Array[]): Record<string, unknown> {
  const e = kafkaEvent(frames.map((_, offset) => ({ topic: 'ticks', partition: 0, offset, value: 'x' }))) as { records: Record<string, { offset: number; value: string }[]> }
  for (const list of Object.values(e.records)) for (const r of list) r.value = Buffer.from(frames[r.offset]!).toString('base64')
  return e
}

describe('Avro nanosecond timestamps into a format-v2 table', () => {
  it('the table is created without them; values there are dead letters naming field, limit and value; nulls land', async () => {
    const s = await writerSetup({
      FLOE_SCHEMA_REGISTRY_URL: registry.url,
      FLOE_ROUTES: JSON.stringify({ defaultNamespace: 'db', formats: [{ topic: 'ticks', value: 'avro-confluent' }], routes: [{ topic: 'ticks', table: 'ticks' }] }),
    })
    const id = await registry.register('Tick-value', schema)
    const frame = (datum: unknown) => confluentFrame(id, avroEncode(schema, datum))
    const r = await writeBatch(
      s.deps,
      event([
        frame({ id: 0n, at: null, local: null, inner: { n: 0n, at: null } }),
        frame({ id: 1n, at: { long: 1_714_567_890_123_456_789n }, local: null, inner: { n: 1n, at: null } }),
        frame({ id: 2n, at: null, local: { long: 1_714_567_890_123_456_000n }, inner: { n: 2n, at: null } }),
        frame({ id: 3n, at: null, local: null, inner: { n: 3n, at: { long: 5n } } }),
        frame({ id: 4n, at: null, local: null, inner: { n: 4n, at: null } }),
      ]),
      { writerId: 'w1' },
    )
    expect(r).toMatchObject({ deadLetters: 3, tables: [{ rows: 2 }] })
    const { metadata } = await s.catalog.loadTable({ namespace: 'db', name: 'ticks' })
    expect(metadata['format-version']).toBe(2)
    expect(currentSchema(metadata).fields.map((f) => [f.name, f.type])).toEqual([
      ['id', 'long'],
      ['inner', { type: 'struct', fields: [{ id: 5, name: 'n', required: true, type: 'long' }] }],
    ])
    const reasons = Object.fromEntries((await deadLetterLines(s.io, s.deps.config.dlq)).map((l) => [l.offset, l.reason]))
    expect(reasons['1']).toBe(
      "table db.ticks: field 'at' is timestamptz_ns, a type format v2 does not have (Iceberg: v3 only), so the table has no such column (send timestamp-micros, or write to a format-v3 table): value string '2024-05-01T12:51:30.123456789Z'",
    )
    expect(reasons['2']).toMatch(/^table db.ticks: field 'local' is timestamp_ns, a type format v2 does not have .*: value string '2024-05-01T12:51:30.123456000'$/)
    expect(reasons['3']).toMatch(/^table db.ticks: field 'inner.at' is timestamptz_ns, a type format v2 does not have .*: value string '1970-01-01T00:00:00.000000005Z'$/)
  })

  it('evolution: a v2 table refuses a new nanosecond field (also nested, in a list or map); a v3 table adds it', () => {
    const table: Schema = { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: true, type: 'long' }] }
    const incoming: StructType = {
      type: 'struct',
      fields: [
        { id: 0, name: 'id', required: true, type: 'long' },
        { id: 0, name: 'at', required: false, type: 'timestamptz_ns' },
        { id: 0, name: 's', required: false, type: { type: 'struct', fields: [{ id: 0, name: 'ok', required: false, type: 'string' }, { id: 0, name: 'at', required: false, type: 'timestamp_ns' }] } },
        { id: 0, name: 'l', required: false, type: { type: 'list', 'element-id': 0, 'element-required': false, element: 'timestamptz_ns' } },
        { id: 0, name: 'm', required: false, type: { type: 'map', 'key-id': 0, 'value-id': 0, 'value-required': false, key: 'string', value: 'timestamp_ns' } },
      ],
    }
    const v2 = evolveSchema(table, incoming, 1, { table: 'db.t', source: 'schema', formatVersion: 2 })
    expect(v2.schema!.fields.map((f) => [f.name, f.type])).toEqual([
      ['id', 'long'],
      ['s', { type: 'struct', fields: [{ id: 3, name: 'ok', required: false, type: 'string' }] }],
    ])
    expect(v2.rejected.map((x) => [x.path, x.incomingType])).toEqual([
      ['at', 'timestamptz_ns'],
      ['s.at', 'timestamp_ns'],
      ['l.element', 'timestamptz_ns'],
      ['m.value', 'timestamp_ns'],
    ])
    const v3 = evolveSchema(table, incoming, 1, { table: 'db.t', source: 'schema', formatVersion: 3 })
    expect(v3.rejected).toEqual([])
    expect(v3.schema!.fields.map((f) => f.name)).toEqual(['id', 'at', 's', 'l', 'm'])
  })
})
