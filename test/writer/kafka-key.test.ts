/**
 * `_kafka.key` decoded with the topic's key format (FLOE_ROUTES `formats[].key`): string keys as
 * their text, Confluent-Avro keys as canonical JSON text, an existing binary column left raw, a
 * key that cannot be decoded a dead letter, a registry outage retryable. Writer end to end on
 * DynamoDB Local + s3rver, a Confluent-compatible registry on loopback, Parquet read back with hyparquet.
 */
import { parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { confluentFrame } from '../../lib/codec/confluent.js'
import { RegistryUnavailableError } from '../../lib/errors.js'
import { currentSchema } from '../../lib/iceberg/metadata.js'
import { canonicalJson, KAFKA_COLUMN, kafkaKeyType, keyText } from '../../lib/writer/kafka-column.js'
import { writeBatch } from '../../lib/writer/pipeline.js'
import { avroEncode } from '../codec/avro-fixtures.js'
import { startTestRegistry, type TestRegistry } from '../helpers/registry.js'
import { deadLetterLines, kafkaEvent, registered, writerSetup, type EventRecord, type WriterSetup } from './support.js'

const id = { namespace: 'db', name: 'events' }
const routes = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ defaultNamespace: 'db', routes: [{ topic: 'events', table: 'events' }], tables: { events: { kafkaMetadata: ['offset', 'key'] } }, ...extra })

const keySchema = { type: 'record', name: 'EventKey', namespace: 'com.example', fields: [{ name: 'region', type: 'string' }, { name: 'id', type: 'long' }, { name: 'tag', type: 'bytes' }] }

let registry: TestRegistry
beforeAll(async () => {
  registry = await startTestRegistry()
})
afterAll(async () => {
  await registry.close()
})

/** An event whose records' keys are the given raw bytes (by offset); the rest as support.ts builds them. */
function eventWithKeys(records: EventRecord[], keys: Map<number, Uint8Array>): Record<string, unknown> {
  const event = kafkaEvent(records) as { records: Record<string, { offset: number; key: string | null }[]> }
  for (const list of Object.values(event.records)) for (const r of list) if (keys.has(r.offset)) r.key = Buffer.from(keys.get(r.offset)!).toString('base64')
  return event
}

/** `_kafka` values of every registered row of db.events, by offset. */
async function kafkaRows(s: WriterSetup): Promise<Map<bigint, Record<string, unknown>>> {
  const reg = (await registered(s.control)).get('db.events')!
  const out = new Map<bigint, Record<string, unknown>>()
  for (const file of [...reg.files.values()].flat()) {
    const bytes = await s.io.read(file.filePath)
    const buf = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
    for (const row of (await parquetReadObjects({ file: buf, compressors, utf8: false })) as Record<string, unknown>[]) {
      const k = row[KAFKA_COLUMN] as Record<string, unknown> | undefined
      if (k) out.set(k.offset as bigint, k) // files written before the table had `_kafka` have none
    }
  }
  return out
}

const keyColumnType = async (s: WriterSetup) => kafkaKeyType(currentSchema((await s.catalog.loadTable(id)).metadata))

describe('_kafka.key with a key format', () => {
  it('stores string-format keys as text in a string column, null keys as null', async () => {
    const s = await writerSetup({ FLOE_ROUTES: routes({ formats: [{ topic: 'events', key: 'string' }] }) })
    const r = await writeBatch(
      s.deps,
      kafkaEvent([
        { topic: 'events', partition: 0, offset: 0, key: 'user-1', value: { id: 1 } },
        { topic: 'events', partition: 0, offset: 1, key: null, value: { id: 2 } },
        { topic: 'events', partition: 0, offset: 2, key: 'ünïcode ✓', value: { id: 3 } },
      ]),
    )
    expect(r).toMatchObject({ outcome: 'registered', deadLetters: 0, tables: [{ table: 'db.events', rows: 3, created: true }] })
    expect(await keyColumnType(s)).toBe('string')
    const rows = await kafkaRows(s)
    expect([...rows].map(([o, k]) => [o, k.key]).sort()).toEqual([
      [0n, 'user-1'],
      [1n, null],
      [2n, 'ünïcode ✓'],
    ])
  })

  it('stores Confluent-Avro keys as canonical JSON text, and a bare Avro string key as its text', async () => {
    const s = await writerSetup({
      FLOE_ROUTES: routes({ formats: [{ topic: 'events', key: 'avro-confluent' }] }),
      FLOE_SCHEMA_REGISTRY_URL: registry.url,
    })
    const recordId = await registry.register('events-key', keySchema)
    const stringId = await registry.register('events-key-str', { type: 'string' })
    const keys = new Map([
      [0, confluentFrame(recordId, avroEncode(keySchema, { region: 'eu', id: 9007199254740993n, tag: Buffer.from([1, 2, 3]) }))],
      [1, confluentFrame(stringId, avroEncode({ type: 'string' }, 'user-1'))],
    ])
    const r = await writeBatch(
      s.deps,
      eventWithKeys(
        [
          { topic: 'events', partition: 0, offset: 0, value: { id: 1 } },
          { topic: 'events', partition: 0, offset: 1, value: { id: 2 } },
        ],
        keys,
      ),
    )
    expect(await deadLetterLines(s.io, s.deps.config.dlq)).toEqual([])
    expect(r).toMatchObject({ outcome: 'registered', deadLetters: 0 })
    expect(await keyColumnType(s)).toBe('string')
    const rows = await kafkaRows(s)
    // Sorted keys, the long as exact digits (beyond 2^53), bytes as base64.
    expect(rows.get(0n)!.key).toBe('{"id":9007199254740993,"region":"eu","tag":"AQID"}')
    expect(rows.get(1n)!.key).toBe('user-1')
  })

  it('makes a record whose Avro key cannot be decoded a dead letter with a key: reason, and registers the rest', async () => {
    const s = await writerSetup({
      FLOE_ROUTES: routes({ formats: [{ topic: 'events', key: 'avro-confluent' }] }),
      FLOE_SCHEMA_REGISTRY_URL: registry.url,
    })
    const recordId = await registry.register('events-key', keySchema)
    const keys = new Map([
      [0, confluentFrame(recordId, avroEncode(keySchema, { region: 'us', id: 1n, tag: Buffer.from([]) }))],
      [1, new Uint8Array([7, 0, 0, 0, 1, 2])], // wrong magic byte
      [2, confluentFrame(999_999, new Uint8Array([2, 97]))], // an id the registry does not have
    ])
    const r = await writeBatch(
      s.deps,
      eventWithKeys(
        [0, 1, 2, 3].map((o) => ({ topic: 'events', partition: 0, offset: o, value: { id: o }, key: o === 3 ? null : undefined })),
        keys,
      ),
    )
    expect(r).toMatchObject({ outcome: 'registered', deadLetters: 2, tables: [{ table: 'db.events', rows: 2 }] })
    const rows = await kafkaRows(s)
    expect([...rows.keys()].sort()).toEqual([0n, 3n])
    expect(rows.get(0n)!.key).toBe('{"id":1,"region":"us","tag":""}')
    expect(rows.get(3n)!.key).toBeNull()
    const dead = await deadLetterLines(s.io, s.deps.config.dlq)
    expect(dead.map((d) => [d.offset, d.stage]).sort()).toEqual([
      ['1', 'decode'],
      ['2', 'decode'],
    ])
    for (const d of dead) expect(d.reason).toMatch(/^key: avro-confluent key: /)
    expect(dead.find((d) => d.offset === '2')!.reason).toContain('999999')
  })

  it('fails the batch retryably, registering nothing, when the registry is down while decoding a key', async () => {
    const s = await writerSetup({
      FLOE_ROUTES: routes({ formats: [{ topic: 'events', key: 'avro-confluent' }] }),
      FLOE_SCHEMA_REGISTRY_URL: registry.url,
      FLOE_SCHEMA_REGISTRY_TIMEOUT_MS: '500',
    })
    const keyId = await registry.register('events-key-outage', { ...keySchema, name: 'OutageKey' })
    registry.outage('503')
    try {
      const err = await writeBatch(s.deps, eventWithKeys([{ topic: 'events', partition: 0, offset: 0, value: { id: 1 } }], new Map([[0, confluentFrame(keyId, avroEncode(keySchema, { region: 'eu', id: 1n, tag: Buffer.from([]) }))]]))).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(RegistryUnavailableError)
      expect((err as RegistryUnavailableError).retryable).toBe(true)
    } finally {
      registry.outage(false)
    }
    expect((await registered(s.control)).size).toBe(0)
  })
})

describe('_kafka.key of existing tables', () => {
  it('keeps raw bytes in an existing binary key column even when the topic now has a key format', async () => {
    const before = await writerSetup({ FLOE_ROUTES: routes() })
    await writeBatch(before.deps, kafkaEvent([{ topic: 'events', partition: 0, offset: 0, key: 'k0', value: { id: 0 } }]))
    expect(await keyColumnType(before)).toBe('binary')
    const after = await writerSetup({ FLOE_ROUTES: routes({ formats: [{ topic: 'events', key: 'string' }] }) })
    const s = { ...before, deps: { ...after.deps, catalog: before.catalog, control: before.control, io: before.io } }
    const r = await writeBatch(s.deps, eventWithKeys([{ topic: 'events', partition: 0, offset: 1, value: { id: 1 } }], new Map([[1, new Uint8Array([0xff, 0x00, 0x41])]])))
    expect(r).toMatchObject({ outcome: 'registered', deadLetters: 0, tables: [{ table: 'db.events', rows: 1 }] })
    expect(await keyColumnType(s)).toBe('binary')
    const rows = await kafkaRows(s)
    expect(rows.get(0n)!.key).toEqual(new Uint8Array(Buffer.from('k0')))
    expect(rows.get(1n)!.key).toEqual(new Uint8Array([0xff, 0x00, 0x41]))
  })

  it('writes raw keys of a topic without a key format into an existing string column as UTF-8 text, else base64', async () => {
    const before = await writerSetup({ FLOE_ROUTES: routes({ formats: [{ topic: 'events', key: 'string' }] }) })
    await writeBatch(before.deps, kafkaEvent([{ topic: 'events', partition: 0, offset: 0, key: 'k0', value: { id: 0 } }]))
    expect(await keyColumnType(before)).toBe('string')
    const after = await writerSetup({ FLOE_ROUTES: routes() })
    const s = { ...before, deps: { ...after.deps, catalog: before.catalog, control: before.control, io: before.io } }
    const r = await writeBatch(
      s.deps,
      eventWithKeys(
        [
          { topic: 'events', partition: 0, offset: 1, key: 'plain', value: { id: 1 } },
          { topic: 'events', partition: 0, offset: 2, value: { id: 2 } },
        ],
        new Map([[2, new Uint8Array([0xff, 0xfe])]]),
      ),
    )
    expect(r).toMatchObject({ outcome: 'registered', deadLetters: 0 })
    const rows = await kafkaRows(s)
    expect(rows.get(0n)!.key).toBe('k0')
    expect(rows.get(1n)!.key).toBe('plain')
    expect(rows.get(2n)!.key).toBe('//4=')
  })

  it('adds a string key column when kafkaMetadata is turned on for an existing table whose topic has a key format', async () => {
    const before = await writerSetup({ FLOE_ROUTES: JSON.stringify({ defaultNamespace: 'db', routes: [{ topic: 'events', table: 'events' }] }) })
    await writeBatch(before.deps, kafkaEvent([{ topic: 'events', partition: 0, offset: 0, key: 'k0', value: { id: 0 } }]))
    expect(await keyColumnType(before)).toBeUndefined()
    const after = await writerSetup({ FLOE_ROUTES: routes({ formats: [{ topic: 'events', key: 'json' }] }) })
    const s = { ...before, deps: { ...after.deps, catalog: before.catalog, control: before.control, io: before.io } }
    const r = await writeBatch(s.deps, kafkaEvent([{ topic: 'events', partition: 0, offset: 1, key: '{"b": 2, "a": [1.5, "x"]}', value: { id: 1 } }]))
    expect(r.tables[0]).toMatchObject({ rows: 1, evolvedToSchemaId: 1 })
    expect(await keyColumnType(s)).toBe('string')
    expect((await kafkaRows(s)).get(1n)!.key).toBe('{"a":[1.5,"x"],"b":2}')
  })

  it('creates a binary key column and stores raw bytes when no topic has a key format', async () => {
    const s = await writerSetup({ FLOE_ROUTES: routes() })
    await writeBatch(s.deps, kafkaEvent([{ topic: 'events', partition: 0, offset: 0, key: 'k0', value: { id: 0 } }]))
    expect(await keyColumnType(s)).toBe('binary')
    expect((await kafkaRows(s)).get(0n)!.key).toEqual(new Uint8Array(Buffer.from('k0')))
  })
})

describe('key text', () => {
  it('is deterministic JSON: sorted keys, exact bigints, base64 bytes, Maps as objects, non-finite numbers as strings', () => {
    const a = canonicalJson({ b: [1, 2.5, null, true], a: 12345678901234567890n, m: new Map<unknown, unknown>([[2, 'x'], ['1', new Uint8Array([255])]]), n: NaN, i: -Infinity, u: undefined })
    expect(a).toBe('{"a":12345678901234567890,"b":[1,2.5,null,true],"i":"-Infinity","m":{"1":"/w==","2":"x"},"n":"NaN","u":null}')
    expect(canonicalJson({ z: 1, a: { d: 'q"', c: 0 } })).toBe(canonicalJson({ a: { c: 0, d: 'q"' }, z: 1 }))
  })

  it('is the text itself for strings and UTF-8 bytes, base64 for other bytes, JSON for the rest', () => {
    expect(keyText('abc')).toBe('abc')
    expect(keyText(null)).toBeNull()
    expect(keyText(new Uint8Array(Buffer.from('héllo')))).toBe('héllo')
    expect(keyText(new Uint8Array([0xc3]))).toBe('ww==')
    expect(keyText(42)).toBe('42')
    expect(keyText(42n)).toBe('42')
    expect(keyText({ id: 1 })).toBe('{"id":1}')
  })
})
