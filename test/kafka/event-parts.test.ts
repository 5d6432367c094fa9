/**
 * The event as partitions (lib/kafka event-parts.ts, raw-records.ts): a partition left raw is
 * exactly the records parseKafkaEvent parses, in the same order, with the same summary; the raw
 * reader reads a record exactly when readRecord parses it without a problem and with a value,
 * and reads the same offset, timestamp and bytes. Property tests over near-miss events.
 */
import * as fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { eventPartitions, parseKafkaEvent, parseRawRecord, RawRecordReader, readKafkaEvent, type EventPart, type KafkaRecord } from '../../lib/kafka/index.js'

const b64 = (s: string) => Buffer.from(s).toString('base64')
const GROUPS = ['t-0', 't-1', 'u-2', 't-01', 'nodash']

/** A record of group `key`, mostly well formed; each field sometimes what a broken producer or mapping sends. */
const recordOf = (key: string, offset: number) =>
  fc.record({
    topic: fc.oneof({ weight: 8, arbitrary: fc.constant(key.replace(/-\d+$/, '')) }, fc.constantFrom('t', 'u', '', 7)),
    partition: fc.oneof({ weight: 8, arbitrary: fc.constant(Number(/-(\d+)$/.exec(key)?.[1] ?? -1)) }, fc.constantFrom(0, 1, '1', -1)),
    offset: fc.oneof({ weight: 8, arbitrary: fc.constant(offset) }, fc.constantFrom(0, String(offset), 2 ** 53 + 2, '18446744073709551615', 1.5, null)),
    timestamp: fc.oneof({ weight: 6, arbitrary: fc.nat() }, fc.constantFrom(-1, -5, '1714521600000', 2 ** 60, null)),
    timestampType: fc.oneof({ weight: 6, arbitrary: fc.constant('CREATE_TIME') }, fc.constantFrom(undefined, null, 3)),
    key: fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, fc.string().map(b64), fc.constantFrom('a', 'ab=c', 'YQ', 5)),
    value: fc.oneof({ weight: 8, arbitrary: fc.jsonValue().map((v) => b64(JSON.stringify(v))) }, fc.constantFrom(null, 'YQ', 'Y=Q=', 'eyJ9-_', '', 12)),
    headers: fc.oneof({ weight: 6, arbitrary: fc.constant([]) }, fc.constantFrom(undefined, null, [{ h: [1, 2] }], [{ h: [300] }], 'x')),
  })

/** One group: records with increasing offsets from a random start (sometimes listed in reverse). */
const groupOf = (key: string) =>
  fc
    .tuple(fc.nat({ max: 1000 }), fc.integer({ min: 0, max: 6 }), fc.boolean())
    .chain(([start, n, reverse]) => fc.tuple(...Array.from({ length: n }, (_, i) => recordOf(key, start + 2 * i))).map((list) => [key, reverse ? [...list].reverse() : list] as const))

const eventArb = fc
  .uniqueArray(fc.constantFrom(...GROUPS), { minLength: 1, maxLength: 4 })
  .chain((keys) => fc.tuple(...keys.map(groupOf)))
  .map((groups) => ({ eventSource: 'aws:kafka', records: Object.fromEntries(groups) as Record<string, Record<string, unknown>[]> }))

/** A record as plain values: bytes as arrays (views of one buffer or another compare alike). */
const plain = (r: KafkaRecord) => ({ ...r, key: r.key && [...r.key], value: r.value && [...r.value], headers: r.headers.map((h) => ({ key: h.key, value: [...h.value] })) })
const recordsOf = (part: EventPart) => (part.raw ? part.raw.list.map((_, i) => parseRawRecord(part.raw!, i)) : part.records)

describe('readKafkaEvent', () => {
  it('raw or parsed, every partition holds what parseKafkaEvent parses, in the same order, with eventPartitions summaries', () => {
    fc.assert(
      fc.property(eventArb, fc.boolean(), (event, rawT) => {
        const parsed = parseKafkaEvent(event)
        const { parts, count } = readKafkaEvent(event, (topic) => topic === 't' || (rawT && topic === 'u'))
        expect(count).toBe(Object.values(event.records).reduce((n, l) => n + l.length, 0))
        expect(parts.flatMap(recordsOf).map(plain)).toEqual(parsed.map(plain))
        expect(parts.map((p) => p.summary)).toEqual(eventPartitions(parsed))
        for (const part of parts) {
          if (!part.raw) continue
          // Left raw only where plain: the group's own topic and partition, safe offsets increasing.
          expect(part.topic === 't' || part.topic === 'u').toBe(true)
          const offsets = part.raw.list.map((r) => r.offset as number)
          expect(offsets.every((o, i) => Number.isSafeInteger(o) && (i === 0 || o > offsets[i - 1]!))).toBe(true)
        }
      }),
      { numRuns: 1500 },
    )
  })

  it('the raw reader reads a record exactly when readRecord parses it cleanly with a value, and reads the same', () => {
    const reader = new RawRecordReader()
    let read = 0
    fc.assert(
      fc.property(eventArb, (event) => {
        for (const part of readKafkaEvent(event, () => true).parts) {
          if (!part.raw) continue
          for (let i = 0; i < part.raw.list.length; i++) {
            const r = parseRawRecord(part.raw, i)
            const ok = reader.read(part.raw, i)
            expect(ok).toBe(r.error === undefined && r.value !== null)
            if (!ok) continue
            read++
            expect([...reader.value]).toEqual([...r.value!])
            expect(BigInt(reader.offset)).toBe(r.offset)
            expect(reader.timestamp).toBe(r.timestamp)
          }
        }
      }),
      { numRuns: 1500 },
    )
    expect(read).toBeGreaterThan(500)
  })

  it('a group another group also claims, one out of order or with text offsets is parsed, not raw', () => {
    const rec = (topic: string, partition: number, offset: unknown) => ({ topic, partition, offset, timestamp: 1, value: b64('{}') })
    const rawKeys = (records: Record<string, unknown[]>) => readKafkaEvent({ eventSource: 'aws:kafka', records }, () => true).parts.filter((p) => p.raw).map((p) => p.key)
    expect(rawKeys({ 't-0': [rec('t', 0, 1), rec('t', 0, 2)], 't-1': [rec('t', 1, 1)] })).toEqual(['t-0', 't-1'])
    // A record of group t-1 claims partition 0: t-0 is parsed with it.
    expect(rawKeys({ 't-0': [rec('t', 0, 1)], 't-1': [rec('t', 1, 1), rec('t', 0, 5)] })).toEqual([])
    expect(rawKeys({ 't-1': [rec('t', 0, 5)], 't-0': [rec('t', 0, 1)] })).toEqual([])
    expect(rawKeys({ 't-0': [rec('t', 0, 2), rec('t', 0, 1)] })).toEqual([])
    expect(rawKeys({ 't-0': [rec('t', 0, 1), rec('t', 0, 1)] })).toEqual([])
    expect(rawKeys({ 't-0': [rec('t', 0, '1')] })).toEqual([])
    expect(rawKeys({ 't-0': [rec('t', 0, 2 ** 53)] })).toEqual([])
  })
})
