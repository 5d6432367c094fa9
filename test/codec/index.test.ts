import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { createDecoders, formatSelector } from '../../lib/codec/index.js'
import { loadConfig } from '../../lib/config.js'
import { ConfigError } from '../../lib/errors.js'
import type { KafkaRecord } from '../../lib/kafka/event.js'
import { coerceRecord } from '../../lib/writer/columnar/index.js'

const noAws = { glue: () => { throw new Error('Glue not expected') }, secrets: () => { throw new Error('Secrets Manager not expected') } }
const utf8 = (s: string) => new TextEncoder().encode(s)
const record = (topic: string, value: Uint8Array | null, extra: Partial<KafkaRecord> = {}): KafkaRecord => ({ topic, partition: 0, offset: 0n, timestamp: 0, key: null, value, headers: [], ...extra })

function decoders(settings: Record<string, string> = {}) {
  return createDecoders(loadConfig({}, { FLOE_WAREHOUSE: 'file:///tmp/floe-codec-test', ...settings }), noAws)
}

describe('json values', () => {
  const d = decoders()

  it('a UTF-8 JSON object decodes; integers past 2^53 stay exact as bigint', async () => {
    expect(await d.decodeValue(record('t', utf8('{"id": 12345678901234567890, "n": 1.5, "s": "é", "a": [1]}')))).toEqual({
      ok: true,
      value: { id: 12345678901234567890n, n: 1.5, s: 'é', a: [1] },
    })
  })

  it('numbers a double cannot hold keep their exact text, and the writer coerces them exactly', async () => {
    const out = await d.decodeValue(record('t', utf8('{"price": 1234567890.123456789, "small": 0.1, "ratio": 1.5e-7}')))
    expect(out.ok && String(out.value.price)).toBe('1234567890.123456789')
    expect(out.ok && out.value.small).toBe(0.1)
    expect(out.ok && out.value.ratio).toBe(1.5e-7)
    if (!out.ok) throw new Error(out.reason)
    const schema = { type: 'struct' as const, fields: [{ id: 1, name: 'price', required: true, type: 'decimal(19, 9)' }] }
    expect(coerceRecord(schema, { price: out.value.price }).row.price).toBe(1234567890123456789n)
  })

  it.each([
    ['invalid JSON', utf8('{"id": '), /^json value: invalid JSON: .* in "\{\\"id\\": "$/],
    ['an array', utf8('[1, 2]'), /^json value: JSON value is an array, expected an object$/],
    ['a number', utf8('42'), /JSON value is number, expected an object/],
    ['null', utf8('null'), /JSON value is null, expected an object/],
    ['invalid UTF-8', Uint8Array.from([0x7b, 0xff, 0x7d]), /^json value: not valid UTF-8 \(3 bytes\)$/],
  ])('%s is a dead letter with its reason', async (_, bytes, reason) => {
    const out = await d.decodeValue(record('t', bytes))
    expect(out.ok).toBe(false)
    expect(!out.ok && out.reason).toMatch(reason)
  })

  it('a null value is a tombstone, and a record flagged by the event parser keeps its reason', async () => {
    expect(await d.decodeValue(record('t', null))).toEqual({ ok: false, reason: 'value is null (tombstone)', tombstone: true })
    expect(await d.decodeValue(record('t', utf8('{}'), { error: 'malformed record t-0@-1: offset is missing' }))).toEqual({
      ok: false,
      reason: 'malformed record t-0@-1: offset is missing',
    })
  })
})

describe('string and bytes values', () => {
  const routes = JSON.stringify({ routes: [{ table: 't' }], formats: [{ topic: 'logs', value: 'string' }, { topicPattern: '^bin\\.', value: 'bytes', key: 'json' }] })
  const d = decoders({ FLOE_ROUTES: routes })

  it('string wraps the text as { value } with a one-column schema', async () => {
    expect(await d.decodeValue(record('logs', utf8('line one')))).toEqual({
      ok: true,
      value: { value: 'line one' },
      schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'value', required: true, type: 'string' }] },
    })
  })

  it('bytes wraps a copy of the bytes', async () => {
    const out = await d.decodeValue(record('bin.x', Uint8Array.from([0, 255])))
    expect(out).toMatchObject({ ok: true, value: { value: Uint8Array.from([0, 255]) }, schema: { fields: [{ type: 'binary' }] } })
  })

  it('json keys may be any JSON value', async () => {
    expect(await d.decodeKey(record('bin.x', null, { key: utf8('"user-1"') }))).toEqual({ ok: true, value: 'user-1' })
    expect(await d.decodeKey(record('bin.x', null, { key: utf8('{"a":') }))).toMatchObject({ ok: false, reason: expect.stringMatching(/^json key: invalid JSON/) })
  })
})

describe('format selection', () => {
  it('the first rule matching the topic and setting the part wins, else FLOE_VALUE_FORMAT (values) or none (keys)', () => {
    const select = formatSelector(
      {
        formats: [
          { topic: 'orders', key: 'string' },
          { topicPattern: '^ord', value: 'avro-confluent' },
          { topic: 'orders', value: 'json' },
          { value: 'bytes' },
        ],
      },
      'json-schema-envelope',
    )
    expect(select('orders', 'value')).toBe('avro-confluent')
    expect(select('orders', 'key')).toBe('string')
    expect(select('anything', 'value')).toBe('bytes')
    expect(select('anything', 'key')).toBeUndefined()
    expect(formatSelector({ formats: [] }, 'json-schema-envelope')('x', 'value')).toBe('json-schema-envelope')
  })

  it('avro-confluent without FLOE_SCHEMA_REGISTRY_URL is a ConfigError up front', () => {
    expect(() => decoders({ FLOE_VALUE_FORMAT: 'avro-confluent' })).toThrow(ConfigError)
    expect(() => decoders({ FLOE_VALUE_FORMAT: 'avro-confluent' })).toThrow(/FLOE_SCHEMA_REGISTRY_URL: not set, but .* uses avro-confluent/)
  })
})

describe('lazy loading', () => {
  it('JSON topics never load avsc; the first Avro topic does', () => {
    const script = `
      import { createRequire } from 'node:module'
      import { createDecoders } from './lib/codec/index.ts'
      import { loadConfig } from './lib/config.ts'
      const require = createRequire(import.meta.url)
      const avscPath = require.resolve('avsc')
      const loaded = () => Object.keys(require.cache).some((p) => p === avscPath)
      const config = loadConfig({}, { FLOE_WAREHOUSE: 'file:///tmp/x', FLOE_ROUTES: JSON.stringify({ routes: [{ table: 't' }], formats: [{ topic: 'g', value: 'avro-glue' }] }) })
      const d = createDecoders(config, { glue: () => { throw new Error('no') }, secrets: () => { throw new Error('no') } })
      const rec = (topic, value) => ({ topic, partition: 0, offset: 0n, timestamp: 0, key: null, value, headers: [] })
      await d.decodeValue(rec('j', new TextEncoder().encode('{"a":1}')))
      const before = loaded()
      await d.decodeValue(rec('g', new Uint8Array([1])))
      await import('./lib/codec/avro.ts')
      console.log(JSON.stringify({ before, after: loaded() }))
    `
    const root = fileURLToPath(new URL('../../', import.meta.url))
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' })
    expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual({ before: false, after: true })
  })
})
