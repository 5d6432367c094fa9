import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager'
import { mockClient } from 'aws-sdk-client-mock'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDecoders } from '../../lib/codec/index.js'
import { confluentFrame, ConfluentRegistry } from '../../lib/codec/confluent.js'
import { loadConfig } from '../../lib/config.js'
import { createClients } from '../../lib/clients.js'
import { RegistryUnavailableError } from '../../lib/errors.js'
import type { KafkaRecord } from '../../lib/kafka/event.js'
import { coerceRecord } from '../../lib/writer/columnar/index.js'
import { startTestRegistry, type TestRegistry } from '../helpers/registry.js'
import { avroEncode, everythingDatum, everythingDecoded, everythingSchema, userV1, userV2 } from './avro-fixtures.js'

let registry: TestRegistry
beforeAll(async () => {
  registry = await startTestRegistry()
})
afterAll(() => registry.close())

let offset = 0n
function record(topic: string, value: Uint8Array | null, key: Uint8Array | null = null): KafkaRecord {
  return { topic, partition: 0, offset: offset++, timestamp: 0, key, value, headers: [] }
}

function decoders(extra: Record<string, string> = {}, url = registry.url) {
  const config = loadConfig(
    {},
    { FLOE_WAREHOUSE: 'file:///tmp/floe-codec-test', FLOE_VALUE_FORMAT: 'avro-confluent', FLOE_SCHEMA_REGISTRY_URL: url, FLOE_SCHEMA_REGISTRY_TIMEOUT_MS: '500', ...extra },
  )
  return createDecoders(config, createClients({ region: 'us-east-1' }))
}

describe('the loopback test registry', () => {
  it('speaks the subjects and versions API with the registry error codes', async () => {
    const local = await startTestRegistry({ firstId: 100 })
    try {
      const v1 = await local.register('s-value', userV1)
      const again = await local.register('s-value', userV1)
      const v2 = await local.register('s-value', userV2)
      expect([v1, again, v2]).toEqual([100, 100, 101])
      const get = async (path: string) => {
        const res = await fetch(`${local.url}${path}`)
        return { status: res.status, body: await res.json() }
      }
      expect(await get('/subjects')).toEqual({ status: 200, body: ['s-value'] })
      expect(await get('/subjects/s-value/versions')).toEqual({ status: 200, body: [1, 2] })
      expect(await get('/subjects/s-value/versions/latest')).toMatchObject({ status: 200, body: { subject: 's-value', version: 2, id: 101 } })
      expect(await get('/schemas/ids/100')).toEqual({ status: 200, body: { schema: JSON.stringify(userV1) } })
      expect(await get('/schemas/ids/7')).toMatchObject({ status: 404, body: { error_code: 40403 } })
      expect(await get('/subjects/nope/versions')).toMatchObject({ status: 404, body: { error_code: 40401 } })
      expect(await get('/subjects/s-value/versions/9')).toMatchObject({ status: 404, body: { error_code: 40402 } })
    } finally {
      await local.close()
    }
  })
})

describe('avro-confluent', () => {
  it('decodes every Avro type and logical type into the documented shape, with the Iceberg schema', async () => {
    const id = await registry.register('everything-value', everythingSchema)
    const d = decoders()
    const out = await d.decodeValue(record('everything', confluentFrame(id, avroEncode(everythingSchema, everythingDatum))))
    expect(out).toMatchObject({ ok: true, value: everythingDecoded })
    expect(out.ok && out.schema?.fields.map((f) => f.name)).toEqual(Object.keys(everythingDecoded))
  })

  it("decoded values are accepted by the writer's coercion with exact decimals and timestamps", async () => {
    const id = await registry.register('everything-value', everythingSchema)
    const out = await decoders().decodeValue(record('everything', confluentFrame(id, avroEncode(everythingSchema, everythingDatum))))
    if (!out.ok || !out.schema) throw new Error(`decode failed: ${JSON.stringify(out)}`)
    const { row } = coerceRecord(out.schema, out.value)
    expect(row).toMatchObject({
      l: 9007199254740993n,
      dec: -123n, // unscaled
      decFixed: 1_000_000_000_000_000_001n,
      day: 19_844,
      tMillis: 45_296_789_000n,
      tMicros: 45_296_789_012n,
      tsMillis: 1_714_567_890_123_000n,
      tsMicros: 1_714_567_890_123_456n,
      tsNanos: 1_714_567_890_123_456_789n,
      localMillis: 1_714_567_890_123_000n,
      localMicros: -1n,
    })
  })

  it('a schema change mid-stream: v1 and v2 records of one topic both decode, each with its own schema', async () => {
    const v1 = await registry.register('users-value', userV1)
    const v2 = await registry.register('users-value', userV2)
    expect(v2).not.toBe(v1)
    const d = decoders()
    const a = await d.decodeValue(record('users', confluentFrame(v1, avroEncode(userV1, { id: 1n, name: 'ann' }))))
    const b = await d.decodeValue(record('users', confluentFrame(v2, avroEncode(userV2, { id: 2n, name: 'bob', email: { string: 'b@x' } }))))
    const c = await d.decodeValue(record('users', confluentFrame(v1, avroEncode(userV1, { id: 3n, name: 'cy' }))))
    expect([a, b, c].map((r) => r.ok && r.value)).toEqual([
      { id: 1n, name: 'ann' },
      { id: 2n, name: 'bob', email: 'b@x' },
      { id: 3n, name: 'cy' },
    ])
    expect(a.ok && a.schema?.fields.map((f) => f.name)).toEqual(['id', 'name'])
    expect(b.ok && b.schema?.fields).toEqual([
      { id: 1, name: 'id', required: true, type: 'long' },
      { id: 2, name: 'name', required: true, type: 'string' },
      { id: 3, name: 'email', required: false, type: 'string' },
    ])
  })

  it('fetches each schema id once per container, however many records use it', async () => {
    const local = await startTestRegistry()
    try {
      const id = await local.register('once-value', userV1)
      const d = decoders({}, local.url)
      const frames = [1n, 2n, 3n].map((n) => confluentFrame(id, avroEncode(userV1, { id: n, name: 'x' })))
      await Promise.all(frames.map((f) => d.decodeValue(record('once', f))))
      await d.decodeValue(record('once', frames[0]!))
      expect(local.requests.filter((r) => r.startsWith('GET'))).toEqual([`GET /schemas/ids/${id}`])
    } finally {
      await local.close()
    }
  })

  it('an unknown schema id is a dead letter with the reason, not an outage', async () => {
    const out = await decoders().decodeValue(record('t', confluentFrame(987_654, avroEncode(userV1, { id: 1n, name: 'x' }))))
    expect(out).toEqual({ ok: false, reason: expect.stringMatching(/^avro-confluent value: schema id 987654 not found in registry http:\/\/127\.0\.0\.1:\d+$/) })
  })

  it.each([
    ['a frame shorter than 5 bytes', Uint8Array.from([0, 0, 0]), /needs at least 5 bytes .* got 3/],
    ['a wrong magic byte (plain JSON on an Avro topic)', new TextEncoder().encode('{"id":1}'), /magic byte is 0x7b, expected 0x00/],
  ])('%s is a dead letter', async (_, bytes, reason) => {
    const out = await decoders().decodeValue(record('t', bytes))
    expect(out.ok).toBe(false)
    expect(!out.ok && out.reason).toMatch(reason)
  })

  it('a payload that does not match its schema (truncated, trailing bytes) is a dead letter', async () => {
    const id = await registry.register('users-value', userV1)
    const good = avroEncode(userV1, { id: 5n, name: 'abcdef' })
    const truncated = await decoders().decodeValue(record('t', confluentFrame(id, good.subarray(0, good.length - 2))))
    expect(!truncated.ok && truncated.reason).toMatch(new RegExp(`schema id ${id}: Avro payload of \\d+ bytes is truncated`))
    const trailing = await decoders().decodeValue(record('t', confluentFrame(id, Uint8Array.from([...good, 1, 2]))))
    expect(!trailing.ok && trailing.reason).toMatch(/2 trailing bytes/)
  })

  it('a schema id that is not Avro is a dead letter naming its type', async () => {
    const id = await registry.register('proto-value', 'syntax = "proto3"; message M { int32 a = 1; }', { schemaType: 'PROTOBUF' })
    const out = await decoders().decodeValue(record('t', confluentFrame(id, Uint8Array.from([8, 1]))))
    expect(!out.ok && out.reason).toMatch(`schema id ${id} is PROTOBUF, but the topic's format is avro-confluent`)
  })

  it.each([
    ['answers 503', '503' as const, /answered 503/],
    ['resets connections', 'reset' as const, /failed: fetch failed/],
    ['hangs past FLOE_SCHEMA_REGISTRY_TIMEOUT_MS', 'hang' as const, /timed out after 500 ms/],
  ])('a registry that %s throws RegistryUnavailableError (retryable), and recovers', async (_, mode, message) => {
    const local = await startTestRegistry()
    try {
      const id = await local.register('down-value', userV1)
      const d = decoders({}, local.url)
      const frame = confluentFrame(id, avroEncode(userV1, { id: 1n, name: 'x' }))
      local.outage(mode)
      const err = await d.decodeValue(record('down', frame)).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(RegistryUnavailableError)
      expect((err as RegistryUnavailableError).retryable).toBe(true)
      expect((err as Error).message).toMatch(message)
      local.outage(false)
      // the failure was not cached: the retried batch decodes
      expect(await d.decodeValue(record('down', frame))).toMatchObject({ ok: true, value: { id: 1n, name: 'x' } })
    } finally {
      await local.close()
    }
  })

  it('a 404 without a registry error code (wrong URL) is an outage, not a dead letter', async () => {
    const d = decoders({}, `${registry.url}/wrong-prefix`)
    const id = await registry.register('users-value', userV1)
    await expect(d.decodeValue(record('t', confluentFrame(id, avroEncode(userV1, { id: 1n, name: 'x' }))))).rejects.toThrow(/404 without a registry error code/)
  })

  it('an unreachable registry throws RegistryUnavailableError', async () => {
    const closed = await startTestRegistry()
    const url = closed.url
    await closed.close()
    const d = decoders({}, url)
    await expect(d.decodeValue(record('t', confluentFrame(1, Uint8Array.from([2, 2, 65]))))).rejects.toBeInstanceOf(RegistryUnavailableError)
  })

  it('resolves schema references (named types registered under another subject)', async () => {
    const address = { type: 'record', name: 'Address', namespace: 'com.example', fields: [{ name: 'city', type: 'string' }] }
    await registry.register('address', address)
    const person = { type: 'record', name: 'Person', namespace: 'com.example', fields: [{ name: 'home', type: 'com.example.Address' }] }
    const id = await registry.register('person-value', person, { references: [{ name: 'com.example.Address', subject: 'address', version: 1 }] })
    const full = { ...person, fields: [{ name: 'home', type: address }] }
    const out = await decoders().decodeValue(record('people', confluentFrame(id, avroEncode(full, { home: { city: 'Oslo' } }))))
    expect(out).toMatchObject({ ok: true, value: { home: { city: 'Oslo' } } })
  })

  it('keys decode with the key format of FLOE_ROUTES.formats; without one they stay bytes', async () => {
    const keyId = await registry.register('keyed-key', JSON.stringify('string'))
    const valueId = await registry.register('users-value', userV1)
    const routes = JSON.stringify({ routes: [{ table: 't' }], formats: [{ topic: 'keyed', key: 'avro-confluent' }] })
    const d = decoders({ FLOE_ROUTES: routes })
    const key = confluentFrame(keyId, avroEncode('string', 'user-1'))
    const value = confluentFrame(valueId, avroEncode(userV1, { id: 1n, name: 'x' }))
    expect(await d.decodeKey(record('keyed', value, key))).toEqual({ ok: true, value: 'user-1', type: 'string' })
    expect(await d.decodeKey(record('other', value, Uint8Array.from([1, 2])))).toEqual({ ok: true, value: Uint8Array.from([1, 2]), type: 'binary' })
    expect(await d.decodeKey(record('keyed', value, null))).toEqual({ ok: true, value: null })
  })

  it('basic auth credentials come from a Secrets Manager secret {"username","password"}', async () => {
    const secured = await startTestRegistry({ auth: { username: 'floe', password: 's3cret' } })
    // Secrets Manager has no local server (DynamoDB Local and s3rver do not implement it): the real
    // SDK client, with GetSecretValue for this ARN only answered by aws-sdk-client-mock (as in
    // test/catalog/rest-config.test.ts).
    const arn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:registry'
    const secrets = new SecretsManagerClient({ region: 'us-east-1' })
    const secretsMock = mockClient(secrets)
    secretsMock.on(GetSecretValueCommand, { SecretId: arn }).resolves({ SecretString: JSON.stringify({ username: 'floe', password: 's3cret' }) })
    try {
      const id = await secured.register('auth-value', userV1)
      const config = loadConfig(
        {},
        {
          FLOE_WAREHOUSE: 'file:///tmp/floe-codec-test',
          FLOE_VALUE_FORMAT: 'avro-confluent',
          FLOE_SCHEMA_REGISTRY_URL: secured.url,
          FLOE_SCHEMA_REGISTRY_SECRET_ARN: arn,
        },
      )
      const d = createDecoders(config, { glue: () => { throw new Error('no Glue here') }, secrets: () => secrets })
      const out = await d.decodeValue(record('auth', confluentFrame(id, avroEncode(userV1, { id: 7n, name: 'z' }))))
      expect(out).toMatchObject({ ok: true, value: { id: 7n } })
      expect(secretsMock.commandCalls(GetSecretValueCommand, { SecretId: arn })).toHaveLength(1)
      // and without credentials the same registry refuses: an outage, not a dead letter
      const anonymous = new ConfluentRegistry({ url: secured.url, timeoutMs: 500 })
      await expect(anonymous.schema(id)).rejects.toThrow(/answered 401/)
    } finally {
      await secured.close()
      secretsMock.restore()
    }
  })
})
