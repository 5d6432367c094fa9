/**
 * Per-partition views of a batch: which partitions it spans and which offsets it holds.
 * The writer reads the checkpoints of exactly these partitions before registering.
 */
import type { KafkaRecord } from './event.js'
import { partitionKey } from './partition-key.js'

export interface EventPartition {
  topic: string
  partition: number
  /** `"<topic>-<partition>"`. */
  key: string
  /** Lowest and highest offset of the partition's readable records (flagged records without an offset are left out). */
  firstOffset: bigint | undefined
  lastOffset: bigint | undefined
  /** Records of this partition in the batch, flagged ones included. */
  records: number
  /** Largest record timestamp (epoch millis), or undefined when none is known. */
  maxTimestamp: number | undefined
}

/** The distinct partitions of a batch, in first-seen order. */
export function eventPartitions(records: readonly KafkaRecord[]): EventPartition[] {
  const byKey = new Map<string, EventPartition>()
  let p: EventPartition | undefined
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!
    // Records come grouped by partition: the key string is built once per run of them, not per record.
    if (p === undefined || p.topic !== r.topic || p.partition !== r.partition) {
      const key = partitionKey(r.topic, r.partition)
      p = byKey.get(key)
      if (p === undefined) {
        p = { topic: r.topic, partition: r.partition, key, firstOffset: undefined, lastOffset: undefined, records: 0, maxTimestamp: undefined }
        byKey.set(key, p)
      }
    }
    p.records++
    if (r.offset >= 0n) {
      if (p.firstOffset === undefined || r.offset < p.firstOffset) p.firstOffset = r.offset
      if (p.lastOffset === undefined || r.offset > p.lastOffset) p.lastOffset = r.offset
    }
    if (Number.isFinite(r.timestamp) && (p.maxTimestamp === undefined || r.timestamp > p.maxTimestamp)) p.maxTimestamp = r.timestamp
  }
  return [...byKey.values()]
}

/** Records grouped by `"<topic>-<partition>"`, keeping their order. */
export function groupByPartition(records: readonly KafkaRecord[]): Map<string, KafkaRecord[]> {
  const out = new Map<string, KafkaRecord[]>()
  for (const r of records) {
    const key = partitionKey(r.topic, r.partition)
    const list = out.get(key)
    if (list === undefined) out.set(key, [r])
    else list.push(r)
  }
  return out
}

/**
 * `{ "topic-0": "15..42 (28)" }` (first and last offset as listed, record count) for the log, read
 * from the raw event without decoding it; never throws — a bad event is reported by parseKafkaEvent (event.ts).
 */
export function describeEventPartitions(event: unknown): Record<string, string> | undefined {
  const records = (event as { records?: unknown } | null)?.records
  if (typeof records !== 'object' || records === null) return undefined
  const out: Record<string, string> = {}
  for (const [key, list] of Object.entries(records as Record<string, unknown>)) {
    if (!Array.isArray(list) || list.length === 0) continue
    const offsets = list.map((r) => String((r as { offset?: unknown })?.offset ?? '?'))
    out[key] = `${offsets[0]}..${offsets.at(-1)} (${list.length})`
  }
  return out
}
