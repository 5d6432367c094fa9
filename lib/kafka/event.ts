/**
 * The Lambda Kafka event at the boundary: MSK (`eventSource: "aws:kafka"`) and self-managed
 * Kafka (`"SelfManagedKafka"`, or `"aws:SelfManagedKafka"` as Powertools' sample has it).
 *
 * Checked once here, trusted afterwards. A malformed *event* (not an object, no `records`, an
 * unknown `eventSource`, a `records` entry that is not an array) throws EventShapeError: nothing
 * in it can be trusted. A malformed *record* (bad base64, missing offset, bad headers…) is
 * returned with an `error` and becomes a dead letter; it never throws, so one bad record cannot
 * stall its partition.
 *
 * Offsets are parsed to bigint without going through a lossy number: decimal strings and
 * lossless-json numbers are taken digit for digit; a JS number is accepted only while it is a
 * safe integer (beyond 2^53 it has already lost precision, so the record is flagged).
 *
 * This module reads one record; event-parts.ts reads the event into partitions, base64.ts the
 * keys and values.
 */
import { sinkBase64, decodeBase64, type Base64Sink } from './base64.js'
import { partitionKey, splitPartitionKey } from './partition-key.js'

export const KAFKA_EVENT_SOURCES = ['aws:kafka', 'SelfManagedKafka', 'aws:SelfManagedKafka'] as const

export interface KafkaHeader {
  key: string
  value: Uint8Array
}

export interface KafkaRecord {
  topic: string
  partition: number
  /** -1n only on a flagged record whose offset could not be read. */
  offset: bigint
  /** Epoch milliseconds (NaN only on a flagged record). */
  timestamp: number
  timestampType?: string
  key: Uint8Array | null
  value: Uint8Array | null
  headers: KafkaHeader[]
  /** The key and value exactly as the event carried them (base64), for dead letters. */
  rawKey?: string | null
  rawValue?: string | null
  /** Set when the record is malformed: it becomes a dead letter with this reason. */
  error?: string
}

/**
 * A tombstone: a record whose value is null (a delete marker on a compacted topic). It has no
 * row to write; callers make it a dead letter so it is never silent. Takes the value, so a
 * `false` narrows it to bytes.
 */
export function isTombstone(value: KafkaRecord['value']): value is null {
  return value === null
}

export interface RawKafkaEvent {
  eventSource: (typeof KAFKA_EVENT_SOURCES)[number]
  eventSourceArn?: string
  bootstrapServers?: string
  records: Record<string, unknown[]>
}

/** Type guard: the event's outer shape (not its records) is a Kafka event. */
export function isKafkaEvent(event: unknown): event is RawKafkaEvent {
  return eventShapeProblem(event) === undefined
}

export function eventShapeProblem(event: unknown): string | undefined {
  if (typeof event !== 'object' || event === null || Array.isArray(event))
    return `expected an object, got ${describe(event)}`
  const e = event as Record<string, unknown>
  if (!(KAFKA_EVENT_SOURCES as readonly unknown[]).includes(e.eventSource))
    return `eventSource is ${describe(e.eventSource)}, expected one of ${KAFKA_EVENT_SOURCES.join(', ')}`
  if (typeof e.records !== 'object' || e.records === null || Array.isArray(e.records))
    return `records is ${describe(e.records)}, expected an object keyed "<topic>-<partition>"`
  for (const [k, list] of Object.entries(e.records)) {
    if (!Array.isArray(list)) return `records[${JSON.stringify(k)}] is ${describe(list)}, expected an array of records`
  }
  return undefined
}

/** Parse one record; never throws. `groupKey` supplies topic/partition when the record lacks them. */
export function parseRecord(raw: unknown, groupKey: string): KafkaRecord {
  return readRecord(raw, groupKey, splitGroupKey(groupKey), undefined)
}

export function readRecord(raw: unknown, groupKey: string, fallback: { topic: string; partition: number }, sink: Base64Sink | undefined): KafkaRecord {
  // One shape for every record (every field set here, in this order): the code that reads records stays monomorphic.
  const record: KafkaRecord = {
    topic: fallback.topic,
    partition: fallback.partition,
    offset: -1n,
    timestamp: Number.NaN,
    timestampType: undefined,
    key: null,
    value: null,
    headers: NO_HEADERS,
    rawKey: null,
    rawValue: null,
    error: undefined,
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    record.error = `record in ${JSON.stringify(groupKey)} is ${describe(raw)}, expected an object`
    return record
  }
  const r = raw as Record<string, unknown>
  // The problems list is made only for a malformed record (no array per record).
  let problems: string[] | undefined

  const topic = r.topic
  if (typeof topic === 'string' && topic.length > 0) record.topic = topic
  else (problems ??= []).push(`topic is ${describe(topic)}`)

  const partition = parsePartition(r.partition)
  if (partition !== undefined) record.partition = partition
  else (problems ??= []).push(`partition is ${describe(r.partition)}`)

  const offset = parseOffset(r.offset)
  if (typeof offset === 'bigint') record.offset = offset
  else (problems ??= []).push(offset)

  const timestamp = parseTimestamp(r.timestamp)
  if (timestamp !== undefined) record.timestamp = timestamp
  else (problems ??= []).push(`timestamp is ${describe(r.timestamp)}`)

  const timestampType = r.timestampType
  if (timestampType !== undefined && timestampType !== null) {
    if (typeof timestampType === 'string') record.timestampType = timestampType
    else (problems ??= []).push(`timestampType is ${describe(timestampType)}`)
  }

  const key = r.key
  if (key !== undefined && key !== null) {
    const bytes = readBytes('key', key, sink)
    if (typeof bytes === 'string') (problems ??= []).push(bytes)
    else record.key = bytes
    if (typeof key === 'string') record.rawKey = key
  }
  const value = r.value
  if (value !== undefined && value !== null) {
    const bytes = readBytes('value', value, sink)
    if (typeof bytes === 'string') (problems ??= []).push(bytes)
    else record.value = bytes
    if (typeof value === 'string') record.rawValue = value
  }

  if (r.headers !== undefined && r.headers !== null) {
    const headers = parseHeaders(r.headers)
    if (Array.isArray(headers)) record.headers = headers
    else (problems ??= []).push(headers)
  }

  if (problems !== undefined) record.error = `malformed record ${partitionKey(record.topic, record.partition)}@${record.offset}: ${problems.join('; ')}`
  return record
}

/** The headers of every record without any (shared, never written to). */
export const NO_HEADERS: KafkaHeader[] = Object.freeze([]) as unknown as KafkaHeader[]

/** A key's or value's bytes, or the reason it has none. */
function readBytes(field: 'key' | 'value', text: unknown, sink: Base64Sink | undefined): Uint8Array | string {
  if (typeof text !== 'string') return `${field} is ${describe(text)}, expected base64 text`
  const bytes = sink !== undefined ? sinkBase64(sink, text) : decodeBase64(text)
  return bytes ?? `${field} is not valid base64: ${JSON.stringify(clip(text))}`
}

/** Topic and partition from the group key `"<topic>-<partition>"` (partition -1 when it is not one). */
export function splitGroupKey(groupKey: string): { topic: string; partition: number } {
  return splitPartitionKey(groupKey) ?? { topic: groupKey, partition: -1 }
}

function parsePartition(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{1,10}$/.test(v) ? Number(v) : Number.NaN
  return Number.isInteger(n) && n >= 0 && n <= 2_147_483_647 ? n : undefined
}

/** Offset as bigint, or the reason it is not one. */
export function parseOffset(v: unknown): bigint | string {
  let digits: string | undefined
  if (typeof v === 'number') {
    if (!Number.isInteger(v) || v < 0) return `offset is ${describe(v)}, expected a non-negative integer`
    if (!Number.isSafeInteger(v)) return `offset ${v} is beyond 2^53 as a JSON number and has lost precision`
    return BigInt(v)
  }
  if (typeof v === 'string') digits = v
  else if (typeof v === 'bigint') digits = v >= 0n ? v.toString() : undefined
  else if (isLosslessNumber(v)) digits = v.value
  if (digits === undefined || !/^\d{1,20}$/.test(digits)) return `offset is ${describe(v)}, expected a non-negative integer`
  const n = BigInt(digits)
  return n <= 9_223_372_036_854_775_807n ? n : `offset ${digits} exceeds a signed 64-bit integer`
}

function isLosslessNumber(v: unknown): v is { value: string } {
  return typeof v === 'object' && v !== null && (v as { isLosslessNumber?: unknown }).isLosslessNumber === true && typeof (v as { value?: unknown }).value === 'string'
}

export function parseTimestamp(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?\d{1,16}$/.test(v) ? Number(v) : isLosslessNumber(v) ? Number(v.value) : Number.NaN
  return isTimestampMillis(n) ? n : undefined
}

/** Kafka uses -1 for "no timestamp"; anything else must be a safe integer of epoch millis. */
export const isTimestampMillis = (n: number): boolean => Number.isSafeInteger(n) && n >= -1

/**
 * Whether parseTimestamp takes `v`, a number checked in place: the raw reader and the event's
 * summary ask this per record, and parseTimestamp's number result would be a heap number each time.
 */
export const isTimestamp = (v: unknown): boolean => (typeof v === 'number' ? isTimestampMillis(v) : parseTimestamp(v) !== undefined)

export function parseHeaders(v: unknown): KafkaHeader[] | string {
  if (v === undefined || v === null) return []
  if (!Array.isArray(v)) return `headers is ${describe(v)}, expected an array`
  // Most records carry `headers: []`: the shared empty list, not a new array per record.
  if (v.length === 0) return NO_HEADERS
  const out: KafkaHeader[] = []
  for (let i = 0; i < v.length; i++) {
    const h: unknown = v[i]
    if (typeof h !== 'object' || h === null || Array.isArray(h)) return `headers[${i}] is ${describe(h)}, expected {name: bytes}`
    for (const [name, bytes] of Object.entries(h)) {
      if (!Array.isArray(bytes) || !bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255))
        return `headers[${i}].${name} is ${describe(bytes)}, expected an array of bytes (0-255)`
      out.push({ key: name, value: Uint8Array.from(bytes as number[]) })
    }
  }
  return out
}

function clip(s: string, n = 60): string {
  return s.length > n ? `${s.slice(0, n)}…` : s
}

function describe(v: unknown): string {
  if (v === undefined) return 'missing'
  if (v === null) return 'null'
  if (Array.isArray(v)) return `an array of ${v.length}`
  if (typeof v === 'string') return `string ${JSON.stringify(clip(v))}`
  if (typeof v === 'object') return 'an object'
  if (typeof v === 'bigint') return `bigint ${v}`
  return `${typeof v} ${String(v)}`
}

export { describe as describeValue }
