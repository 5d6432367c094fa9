/**
 * Generated input: JSON records (narrow: 10 mixed-type fields incl. a struct and a list; wide:
 * 200 scalar columns) as Kafka log records, cut into MSK events of at most 6 MB the way the event
 * source mapping cuts them, and the same records as NDJSON for DuckDB.
 */
import { writeFileSync } from 'node:fs'
import { buildEvent, eventRecordBytes, MAX_PAYLOAD_BYTES, type KafkaEvent, type LogRecord } from '../../lib/local/kafka-log.js'

const CITIES = ['Oslo', 'Lisboa', 'München', 'Zürich', 'São Paulo', 'Kyiv', 'Nairobi', 'Lima']
const T0 = 1_714_557_600_000

/** ~10 mixed-type fields: long, long, timestamp string, double, double, boolean, string, string, list<string>, struct. */
export function narrowRecord(i: number): Record<string, unknown> {
  return {
    id: i,
    user_id: (i * 7919) % 100_000,
    ts: new Date(T0 + i * 37).toISOString(),
    amount: Math.round(i * 13.37) / 100 + 0.5,
    score: i / 3 + 0.25,
    ok: i % 3 === 0,
    city: CITIES[i % CITIES.length],
    session: `s-${(i * 2654435761) % 4294967296}`,
    tags: i % 4 === 0 ? null : ['a', `t${i % 10}`],
    device: { os: i % 2 ? 'ios' : 'android', version: `${i % 17}.${i % 5}` },
  }
}

/** 200 scalar columns (long, double, string, boolean in turn), plus the fields used for routing. */
export function wideRecord(i: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const r: Record<string, unknown> = { ...extra }
  for (let c = 0; c < 200; c++) {
    const name = `c${String(c).padStart(3, '0')}`
    switch (c % 4) {
      case 0:
        r[name] = (i * (c + 1)) % 1_000_003
        break
      case 1:
        r[name] = ((i + c) % 10_000) / 7 + 0.5
        break
      case 2:
        r[name] = `v${(i * 31 + c) % 977}`
        break
      default:
        r[name] = (i + c) % 2 === 0
    }
  }
  return r
}

/**
 * The records as the writer Lambda and DuckDB receive them. Each event is held as its JSON text
 * in a Buffer — outside the V8 heap, as one invocation's process holds only its own event: a
 * million records kept as parsed event objects (~300 MB of base64 strings) would make every
 * major GC of the writer mark them, a cost no Lambda invocation has. Take an event with
 * `eventOf`, inside what is timed: the Lambda runtime parses the payload too.
 */
export interface Dataset {
  name: string
  records: number
  /** Bytes of JSON (the NDJSON without newlines): what "MB of JSON" means. */
  jsonBytes: number
  /** Each MSK event's JSON text. */
  payloads: Buffer[]
  /** Records in each event. */
  eventRecords: number[]
  /** One NDJSON line per record, in order (event after event). */
  ndjson: Buffer
}

/** An event of the dataset, parsed from its payload as the Lambda runtime parses it. */
export const eventOf = (payload: Buffer): KafkaEvent => JSON.parse(payload.toString('utf8')) as KafkaEvent

/** The dataset's first `events` events alone (a warm-up pass). */
export const firstEvents = (ds: Dataset, events: number): Dataset => ({ ...ds, payloads: ds.payloads.slice(0, events), eventRecords: ds.eventRecords.slice(0, events) })

const enc = new TextEncoder()

/** `count` records spread round-robin over `partitions` Kafka partitions of `topic`. */
export function makeDataset(name: string, count: number, make: (i: number) => Record<string, unknown>, opts: { topic?: string; partitions?: number; maxEventBytes?: number } = {}): Dataset {
  const topic = opts.topic ?? 'bench'
  const partitions = opts.partitions ?? 1
  const lines: string[] = []
  const log: LogRecord[] = []
  const offsets = new Array<bigint>(partitions).fill(0n)
  let jsonBytes = 0
  for (let i = 0; i < count; i++) {
    const line = JSON.stringify(make(i))
    lines.push(line)
    const value = enc.encode(line)
    jsonBytes += value.length
    const p = i % partitions
    log.push({ topic, partition: p, offset: offsets[p]!++, timestamp: T0 + i, key: null, value })
  }
  const payloads: Buffer[] = []
  const eventRecords: number[] = []
  for (const batch of cutBatches(log, opts.maxEventBytes)) {
    payloads.push(Buffer.from(JSON.stringify(buildEvent(batch))))
    eventRecords.push(batch.length)
  }
  return { name, records: count, jsonBytes, payloads, eventRecords, ndjson: Buffer.from(lines.join('\n') + '\n') }
}

/** Consecutive records into events of at most 6 MB (the synchronous invocation payload limit). */
export function cutEvents(log: LogRecord[], maxPayloadBytes = MAX_PAYLOAD_BYTES): KafkaEvent[] {
  return cutBatches(log, maxPayloadBytes).map((batch) => buildEvent(batch))
}

function cutBatches(log: LogRecord[], maxPayloadBytes = MAX_PAYLOAD_BYTES): LogRecord[][] {
  const batches: LogRecord[][] = []
  let batch: LogRecord[] = []
  let bytes = 1024
  for (const r of log) {
    const size = eventRecordBytes(r)
    if (batch.length > 0 && bytes + size > maxPayloadBytes) {
      batches.push(batch)
      batch = []
      bytes = 1024
    }
    batch.push(r)
    bytes += size
  }
  if (batch.length) batches.push(batch)
  return batches
}

/** The first `records` NDJSON lines of the dataset (all when omitted) into `path`. */
export function writeNdjson(path: string, ds: Dataset, records = ds.records): void {
  let end = 0
  for (let i = 0; i < records; i++) end = ds.ndjson.indexOf(0x0a, end) + 1
  writeFileSync(path, ds.ndjson.subarray(0, end))
}
