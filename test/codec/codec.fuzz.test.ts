/**
 * Arbitrary bytes never crash a decoder: every format answers ok or a reason. (The registry is
 * up, so nothing may throw; with avro-confluent the frames point at real schema ids.)
 */
import * as fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { confluentFrame } from '../../lib/codec/confluent.js'
import { createDecoders, type Decoders } from '../../lib/codec/index.js'
import { loadConfig, VALUE_FORMATS } from '../../lib/config.js'
import type { KafkaRecord } from '../../lib/kafka/event.js'
import { startTestRegistry, type TestRegistry } from '../helpers/registry.js'
import { avroEncode, everythingDatum, everythingSchema, userV1 } from './avro-fixtures.js'

let registry: TestRegistry
let decoders: Decoders
let ids: number[]
beforeAll(async () => {
  registry = await startTestRegistry()
  ids = [await registry.register('a', everythingSchema), await registry.register('b', userV1)]
  const formats = VALUE_FORMATS.filter((f) => f !== 'avro-glue').map((value) => ({ topic: value, value, key: value }))
  const config = loadConfig(
    {},
    { FLOE_WAREHOUSE: 'file:///tmp/floe-fuzz', FLOE_SCHEMA_REGISTRY_URL: registry.url, FLOE_ROUTES: JSON.stringify({ routes: [{ table: 't' }], formats }) },
  )
  decoders = createDecoders(config, { glue: () => { throw new Error('no Glue') }, secrets: () => { throw new Error('no secrets') } })
})
afterAll(() => registry.close())

const record = (topic: string, bytes: Uint8Array): KafkaRecord => ({ topic, partition: 0, offset: 0n, timestamp: 0, key: bytes, value: bytes, headers: [] })

const answered = async (d: Decoders, r: KafkaRecord) => {
  const [v, k] = await Promise.all([d.decodeValue(r), d.decodeKey(r)])
  return [v, k].every((out) => (out.ok ? typeof out.value !== 'undefined' : typeof out.reason === 'string' && out.reason.length > 0))
}

describe('decoders (fuzz)', () => {
  it('arbitrary bytes in every format are decoded or refused with a reason, never thrown', async () => {
    const formats = VALUE_FORMATS.filter((f) => f !== 'avro-glue')
    await expect(
      fc.assert(
        fc.asyncProperty(fc.constantFrom(...formats), fc.uint8Array({ maxLength: 64 }), async (topic, bytes) => answered(decoders, record(topic, bytes))),
        { numRuns: 1_000 },
      ),
    ).resolves.toBeUndefined()
  })

  it('corrupted Avro datums behind a valid schema id are refused with a reason, never thrown', async () => {
    const good = avroEncode(everythingSchema, everythingDatum)
    const corrupt = fc.tuple(fc.nat({ max: good.length - 1 }), fc.integer({ min: 0, max: 255 }), fc.nat({ max: good.length })).map(([at, byte, cut]) => {
      const bytes = good.slice(0, Math.max(cut, at + 1))
      bytes[at] = byte
      return bytes
    })
    await expect(
      fc.assert(
        fc.asyncProperty(fc.constantFrom(...ids), fc.oneof(corrupt, fc.uint8Array({ maxLength: 40 })), async (id, payload) =>
          answered(decoders, record('avro-confluent', confluentFrame(id, payload))),
        ),
        { numRuns: 1_000 },
      ),
    ).resolves.toBeUndefined()
  })
})
