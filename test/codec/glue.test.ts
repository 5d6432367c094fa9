/**
 * avro-glue. Glue has no local server, so GetSchemaVersion is answered by aws-sdk-client-mock
 * (the only mocked AWS client in Floe's tests); everything else is real.
 */
import { randomUUID } from 'node:crypto'
import { EntityNotFoundException, GetSchemaVersionCommand, GlueClient, InternalServiceException } from '@aws-sdk/client-glue'
import { mockClient } from 'aws-sdk-client-mock'
import { afterEach, describe, expect, it } from 'vitest'
import { glueFrame, parseGlueFrame } from '../../lib/codec/glue.js'
import { createDecoders } from '../../lib/codec/index.js'
import { loadConfig } from '../../lib/config.js'
import { RegistryUnavailableError } from '../../lib/errors.js'
import type { KafkaRecord } from '../../lib/kafka/event.js'
import { avroEncode, everythingDatum, everythingDecoded, everythingSchema, userV1, userV2 } from './avro-fixtures.js'

const glue = new GlueClient({ region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } })
const glueMock = mockClient(glue)
afterEach(() => glueMock.reset())

function decoders() {
  const config = loadConfig({}, { FLOE_WAREHOUSE: 'file:///tmp/floe-codec-test', FLOE_VALUE_FORMAT: 'avro-glue' })
  return createDecoders(config, { glue: () => glue, secrets: () => { throw new Error('not used') } })
}

/** Serve these schema versions from the mocked GetSchemaVersion. */
function serve(versions: Record<string, unknown>) {
  glueMock.on(GetSchemaVersionCommand).callsFake((input: { SchemaVersionId?: string }) => {
    const schema = versions[input.SchemaVersionId ?? '']
    if (schema === undefined) throw new EntityNotFoundException({ message: 'Schema version is not found.', $metadata: {} })
    return { SchemaVersionId: input.SchemaVersionId, DataFormat: 'AVRO', SchemaDefinition: JSON.stringify(schema), Status: 'AVAILABLE' }
  })
}

let offset = 0n
const record = (value: Uint8Array): KafkaRecord => ({ topic: 'glue-topic', partition: 0, offset: offset++, timestamp: 0, key: null, value, headers: [] })

describe('avro-glue', () => {
  it('decodes uncompressed and zlib-compressed frames, every logical type', async () => {
    const id = randomUUID()
    serve({ [id]: everythingSchema })
    const d = decoders()
    const payload = avroEncode(everythingSchema, everythingDatum)
    for (const compression of ['none', 'zlib'] as const) {
      const out = await d.decodeValue(record(glueFrame(id, payload, compression)))
      expect(out).toMatchObject({ ok: true, value: everythingDecoded })
    }
    // one GetSchemaVersion for both records: cached per version id
    expect(glueMock.commandCalls(GetSchemaVersionCommand).map((c) => c.args[0].input)).toEqual([{ SchemaVersionId: id }])
  })

  it('a schema change mid-stream: v1 and v2 records decode with their own schemas', async () => {
    const v1 = randomUUID()
    const v2 = randomUUID()
    serve({ [v1]: userV1, [v2]: userV2 })
    const d = decoders()
    const a = await d.decodeValue(record(glueFrame(v1, avroEncode(userV1, { id: 1n, name: 'a' }))))
    const b = await d.decodeValue(record(glueFrame(v2, avroEncode(userV2, { id: 2n, name: 'b', email: null }))))
    expect(a).toMatchObject({ ok: true, value: { id: 1n, name: 'a' } })
    expect(b).toMatchObject({ ok: true, value: { id: 2n, name: 'b', email: null } })
    expect(b.ok && b.schema?.fields.map((f) => `${f.name}:${f.required}`)).toEqual(['id:true', 'name:true', 'email:false'])
  })

  it('an unknown schema version (EntityNotFoundException) is a dead letter with the reason', async () => {
    serve({})
    const id = randomUUID()
    const out = await decoders().decodeValue(record(glueFrame(id, Uint8Array.from([2, 2, 65]))))
    expect(out).toEqual({ ok: false, reason: `avro-glue value: Glue schema version ${id} not found (EntityNotFoundException: Schema version is not found.)` })
  })

  it('a Glue outage throws RegistryUnavailableError and is not cached', async () => {
    const id = randomUUID()
    glueMock.on(GetSchemaVersionCommand).rejects(new InternalServiceException({ message: 'boom', $metadata: {} }))
    const d = decoders()
    const frame = glueFrame(id, avroEncode(userV1, { id: 1n, name: 'a' }))
    await expect(d.decodeValue(record(frame))).rejects.toThrow(RegistryUnavailableError)
    await expect(d.decodeValue(record(frame))).rejects.toThrow(/Glue GetSchemaVersion .* failed: InternalServiceException: boom/)
    glueMock.reset()
    serve({ [id]: userV1 })
    expect(await d.decodeValue(record(frame))).toMatchObject({ ok: true, value: { id: 1n } })
  })

  it('a GetSchemaVersion that does not answer within FLOE_SCHEMA_REGISTRY_TIMEOUT_MS is an outage (no Confluent registry configured)', async () => {
    glueMock.on(GetSchemaVersionCommand).callsFake(() => new Promise(() => {}))
    const config = loadConfig({}, { FLOE_WAREHOUSE: 'file:///tmp/floe-codec-test', FLOE_VALUE_FORMAT: 'avro-glue', FLOE_SCHEMA_REGISTRY_TIMEOUT_MS: '200' })
    const d = createDecoders(config, { glue: () => glue, secrets: () => { throw new Error('not used') } })
    const err = await d.decodeValue(record(glueFrame(randomUUID(), Uint8Array.from([2])))).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(RegistryUnavailableError)
    expect((err as Error).message).toMatch(/timed out after 200 ms/)
  })

  it('a non-Avro schema version is a dead letter', async () => {
    const id = randomUUID()
    glueMock.on(GetSchemaVersionCommand).resolves({ DataFormat: 'PROTOBUF', SchemaDefinition: 'syntax = "proto3";' })
    const out = await decoders().decodeValue(record(glueFrame(id, Uint8Array.from([1]))))
    expect(!out.ok && out.reason).toMatch(`Glue schema version ${id} is PROTOBUF`)
  })

  it.each([
    ['too short', Uint8Array.from([3, 0, 1, 2]), /needs at least 18 bytes .* got 4/],
    ['wrong header version', Uint8Array.from([0, ...new Uint8Array(20)]), /header version byte is 0, expected 3/],
    ['unknown compression', Uint8Array.from([3, 9, ...new Uint8Array(20)]), /compression byte is 9, expected 0 \(none\) or 5 \(zlib\)/],
    ['zlib that does not inflate', Uint8Array.from([3, 5, ...new Uint8Array(16), 1, 2, 3]), /does not inflate/],
  ])('a malformed frame (%s) is a dead letter without asking Glue', async (_, bytes, reason) => {
    const out = await decoders().decodeValue(record(bytes))
    expect(!out.ok && out.reason).toMatch(reason)
    expect(glueMock.commandCalls(GetSchemaVersionCommand)).toHaveLength(0)
  })

  it('frames round-trip the schema version id', () => {
    const id = randomUUID()
    expect(parseGlueFrame(glueFrame(id, Uint8Array.from([1, 2]), 'zlib'))).toEqual({ schemaVersionId: id, payload: Uint8Array.from([1, 2]) })
  })
})
