/**
 * Table preparation through the injected catalog (helper D's DynamoDbCatalog on DynamoDB Local):
 * auto-creation with partitionBy / idColumns / `_kafka`, schema evolution committed before the
 * rows are written (retrying on conflict), and unknown fields ignored and counted.
 */
import { parquetReadObjects, parquetSchema, parquetMetadataAsync } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import { describe, expect, it } from 'vitest'
import { addSchema, currentSchema } from '../../lib/iceberg/metadata.js'
import { KAFKA_COLUMN } from '../../lib/writer/kafka-column.js'
import { writeBatch } from '../../lib/writer/pipeline.js'
import type { WriterCatalog } from '../../lib/writer/types.js'
import { deadLetterLines, kafkaEvent, registered, writerSetup } from './support.js'

const routes = (extra: Record<string, unknown> = {}) => JSON.stringify({ defaultNamespace: 'db', routes: [{ topic: 'events', table: 'events' }], ...extra })
const id = { namespace: 'db', name: 'events' }

/** Rows of a file of the latest batch (or of `batchIndex`), the first whose path contains `pathPart`. */
async function firstFileRows(s: Awaited<ReturnType<typeof writerSetup>>, batchIndex = -1, pathPart = '') {
  const reg = (await registered(s.control)).get('db.events')!
  const batch = reg.batches.sort((a, b) => Number(a.ranges[0]!.firstOffset - b.ranges[0]!.firstOffset)).at(batchIndex)!
  const file = reg.files.get(batch.batchId)!.find((f) => f.filePath.includes(pathPart))!
  const bytes = await s.io.read(file.filePath)
  const buf = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
  return { file, rows: (await parquetReadObjects({ file: buf, compressors })) as Record<string, unknown>[], metadata: await parquetMetadataAsync(buf) }
}

describe('tables', () => {
  it('auto-creates a table from the records with partitionBy, idColumns and the _kafka column', async () => {
    const s = await writerSetup({
      FLOE_ROUTES: routes({ tables: { events: { partitionBy: ['day(ts)'], idColumns: ['id'], kafkaMetadata: ['topic', 'partition', 'offset', 'key'] } } }),
    })
    const r = await writeBatch(
      s.deps,
      kafkaEvent([
        { topic: 'events', partition: 3, offset: 7, key: 'k7', value: { id: 1, ts: '2024-05-01T10:00:00Z', v: 1.5 } },
        { topic: 'events', partition: 3, offset: 9, key: null, value: { id: 2, ts: '2024-05-02T10:00:00Z', v: 2 } },
      ]),
    )
    expect(r.tables).toMatchObject([{ table: 'db.events', rows: 2, files: 2, created: true }])
    const { metadata } = await s.catalog.loadTable(id)
    const schema = currentSchema(metadata)
    const byName = Object.fromEntries(schema.fields.map((f) => [f.name, f]))
    expect(byName.id).toMatchObject({ required: true, type: 'long' })
    expect(schema['identifier-field-ids']).toEqual([byName.id!.id])
    expect(byName.ts!.type).toBe('timestamptz')
    expect(byName[KAFKA_COLUMN]!.type).toMatchObject({ type: 'struct', fields: [{ name: 'topic' }, { name: 'partition' }, { name: 'offset' }, { name: 'key' }] })
    expect(metadata['partition-specs'][0]!.fields).toMatchObject([{ name: 'ts_day', transform: 'day', 'source-id': byName.ts!.id }])
    const reg = (await registered(s.control)).get('db.events')!
    const paths = [...reg.files.values()].flat().map((f) => f.filePath).sort((a, b) => (a.split('ts_day=')[1]! < b.split('ts_day=')[1]! ? -1 : 1))
    expect(paths[0]).toMatch(/\/data\/(?:[01]+\/){4}ts_day=2024-05-01\/[^/]+\.parquet$/)
    expect(paths[1]).toMatch(/\/data\/(?:[01]+\/){4}ts_day=2024-05-02\/[^/]+\.parquet$/)
    const { rows } = await firstFileRows(s, 0, 'ts_day=2024-05-01/')
    expect(rows[0]![KAFKA_COLUMN]).toMatchObject({ topic: 'events', partition: 3, offset: 7n })
  })

  it('adds unknown fields as optional columns through the catalog before writing them', async () => {
    const s = await writerSetup({ FLOE_ROUTES: routes() })
    await writeBatch(s.deps, kafkaEvent([{ topic: 'events', partition: 0, offset: 0, value: { id: 1 } }]))
    const r = await writeBatch(s.deps, kafkaEvent([{ topic: 'events', partition: 0, offset: 1, value: { id: 2, extra: 'new', nested: { a: true } } }]))
    expect(r.tables[0]).toMatchObject({ rows: 1, evolvedToSchemaId: 1, schemaId: 1 })
    const schema = currentSchema((await s.catalog.loadTable(id)).metadata)
    expect(schema.fields.map((f) => [f.name, f.required])).toEqual([
      ['id', false],
      ['extra', false],
      ['nested', false],
    ])
    const { rows, metadata } = await firstFileRows(s)
    expect(rows).toEqual([{ id: 2n, extra: 'new', nested: { a: true } }])
    // The file carries the new schema's field ids.
    const extraId = schema.fields.find((f) => f.name === 'extra')!.id
    expect(parquetSchema(metadata).children.find((c) => c.element.name === 'extra')!.element.field_id).toBe(extraId)
    const reg = (await registered(s.control)).get('db.events')!
    expect(reg.batches.map((b) => b.schemaId).sort()).toEqual([0, 1])
  })

  it('retries a schema change that lost a commit race, on top of the other change', async () => {
    const s = await writerSetup({ FLOE_ROUTES: routes() })
    await writeBatch(s.deps, kafkaEvent([{ topic: 'events', partition: 0, offset: 0, value: { id: 1 } }]))
    let raced = false
    const racing: WriterCatalog = {
      loadTable: (i) => s.catalog.loadTable(i),
      createTable: (i, req) => s.catalog.createTable(i, req),
      async commit(i, req) {
        if (!raced) {
          raced = true
          // Another writer adds 'other' between our load and our commit.
          const base = await s.catalog.loadTable(i)
          const schema = currentSchema(base.metadata)
          const theirs = { ...schema, fields: [...schema.fields, { id: base.metadata['last-column-id'] + 1, name: 'other', required: false, type: 'string' }] }
          await s.catalog.commit(i, { base: base.metadataLocation, metadata: addSchema(base.metadata, theirs) })
        }
        return s.catalog.commit(i, req)
      },
    }
    const r = await writeBatch({ ...s.deps, catalog: racing }, kafkaEvent([{ topic: 'events', partition: 0, offset: 1, value: { id: 2, mine: 5 } }]))
    expect(raced).toBe(true)
    expect(r.tables[0]!.rows).toBe(1)
    const schema = currentSchema((await s.catalog.loadTable(id)).metadata)
    expect(schema.fields.map((f) => f.name)).toEqual(['id', 'other', 'mine'])
    expect(new Set(schema.fields.map((f) => f.id)).size).toBe(3)
  })

  it('ignores and counts unknown fields when evolveSchema is off', async () => {
    const s = await writerSetup({ FLOE_ROUTES: routes({ tables: { events: { evolveSchema: false } } }) })
    await writeBatch(s.deps, kafkaEvent([{ topic: 'events', partition: 0, offset: 0, value: { id: 1 } }]))
    const r = await writeBatch(
      s.deps,
      kafkaEvent([
        { topic: 'events', partition: 0, offset: 1, value: { id: 2, x: 1, y: 2 } },
        { topic: 'events', partition: 0, offset: 2, value: { id: 3, x: 1 } },
      ]),
    )
    expect(r.tables[0]).toMatchObject({ rows: 2, unknownFieldsIgnored: 3, schemaId: 0 })
    expect(r.tables[0]!.evolvedToSchemaId).toBeUndefined()
    expect(currentSchema((await s.catalog.loadTable(id)).metadata).fields.map((f) => f.name)).toEqual(['id'])
  })

  it('dead-letters the records of a missing table when autoCreate is off, and still advances the checkpoint', async () => {
    const s = await writerSetup({ FLOE_ROUTES: routes({ tables: { events: { autoCreate: false } } }) })
    const r = await writeBatch(s.deps, kafkaEvent([{ topic: 'events', partition: 0, offset: 4, value: { id: 1 } }]))
    expect(r).toMatchObject({ outcome: 'registered', deadLetters: 1 })
    const lines = await deadLetterLines(s.io, s.deps.config.dlq)
    expect(lines).toMatchObject([{ offset: '4', table: 'db.events', stage: 'schema' }])
    expect(lines[0]!.reason).toMatch(/table db.events does not exist and autoCreate is off/)
  })

  it('dead-letters records that cannot create their table (partitionBy names a column they lack) instead of failing the batch', async () => {
    const s = await writerSetup({ FLOE_ROUTES: routes({ tables: { events: { partitionBy: ['day(ts)'] } } }) })
    const r = await writeBatch(s.deps, kafkaEvent([{ topic: 'events', partition: 0, offset: 0, value: { id: 1 } }]))
    expect(r).toMatchObject({ outcome: 'registered', deadLetters: 1 })
    const [line] = await deadLetterLines(s.io, s.deps.config.dlq)
    expect(line).toMatchObject({ table: 'db.events', stage: 'schema' })
    expect(line!.reason).toMatch(/table db.events: cannot create with partitionBy \["day\(ts\)"\]: .*ts/)
  })

  it("creates a table from the format's own schema (Avro, Connect envelope) when the records carry one", async () => {
    const s = await writerSetup({ FLOE_ROUTES: routes() })
    const schema = {
      type: 'struct' as const,
      'schema-id': 0,
      fields: [
        { id: 1, name: 'id', required: true, type: 'int' },
        { id: 2, name: 'price', required: false, type: 'decimal(9, 2)' },
      ],
    }
    const decoders = {
      decodeValue: async (rec: Parameters<typeof s.deps.decoders.decodeValue>[0]) => {
        const decoded = await s.deps.decoders.decodeValue(rec)
        return decoded.ok ? { ...decoded, schema } : decoded
      },
    }
    await writeBatch({ ...s.deps, decoders }, kafkaEvent([{ topic: 'events', partition: 0, offset: 0, value: { id: 7, price: '12.30' } }]))
    const created = currentSchema((await s.catalog.loadTable(id)).metadata)
    // With evolveSchema on, a field the format says is required stays required: a record (or a
    // later schema version) without it relaxes the column (required → optional) before it is written.
    expect(created.fields.map((f) => [f.name, f.type, f.required])).toEqual([
      ['id', 'int', true],
      ['price', 'decimal(9, 2)', false],
    ])
    const later = await writeBatch({ ...s.deps, decoders }, kafkaEvent([{ topic: 'events', partition: 0, offset: 1, value: { price: '1.00' } }]))
    expect(later).toMatchObject({ deadLetters: 0 })
    expect(later.tables[0]).toMatchObject({ rows: 1, evolvedToSchemaId: 1 })
    expect(currentSchema((await s.catalog.loadTable(id)).metadata).fields.map((f) => f.required)).toEqual([false, false])
  })

  it('adds the _kafka column to an existing table when kafkaMetadata is turned on', async () => {
    const s = await writerSetup({ FLOE_ROUTES: routes() })
    await writeBatch(s.deps, kafkaEvent([{ topic: 'events', partition: 0, offset: 0, value: { id: 1 } }]))
    const on = await writerSetup({ FLOE_ROUTES: routes({ tables: { events: { kafkaMetadata: true } } }) })
    const deps = { ...on.deps, catalog: s.catalog, control: s.control, io: s.io }
    const r = await writeBatch(deps, kafkaEvent([{ topic: 'events', partition: 0, offset: 1, timestamp: 1_714_557_600_000, value: { id: 2 } }]))
    expect(r.tables[0]).toMatchObject({ rows: 1, evolvedToSchemaId: 1 })
    const schema = currentSchema((await s.catalog.loadTable(id)).metadata)
    expect(schema.fields.map((f) => f.name)).toEqual(['id', '_kafka'])
    const { rows } = await firstFileRows(s)
    expect(rows[0]![KAFKA_COLUMN]).toMatchObject({ topic: 'events', partition: 0, offset: 1n, timestamp: new Date(1_714_557_600_000) })
  })
})
