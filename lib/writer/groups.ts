/**
 * Registration groups. One registration is ONE DynamoDB transaction of at most 100 items: one
 * checkpoint update per Kafka partition plus one pending-batch put per table. A batch spanning
 * more is split:
 *
 * - **Across partitions**: into groups of whole partitions, each registered by its own
 *   transaction and each with its own files — so a table touched by two groups gets one file per
 *   (table, partition value) PER GROUP. Every group is fenced on its own partitions' checkpoints.
 * - **Within a partition** fanned out to more tables than one transaction holds (99 with its
 *   checkpoint, e.g. dynamic tables): into offset SEGMENTS, consecutive runs of its records that
 *   together reach at most 99 tables. Segment k registers its tables' batches and moves the
 *   checkpoint to the first offset of segment k+1 (the last one to the partition's last offset
 *   + 1), conditioned on where segment k-1 left it — exactly as if the mapping had delivered the
 *   partition in smaller batches. A crash between segments leaves a checkpoint in the middle of
 *   the batch; the retry drops the records below it. Fencing is the same per transaction.
 *
 * If a later group fails, the mapping retries the batch and the records of already registered
 * groups are dropped as below their checkpoints. Greedy in event order. A single record routed to
 * more than 99 tables (only possible through very many static routes) cannot be registered
 * atomically and fails the batch with a clear error.
 */
import { FloeError } from '../errors.js'

/** One partition's records, or one offset segment of them, with the tables they go to. */
export interface Segment {
  /** "topic-partition" */
  key: string
  tables: Set<string>
  /** First offset of this segment (undefined: from the start of the batch). */
  from?: bigint
  /** First offset of the partition's next segment: this segment's new checkpoint (undefined: the partition's end). */
  until?: bigint
}

export interface GroupInput {
  key: string
  /** Tables this partition's records go to. */
  tables: Set<string>
}

/** Cut one partition's records (offset order) into segments of at most `maxTables` tables each. */
export function segmentPartition(key: string, records: readonly { offset: bigint; tables: readonly string[] }[], maxTables: number): Segment[] {
  const segments: Segment[] = []
  let current: Segment = { key, tables: new Set() }
  for (const r of records) {
    if (r.tables.length > maxTables) {
      throw new FloeError(
        `partition ${key} offset ${r.offset}: one record routes to ${r.tables.length} tables; one registration holds at most ${maxTables} tables per partition (fewer routes per topic)`,
      )
    }
    if (allAdmitted(r.tables, current.tables)) continue
    const added = r.tables.filter((t) => !current.tables.has(t))
    if (current.tables.size + added.length > maxTables && r.offset >= 0n) {
      current.until = r.offset
      segments.push(current)
      current = { key, tables: new Set(r.tables), from: r.offset }
    } else for (const t of added) current.tables.add(t)
  }
  segments.push(current)
  return segments
}

/** Groups of segments, each registered by one transaction of at most `maxItems` items; a partition's segments land in successive groups, in order. */
export function planGroups(segments: readonly (Segment | GroupInput)[], maxItems = 100): Segment[][] {
  const groups: Segment[][] = []
  let current: Segment[] = []
  let tables = new Set<string>()
  for (const s of segments) {
    if (s.tables.size + 1 > maxItems) {
      throw new FloeError(
        `partition ${s.key} routes to ${s.tables.size} tables in one segment; one registration holds at most ${maxItems - 1} tables per partition (lower the fan-out or the mapping's BatchSize)`,
      )
    }
    const union = new Set([...tables, ...s.tables])
    if (current.length > 0 && (current.length + 1 + union.size > maxItems || current.some((c) => c.key === s.key))) {
      groups.push(current)
      current = []
      tables = new Set(s.tables)
    } else tables = union
    current.push(s)
  }
  if (current.length > 0) groups.push(current)
  return groups
}

/** True when a record at `offset` belongs to `segment` (records without an offset belong to a partition's first segment). */
export function inSegment(segment: Segment, offset: bigint): boolean {
  if (offset < 0n) return segment.from === undefined
  return (segment.from === undefined || offset >= segment.from) && (segment.until === undefined || offset < segment.until)
}

/** A record as planning sees it: its partition, offset and tables. */
export interface PlannedRecord {
  pkey: string
  record: { offset: bigint }
  tables: string[]
}

/**
 * FLOE_MAX_TABLES_PER_BATCH bounds what one invocation costs (a catalog load or create, a
 * back-pressure query, a file and a pending batch per table). Tables are admitted in event order;
 * at the first record of a partition that needs a table past the limit, that partition stops:
 * its checkpoint moves only up to that record, and once the rest is registered the invocation
 * ends with a retryable BatchDeferredError, so the mapping delivers the records again and the
 * next invocation (which drops what is registered) takes the next tables. Never dead letters:
 * which tables one batch reaches depends on how the mapping cut it, and a record dead-lettered
 * under one batching must never land in a table under another.
 */
export function deferPastTableLimit<T extends PlannedRecord>(items: T[], max: number): { kept: T[]; cuts: Map<string, bigint> } {
  const admitted = new Set<string>()
  const cuts = new Map<string, bigint>()
  const kept: T[] = []
  for (const item of items) {
    if (cuts.has(item.pkey)) continue
    // Nothing new (and the first record did not pass the limit alone): taken, no allocation.
    if (admitted.size <= max && allAdmitted(item.tables, admitted)) {
      kept.push(item)
      continue
    }
    const added = item.tables.filter((t) => !admitted.has(t))
    // The first record is always taken, so every invocation makes progress.
    if (kept.length > 0 && admitted.size + added.length > max && item.record.offset >= 0n) {
      cuts.set(item.pkey, item.record.offset)
      continue
    }
    for (const t of added) admitted.add(t)
    kept.push(item)
  }
  return { kept, cuts }
}

function allAdmitted(tables: readonly string[], admitted: ReadonlySet<string>): boolean {
  for (let i = 0; i < tables.length; i++) if (!admitted.has(tables[i]!)) return false
  return true
}

/**
 * The registration groups of a batch's items: segments per partition (offset runs that fit one
 * transaction's tables), a partition cut at the table limit ending at its first deferred record.
 * Only tables that get a batch count (`registers`: failed tables only make dead letters).
 */
export function planRegistration(items: readonly PlannedRecord[], registers: (table: string) => boolean, cuts: ReadonlyMap<string, bigint>, maxItems: number): Segment[][] {
  const perPartition = new Map<string, { offset: bigint; tables: string[] }[]>()
  // Records of one route share their tables array (routing.ts): filtered once per array.
  const registered = new Map<readonly string[], string[]>()
  // A record with the same tables as the partition's previous one never opens a segment (that
  // one left its tables in the current segment): only where the tables change is kept, so a
  // batch of one route makes one entry per partition, not one object per record.
  const lastTables = new Map<string, readonly string[]>()
  for (const item of items) {
    if (lastTables.get(item.pkey) === item.tables) continue
    lastTables.set(item.pkey, item.tables)
    let list = perPartition.get(item.pkey)
    if (!list) perPartition.set(item.pkey, (list = []))
    let tables = registered.get(item.tables)
    if (tables === undefined) registered.set(item.tables, (tables = item.tables.filter(registers)))
    list.push({ offset: item.record.offset, tables })
  }
  const segments = [...perPartition].flatMap(([key, list]) => {
    const parts = segmentPartition(key, list, maxItems - 1)
    const cut = cuts.get(key)
    if (cut !== undefined) parts.at(-1)!.until = cut
    return parts
  })
  return planGroups(segments, maxItems)
}
