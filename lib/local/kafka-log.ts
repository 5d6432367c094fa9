/**
 * The local stand-in for a Kafka cluster: an append-only in-memory log of topic-partitions, and
 * the `aws:kafka` event shape the event source mapping (esm.ts) builds from it. Records carry
 * the time they become readable on the mapping's clock, so a producer that writes over time can
 * be simulated deterministically. It is not a Kafka broker.
 */

/** One record as produced to the log. Offsets are bigint: Kafka offsets are 64-bit. */
export interface LogRecord {
  topic: string
  partition: number
  offset: bigint
  timestamp: number
  key: Uint8Array | null
  value: Uint8Array | null
  headers?: { key: string; value: Uint8Array }[]
  /**
   * When the record becomes readable, in ms on the mapping's clock (which starts at 0); default 0,
   * already there. The mapping's batching window is measured on this clock.
   */
  availableAt?: number
}

/** What the mapping sends a function (the subset of the MSK event Floe reads). */
export interface KafkaEvent {
  eventSource: 'aws:kafka'
  eventSourceArn: string
  bootstrapServers: string
  records: Record<string, KafkaEventRecord[]>
}

/** The self-managed Kafka event (Confluent Cloud, Redpanda, Aiven, a broker of your own): no ARN, the brokers instead. */
export interface SelfManagedKafkaEvent {
  eventSource: 'SelfManagedKafka'
  bootstrapServers: string
  records: Record<string, KafkaEventRecord[]>
}

export interface KafkaEventRecord {
  topic: string
  partition: number
  offset: number | string
  timestamp: number
  timestampType: 'CREATE_TIME' | 'LOG_APPEND_TIME'
  key?: string | null
  value: string | null
  headers: Record<string, number[]>[]
}

export const MAX_PAYLOAD_BYTES = 6 * 1024 * 1024

/** "topic-partition", the key of a partition in the log and in the event's `records`. */
export const tpKey = (topic: string, partition: number) => `${topic}-${partition}`

/** An append-only in-memory log: topics → partitions → records, with offsets that may have gaps. */
export class KafkaLog {
  private readonly partitions = new Map<string, LogRecord[]>()

  append(record: Omit<LogRecord, 'offset'> & { offset?: bigint }): LogRecord {
    const key = tpKey(record.topic, record.partition)
    const list = this.partitions.get(key) ?? []
    if (!this.partitions.has(key)) this.partitions.set(key, list)
    const last = list.at(-1)
    const offset = record.offset ?? (last ? last.offset + 1n : 0n)
    if (last && offset <= last.offset) throw new Error(`${key}: offset ${offset} is not after ${last.offset}`)
    if (last && (record.availableAt ?? 0) < (last.availableAt ?? 0)) {
      throw new Error(`${key}: offset ${offset} available at ${record.availableAt ?? 0} ms, before offset ${last.offset} (${last.availableAt ?? 0} ms)`)
    }
    const stored = { ...record, offset }
    list.push(stored)
    return stored
  }

  partitionKeys(): string[] {
    return [...this.partitions.keys()].sort()
  }

  /** Records of one partition at or after `from`. */
  from(key: string, from: bigint): LogRecord[] {
    return this.records(key).slice(this.indexOf(key, from))
  }

  /** All records of one partition, in offset order (read-only: the log owns the array). */
  records(key: string): readonly LogRecord[] {
    return this.partitions.get(key) ?? []
  }

  /** Index in `records(key)` of the first record at or after offset `from` (binary search: offsets have gaps). */
  indexOf(key: string, from: bigint): number {
    const list = this.records(key)
    let lo = 0
    let hi = list.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (list[mid]!.offset < from) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  /** The offset after the last record of a partition (Kafka's log-end offset). */
  endOffset(key: string): bigint {
    const last = this.partitions.get(key)?.at(-1)
    return last ? last.offset + 1n : 0n
  }

  size(): number {
    let n = 0
    for (const list of this.partitions.values()) n += list.length
    return n
  }
}

const b64 = (bytes: Uint8Array | null) => (bytes === null ? null : Buffer.from(bytes).toString('base64'))

export function toEventRecord(r: LogRecord): KafkaEventRecord {
  return {
    topic: r.topic,
    partition: r.partition,
    offset: r.offset <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(r.offset) : r.offset.toString(),
    timestamp: r.timestamp,
    timestampType: 'CREATE_TIME',
    key: b64(r.key),
    value: b64(r.value),
    headers: (r.headers ?? []).map((h) => ({ [h.key]: [...h.value] })),
  }
}

/** Approximate JSON size of one event record (what counts against the 6 MB payload). */
export function eventRecordBytes(r: LogRecord): number {
  const base64Len = (b: Uint8Array | null) => (b === null ? 4 : Math.ceil(b.length / 3) * 4 + 2)
  let headers = 2
  for (const h of r.headers ?? []) headers += h.key.length + 8 + h.value.length * 4
  return 160 + r.topic.length + base64Len(r.key) + base64Len(r.value) + headers
}

export function buildEvent(records: LogRecord[], arn = 'arn:aws:kafka:us-east-1:000000000000:cluster/local/00000000-0000-0000-0000-000000000000-1', bootstrapServers = 'localhost:9092'): KafkaEvent {
  return { eventSource: 'aws:kafka', eventSourceArn: arn, bootstrapServers, records: groupRecords(records) }
}

/** The event a self-managed Kafka event source mapping sends, as the AWS guide shows it. */
export function buildSelfManagedEvent(records: LogRecord[], bootstrapServers: string): SelfManagedKafkaEvent {
  return { eventSource: 'SelfManagedKafka', bootstrapServers, records: groupRecords(records) }
}

function groupRecords(records: LogRecord[]): Record<string, KafkaEventRecord[]> {
  const grouped: Record<string, KafkaEventRecord[]> = {}
  for (const r of records) (grouped[tpKey(r.topic, r.partition)] ??= []).push(toEventRecord(r))
  return grouped
}
