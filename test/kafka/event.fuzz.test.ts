import * as fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { EventShapeError } from '../../lib/errors.js'
import { parseKafkaEvent, parseRecord, type KafkaRecord } from '../../lib/kafka/index.js'

/** JSON-ish values, including the near-misses a broken producer or mapping could send. */
const jsonish = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.constant(undefined),
    fc.boolean(),
    fc.integer(),
    fc.double(),
    fc.bigInt(),
    fc.string(),
    fc.base64String(),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string(), tie('value'), { maxKeys: 4 }),
  ),
})).value

const recordish = fc.record(
  {
    topic: fc.oneof(fc.string(), jsonish),
    partition: fc.oneof(fc.nat(), fc.nat().map(String), jsonish),
    offset: fc.oneof(fc.nat(), fc.bigInt({ min: 0n, max: 2n ** 64n }).map(String), jsonish),
    timestamp: fc.oneof(fc.nat(), jsonish),
    timestampType: fc.oneof(fc.constantFrom('CREATE_TIME', 'LOG_APPEND_TIME'), jsonish),
    key: fc.oneof(fc.base64String(), fc.constant(null), jsonish),
    value: fc.oneof(fc.base64String(), fc.constant(null), jsonish),
    headers: fc.oneof(fc.array(fc.dictionary(fc.string(), fc.array(fc.nat({ max: 300 }), { maxLength: 4 }), { maxKeys: 2 }), { maxLength: 3 }), jsonish),
  },
  { requiredKeys: [] },
)

const eventish = fc.oneof(
  jsonish,
  fc.record(
    {
      eventSource: fc.oneof(fc.constantFrom('aws:kafka', 'SelfManagedKafka', 'aws:SelfManagedKafka'), jsonish),
      records: fc.oneof(fc.dictionary(fc.string(), fc.oneof(fc.array(fc.oneof(recordish, jsonish), { maxLength: 4 }), jsonish), { maxKeys: 3 }), jsonish),
    },
    { requiredKeys: [] },
  ),
)

describe('Kafka event boundary (fuzz)', () => {
  it('arbitrary events are parsed or rejected with EventShapeError, nothing else', () => {
    expect(() =>
      fc.assert(
      fc.property(eventish, (event) => {
        try {
          return Array.isArray(parseKafkaEvent(event))
        } catch (err) {
          return err instanceof EventShapeError
        }
      }),
      { numRuns: 2_000 },
      ),
    ).not.toThrow()
  })

  it('arbitrary records are either parsed completely or flagged with a reason', () => {
    const complete = (r: KafkaRecord) =>
      r.topic.length > 0 &&
      Number.isInteger(r.partition) &&
      r.partition >= 0 &&
      r.offset >= 0n &&
      r.offset < 2n ** 63n &&
      Number.isSafeInteger(r.timestamp) &&
      (r.key === null || r.key instanceof Uint8Array) &&
      (r.value === null || r.value instanceof Uint8Array) &&
      r.headers.every((h) => typeof h.key === 'string' && h.value instanceof Uint8Array)
    expect(() =>
      fc.assert(
      fc.property(fc.oneof(recordish, jsonish), fc.string(), (raw, groupKey) => {
        const r = parseRecord(raw, groupKey)
        return r.error === undefined ? complete(r) : r.error.length > 0
      }),
      { numRuns: 5_000 },
      ),
    ).not.toThrow()
  })

  it('well-formed records always parse, with the exact offset', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.nat({ max: 2_147_483_647 }),
        fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }),
        fc.uint8Array(),
        (topic, partition, offset, bytes) => {
          const value = Buffer.from(bytes).toString('base64')
          const r = parseRecord({ topic, partition, offset: offset.toString(), timestamp: 1, value, headers: [] }, 'x')
          expect(r.error).toBeUndefined()
          expect(r.offset).toBe(offset)
          expect(r.value).toEqual(bytes)
        },
      ),
    )
  })
})
