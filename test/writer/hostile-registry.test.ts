/**
 * Issue 15's registry cases through the real writer handler (DynamoDB Local + s3rver + the
 * loopback schema registry + a loopback Secrets Manager endpoint, so the real SDK client runs):
 * rotated credentials are re-read once on a 401, then the batch fails retryably; credentials in
 * the registry URL never appear in errors, logs or dead letters.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager'
import { afterEach, describe, expect, it } from 'vitest'
import { createWriterHandler } from '../../functions/writer.js'
import { confluentFrame } from '../../lib/codec/confluent.js'
import { createDecoders } from '../../lib/codec/index.js'
import { loadConfig } from '../../lib/config.js'
import { ConfigError, RegistryUnavailableError } from '../../lib/errors.js'
import { logJsonReplacer } from '../../lib/log.js'
import { avroEncode, userV1, userV2 } from '../codec/avro-fixtures.js'
import { startTestRegistry, type TestRegistry } from '../helpers/registry.js'
import { checkpoints, kafkaEvent, writerSetup, type EventRecord } from './support.js'
import { deadLines, lambdaContext } from './readback.js'

const cleanup: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c()
})

/** A loopback Secrets Manager answering GetSecretValue with whatever `secret.value` holds; counts calls. */
async function secretsEndpoint(secret: { value: { username: string; password: string } }): Promise<{ client: SecretsManagerClient; calls: () => number }> {
  let calls = 0
  const server: Server = createServer((req, res) => {
    if (req.headers['x-amz-target'] === 'secretsmanager.GetSecretValue') calls++
    res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' })
    res.end(JSON.stringify({ SecretString: JSON.stringify(secret.value) }))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  cleanup.push(() => new Promise((r) => server.close(r)))
  const client = new SecretsManagerClient({
    region: 'us-east-1',
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  })
  return { client, calls: () => calls }
}

const avro = (offset: number, id: number, datum: unknown, schema: unknown = userV1): EventRecord => ({
  topic: 'users',
  partition: 0,
  offset,
  value: confluentFrame(id, avroEncode(schema, datum)),
})

async function registrySetup(registry: TestRegistry, url: string, secrets?: SecretsManagerClient) {
  const s = await writerSetup({
    FLOE_ROUTES: JSON.stringify({ defaultNamespace: 'db', routes: [{ table: 'users' }] }),
    FLOE_VALUE_FORMAT: 'avro-confluent',
    FLOE_SCHEMA_REGISTRY_URL: url,
    FLOE_SCHEMA_REGISTRY_TIMEOUT_MS: '2000',
    ...(secrets ? { FLOE_SCHEMA_REGISTRY_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:registry' } : {}),
  })
  const decoders = await createDecoders(s.deps.config, {
    glue: () => {
      throw new Error('no Glue here')
    },
    secrets: () => secrets!,
  })
  const handler = createWriterHandler({ ...s.deps, decoders, router: undefined })
  return { s, run: (records: EventRecord[], id: string) => handler(kafkaEvent(records), lambdaContext(id)) }
}

describe('schema registry credentials through the writer handler', () => {
  it('after a rotation the secret is re-read once on the 401; if it still fails the batch fails retryably and nothing moves', async () => {
    const registry = await startTestRegistry({ auth: { username: 'floe', password: 'old' } })
    cleanup.push(() => registry.close())
    const secret = { value: { username: 'floe', password: 'old' } }
    const sm = await secretsEndpoint(secret)
    const v1 = await registry.register('users-value', userV1)
    const { s, run } = await registrySetup(registry, registry.url, sm.client)
    expect(await run([avro(0, v1, { id: 1n, name: 'a' })], 'r1')).toMatchObject({ outcome: 'registered', tables: [{ rows: 1 }] })
    expect(sm.calls()).toBe(1)

    // Rotation: the registry and the secret both change; the writer still holds the old header.
    registry.setAuth({ username: 'floe', password: 'new' })
    secret.value = { username: 'floe', password: 'new' }
    const v2 = await registry.register('users-value', userV2)
    expect(await run([avro(1, v2, { id: 2n, name: 'b', email: null }, userV2)], 'r2')).toMatchObject({ outcome: 'registered', deadLetters: 0, tables: [{ rows: 1 }] })
    expect(sm.calls()).toBe(2)

    // The registry changes again, but the secret does not: re-read once, then a retryable failure.
    registry.setAuth({ username: 'floe', password: 'newer' })
    const v3 = await registry.register('users-value', { ...userV2, fields: [...userV2.fields, { name: 'age', type: ['null', 'int'], default: null }] })
    const failed = run([avro(2, v3, { id: 3n, name: 'c', email: null, age: null }, { ...userV2, fields: [...userV2.fields, { name: 'age', type: ['null', 'int'], default: null }] })], 'r3')
    await expect(failed).rejects.toBeInstanceOf(RegistryUnavailableError)
    await expect(failed).rejects.toMatchObject({ retryable: true, message: expect.stringMatching(/answered 401 even after re-reading the credentials secret/) })
    expect(sm.calls()).toBe(3)
    expect(await checkpoints(s.control)).toEqual({ 'users-0': '2' })
  })

  it('credentials in the registry URL authenticate but never appear in dead letters, errors or logs', async () => {
    const registry = await startTestRegistry({ auth: { username: 'floe', password: 'hunter2' } })
    cleanup.push(() => registry.close())
    const id = await registry.register('users-value', userV1)
    const url = registry.url.replace('http://', 'http://floe:hunter2@')
    const { s, run } = await registrySetup(registry, url)
    // A known id decodes with the URL's credentials; an unknown one is a dead letter naming the registry.
    const out = await run([avro(0, id, { id: 1n, name: 'a' }), avro(1, 999, { id: 2n, name: 'b' })], 'r1')
    expect(out).toMatchObject({ outcome: 'registered', deadLetters: 1, tables: [{ rows: 1 }] })
    const [dead] = await deadLines(s)
    expect(dead!.reason).toBe(`avro-confluent value: schema id 999 not found in registry ${registry.url}`)

    // An outage: the error names the registry, not its password.
    registry.outage('503')
    const failed = run([avro(2, 998, { id: 3n, name: 'c' })], 'r2')
    await expect(failed).rejects.toBeInstanceOf(RegistryUnavailableError)
    const err = (await failed.catch((e: unknown) => e)) as Error
    expect(err.message).toMatch(/answered 503/)
    expect(err.message).not.toContain('hunter2')
    // Log lines go through the logger's JSON replacer (lib/log.ts), which redacts any URL
    // credentials (in our messages, other libraries' errors and their stacks alike). Tests run
    // with logs silent, so the replacer is exercised with what a log line would carry.
    const line = JSON.stringify({ message: 'batch failed', url, error: { message: `fetch ${url} failed`, stack: `Error: ${url}\n    at x` } }, logJsonReplacer)
    expect(line).toContain('http://***@127.0.0.1')
    expect(line).not.toContain('hunter2')
    // A bad setting's error shows the value, without the password.
    expect(() => loadConfig({}, { FLOE_WAREHOUSE: 'file:///tmp/x', FLOE_SCHEMA_REGISTRY_URL: 'http://floe:hunter2@' })).toThrow(ConfigError)
    expect(() => loadConfig({}, { FLOE_WAREHOUSE: 'file:///tmp/x', FLOE_SCHEMA_REGISTRY_URL: 'http://floe:hunter2@' })).not.toThrow(/hunter2/)
  })
})
