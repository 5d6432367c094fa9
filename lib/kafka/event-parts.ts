/**
 * The Lambda Kafka event as partitions. Each partition's records are parsed into KafkaRecords in
 * offset order (event.ts readRecord) — or, for a topic the caller reads straight from the event
 * (`rawTopic`: the writer's scanner lane, issue 20 "the batch carried as columns"), left as the
 * event has them when that is safe to do: a RawPartition, whose records the caller reads one at a
 * time (raw-records.ts) and parses into KafkaRecords only where it needs one.
 *
 * A group is left raw only when it is plain: every record an object claiming the group key's
 * topic and partition, with a safe-integer number offset above the one before (so it needs no
 * sorting and no other group's records join it). Any other group is parsed as before, and so is
 * a raw group whose partition another group's records also claim.
 */
import { EventShapeError } from '../errors.js'
import { base64Sink } from './base64.js'
import { eventShapeProblem, isTimestampMillis, parseTimestamp, readRecord, splitGroupKey, type KafkaRecord, type RawKafkaEvent } from './event.js'
import { partitionKey, splitPartitionKey } from './partition-key.js'
import { eventPartitions, type EventPartition } from './partitions.js'

/** A partition's records as the event has them (see the module comment for what they all are). */
export interface RawPartition {
  topic: string
  partition: number
  /** The event's group key the records came under (what their dead letters name). */
  groupKey: string
  /** The records, in offset order. */
  list: readonly Record<string, unknown>[]
}

/** One partition of the event: its records parsed, or raw. */
export interface EventPart {
  /** `"<topic>-<partition>"` */
  key: string
  topic: string
  partition: number
  /** Parsed records in offset order (empty when `raw`). */
  records: KafkaRecord[]
  raw?: RawPartition
  /** Offsets, counts and timestamps of the partition's records. */
  summary: EventPartition
}

export interface KafkaEventParts {
  /** In the order the event first lists each partition. */
  parts: EventPart[]
  /** Every record of the event. */
  count: number
}

/**
 * Parse a Lambda Kafka event into partitions, records sorted per partition by offset; groups of
 * a `rawTopic` left raw where they are plain. Throws EventShapeError for a malformed event.
 */
export function readKafkaEvent(event: unknown, rawTopic?: (topic: string) => boolean): KafkaEventParts {
  const problem = eventShapeProblem(event)
  if (problem !== undefined) throw new EventShapeError(`Kafka event: ${problem}`)
  const entries = Object.entries((event as RawKafkaEvent).records)
  const raws = entries.map(([groupKey, list]) => (rawTopic === undefined ? undefined : plainGroup(groupKey, list, rawTopic)))
  const sink = base64Sink(entries.filter((_, k) => raws[k] === undefined).map(([, list]) => list))
  const parts = new Map<string, EventPart>()
  let count = 0
  for (let k = 0; k < entries.length; k++) {
    const [groupKey, list] = entries[k]!
    count += list.length
    const raw = raws[k]
    if (raw !== undefined) {
      const key = partitionKey(raw.topic, raw.partition)
      const other = parts.get(key)
      if (other === undefined) parts.set(key, { key, topic: raw.topic, partition: raw.partition, records: [], raw, summary: rawSummary(key, raw) })
      else {
        // Another group claims the partition: both are parsed.
        parseRaw(other)
        for (const r of list) other.records.push(readRecord(r, groupKey, raw, undefined))
      }
      continue
    }
    // The group key is split once per group, not per record; records almost always match it.
    const fallback = splitGroupKey(groupKey)
    let last: EventPart | undefined
    for (let i = 0; i < list.length; i++) {
      const record = readRecord(list[i], groupKey, fallback, sink)
      if (last === undefined || last.topic !== record.topic || last.partition !== record.partition) {
        const key = partitionKey(record.topic, record.partition)
        last = parts.get(key)
        if (last === undefined) parts.set(key, (last = { key, topic: record.topic, partition: record.partition, records: [], summary: undefined as never }))
        else parseRaw(last)
      }
      last.records.push(record)
    }
  }
  for (const part of parts.values()) {
    if (part.raw !== undefined) continue
    // Events list a partition's records in offset order: sorted only when they are not.
    if (!inOffsetOrder(part.records)) part.records.sort((a, b) => (a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0))
    part.summary = eventPartitions(part.records)[0]!
  }
  return { parts: [...parts.values()], count }
}

/**
 * Parse a Lambda Kafka event into records, sorted per partition by offset (partitions in the
 * order the event lists them). Throws EventShapeError for a malformed event.
 */
export function parseKafkaEvent(event: unknown): KafkaRecord[] {
  const out: KafkaRecord[] = []
  // Not push(...records): a spread of ~100k+ records overflows the stack (a 6 MB event of tiny records).
  for (const part of readKafkaEvent(event).parts) for (const r of part.records) out.push(r)
  return out
}

/** A raw part's records parsed (its partition turned out to be claimed by another group too). */
function parseRaw(part: EventPart): void {
  const raw = part.raw
  if (raw === undefined) return
  part.raw = undefined
  for (const r of raw.list) part.records.push(readRecord(r, raw.groupKey, raw, undefined))
}

/** The group as a RawPartition when it is plain (module comment), else undefined. */
function plainGroup(groupKey: string, list: readonly unknown[], rawTopic: (topic: string) => boolean): RawPartition | undefined {
  const at = splitPartitionKey(groupKey)
  if (at === undefined || at.topic === '' || list.length === 0 || !rawTopic(at.topic)) return undefined
  let previous = -1
  for (let i = 0; i < list.length; i++) {
    const r = list[i]
    if (typeof r !== 'object' || r === null || Array.isArray(r)) return undefined
    const { topic, partition, offset } = r as Record<string, unknown>
    if (topic !== at.topic || partition !== at.partition || typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset <= previous) return undefined
    previous = offset
  }
  return { topic: at.topic, partition: at.partition, groupKey, list: list as Record<string, unknown>[] }
}

/** eventPartitions' summary of a raw partition, read from the event. */
function rawSummary(key: string, raw: RawPartition): EventPartition {
  const { list } = raw
  // A number local, not `number | undefined`, and number timestamps checked here: each would
  // otherwise be a heap number per record (raw-records.ts).
  let max = -Infinity
  for (let i = 0; i < list.length; i++) {
    const v = list[i]!.timestamp
    const t = typeof v === 'number' ? (isTimestampMillis(v) ? v : Number.NaN) : (parseTimestamp(v) ?? Number.NaN)
    if (t > max) max = t
  }
  const maxTimestamp = max === -Infinity ? undefined : max
  const first = BigInt(list[0]!.offset as number)
  const last = BigInt(list[list.length - 1]!.offset as number)
  return { topic: raw.topic, partition: raw.partition, key, firstOffset: first, lastOffset: last, records: list.length, maxTimestamp }
}

function inOffsetOrder(group: readonly KafkaRecord[]): boolean {
  for (let i = 1; i < group.length; i++) if (group[i - 1]!.offset > group[i]!.offset) return false
  return true
}
