import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { EventShapeError } from '../../lib/errors.js'
import { eventPartitions, isKafkaEvent, isTombstone, parseKafkaEvent, parseOffset, recordBytes, batchBytes } from '../../lib/kafka/index.js'

const eventsDir = fileURLToPath(new URL('../events/', import.meta.url))
type RawRecord = Record<string, unknown>
interface TestEvent {
  eventSource: string
  records: Record<string, (RawRecord | string)[]>
}
const cache = new Map<string, unknown>()
/** A fresh copy of a real event sample per call (tests may mutate it). */
function loadEvent(name: string): TestEvent {
  if (!cache.has(name)) cache.set(name, JSON.parse(readFileSync(`${eventsDir}${name}`, 'utf8')))
  return structuredClone(cache.get(name)) as TestEvent
}
const b64 = (s: string) => Buffer.from(s).toString('base64')
const text = (u: Uint8Array | null) => (u === null ? null : Buffer.from(u).toString('utf8'))

describe('parseKafkaEvent', () => {
  it('decodes the MSK sample: key, value, headers, offset as bigint', () => {
    const [r, ...rest] = parseKafkaEvent(loadEvent('msk-base.json'))
    expect(rest).toHaveLength(0)
    expect(r).toMatchObject({ topic: 'mytopic', partition: 0, offset: 15n, timestamp: 1545084650987, timestampType: 'CREATE_TIME' })
    expect(text(r!.key)).toBe('recordKey')
    expect(text(r!.value)).toBe('{"key":"value"}')
    expect(r!.headers).toEqual([{ key: 'headerKey', value: new Uint8Array(Buffer.from('headerValue')) }])
    expect(r!.rawValue).toBe('eyJrZXkiOiJ2YWx1ZSJ9')
    expect(r!.error).toBeUndefined()
  })

  it('accepts both self-managed eventSource spellings', () => {
    const event = loadEvent('self-managed.json')
    expect(parseKafkaEvent(event)).toHaveLength(1)
    event.eventSource = 'SelfManagedKafka'
    expect(isKafkaEvent(event)).toBe(true)
    expect(parseKafkaEvent(event)[0]!.offset).toBe(15n)
  })

  it('treats an absent key and a null key alike', () => {
    const records = parseKafkaEvent(loadEvent('msk-key-absent-null.json'))
    expect(records.map((r) => text(r.key))).toEqual(['recordKey', null, null])
    expect(records.map((r) => r.rawKey)).toEqual(['cmVjb3JkS2V5', null, null])
    expect(records.every((r) => r.error === undefined)).toBe(true)
    expect(JSON.parse(text(records[1]!.value)!)).toEqual({ id: 12345, name: 'product5', price: 45 })
  })

  it('ignores extra record fields such as valueSchemaMetadata', () => {
    const [r] = parseKafkaEvent(loadEvent('msk-schema-metadata.json'))
    expect(r).toMatchObject({ topic: 'gsr_proto', partition: 0, offset: 18n })
    expect(r!.error).toBeUndefined()
  })

  it('a null value is kept as null, not an error (tombstone)', () => {
    const event = loadEvent('msk-base.json')
    const first = event.records['mytopic-0']![0] as RawRecord
    first.value = null
    const [r] = parseKafkaEvent(event)
    expect(r!.value).toBeNull()
    expect(r!.rawValue).toBeNull()
    expect(r!.error).toBeUndefined()
  })

  it('a null value, and only that, is a tombstone (an empty value is not)', () => {
    const event = loadEvent('msk-base.json')
    const first = event.records['mytopic-0']![0] as RawRecord
    event.records['mytopic-0'] = [{ ...first, value: null }, { ...first, offset: Number(first.offset) + 1, value: '' }]
    const records = parseKafkaEvent(event)
    expect(records.map((r) => isTombstone(r.value))).toEqual([true, false])
  })

  it('uses the record fields for a topic with dashes, and a string partition', () => {
    const event = loadEvent('msk-base.json')
    const rec = event.records['mytopic-0']![0] as RawRecord
    event.records = { 'orders-eu-west-12': [{ ...rec, topic: 'orders-eu-west', partition: '12' }] }
    const [r] = parseKafkaEvent(event)
    expect(r).toMatchObject({ topic: 'orders-eu-west', partition: 12 })
    expect(eventPartitions([r!])[0]!.key).toBe('orders-eu-west-12')
  })

  it('parses string offsets beyond 2^53 exactly, and sorts each partition by offset', () => {
    const event = loadEvent('msk-base.json')
    const rec = event.records['mytopic-0']![0] as RawRecord
    event.records['mytopic-0'] = [
      { ...rec, offset: '9007199254740995' },
      { ...rec, offset: 7 },
      { ...rec, offset: '9007199254740993' },
    ]
    event.records['other-1'] = [{ ...rec, topic: 'other', partition: 1, offset: 3 }]
    const records = parseKafkaEvent(event)
    expect(records.map((r) => `${r.topic}:${r.offset}`)).toEqual(['mytopic:7', 'mytopic:9007199254740993', 'mytopic:9007199254740995', 'other:3'])
    expect(eventPartitions(records)).toEqual([
      { topic: 'mytopic', partition: 0, key: 'mytopic-0', firstOffset: 7n, lastOffset: 9007199254740995n, records: 3, maxTimestamp: 1545084650987 },
      { topic: 'other', partition: 1, key: 'other-1', firstOffset: 3n, lastOffset: 3n, records: 1, maxTimestamp: 1545084650987 },
    ])
  })

  it('flags an unsafe JSON-number offset instead of silently rounding it', () => {
    expect(parseOffset(2 ** 53 + 2)).toMatch(/lost precision/)
    expect(parseOffset('18446744073709551615')).toMatch(/exceeds a signed 64-bit/)
    expect(parseOffset({ isLosslessNumber: true, value: '9007199254740993' })).toBe(9007199254740993n)
  })

  it('takes a timestamp of safe-integer epoch millis or -1 (none), as a number, digits or a lossless number, and flags the rest', () => {
    const base = loadEvent('msk-base.json').records['mytopic-0']![0] as RawRecord
    const at = (timestamp: unknown, offset: number) => ({ ...base, offset, timestamp })
    const taken: unknown[] = [-1, 0, 1_714_521_600_000, 2 ** 53 - 1, '1714521600000', '-1', { isLosslessNumber: true, value: '1714521600000' }]
    const flagged: unknown[] = [-2, 1.5, 2 ** 53, Number.NaN, '-2', '1.5', '', 'x', true, {}, []]
    const event = { eventSource: 'aws:kafka', records: { 'mytopic-0': [...taken, ...flagged].map(at) } }
    const records = parseKafkaEvent(event)
    expect(records.slice(0, taken.length).map((r) => r.error)).toEqual(taken.map(() => undefined))
    expect(records.slice(0, taken.length).map((r) => r.timestamp)).toEqual([-1, 0, 1_714_521_600_000, 2 ** 53 - 1, 1_714_521_600_000, -1, 1_714_521_600_000])
    for (const r of records.slice(taken.length)) expect(r.error).toMatch(/timestamp/)
  })

  it('a malformed record is returned with an error naming the problem, not thrown', () => {
    const event = loadEvent('msk-base.json')
    const rec = event.records['mytopic-0']![0] as RawRecord
    event.records['mytopic-0'] = [
      { ...rec, offset: 20, value: 'not base64!' },
      { ...rec, offset: undefined },
      { ...rec, offset: 22, headers: [{ h: [1, 999] }] },
      { ...rec, offset: 23 },
      'garbage',
    ]
    const records = parseKafkaEvent(event)
    const errors = records.map((r) => r.error ?? 'ok')
    expect(errors).toHaveLength(5)
    expect(records.find((r) => r.offset === 20n)!.error).toMatch(/mytopic-0@20: value is not valid base64: "not base64!"/)
    expect(records.filter((r) => r.offset === -1n).map((r) => r.error)).toEqual([
      expect.stringMatching(/offset is missing/),
      expect.stringMatching(/record in "mytopic-0" is string "garbage", expected an object/),
    ])
    expect(records.find((r) => r.offset === 22n)!.error).toMatch(/headers\[0\]\.h is an array of 2, expected an array of bytes/)
    expect(records.find((r) => r.offset === 23n)!.error).toBeUndefined()
    // the flagged string record falls back to the group key's topic and partition
    expect(records.find((r) => r.error?.includes('garbage'))).toMatchObject({ topic: 'mytopic', partition: 0 })
  })

  it.each([
    [null, /expected an object, got null/],
    [[], /expected an object, got an array of 0/],
    [{ records: {} }, /eventSource is missing/],
    [{ eventSource: 'aws:sqs', records: {} }, /eventSource is string "aws:sqs"/],
    [{ eventSource: 'aws:kafka' }, /records is missing/],
    [{ eventSource: 'aws:kafka', records: { 't-0': {} } }, /records\["t-0"\] is an object, expected an array/],
  ])('rejects a malformed event %j with EventShapeError', (event, message) => {
    expect(() => parseKafkaEvent(event)).toThrow(EventShapeError)
    expect(() => parseKafkaEvent(event)).toThrow(message)
    expect(isKafkaEvent(event)).toBe(false)
  })

  it('an event with no records is valid and empty', () => {
    expect(parseKafkaEvent({ eventSource: 'aws:kafka', records: {} })).toEqual([])
  })

  it('measures payload bytes: key + value + headers', () => {
    const records = parseKafkaEvent(loadEvent('msk-base.json'))
    expect(recordBytes(records[0]!)).toBe('recordKey'.length + '{"key":"value"}'.length + 'headerKey'.length + 'headerValue'.length)
    expect(batchBytes(records)).toBe(recordBytes(records[0]!))
  })

  it('round-trips any bytes through base64', () => {
    const event = loadEvent('msk-base.json')
    const first = event.records['mytopic-0']![0] as RawRecord
    first.value = b64('héllo')
    expect(text(parseKafkaEvent(event)[0]!.value)).toBe('héllo')
  })
})
