/**
 * One registration group (see groups.ts), stages coerce → encode → write → register: the
 * group's records become rows (bad ones dead letters), the rows Parquet files (sink.ts), the
 * dead letters are written, and ONE registerBatches transaction records a pending batch per
 * table plus every partition's new checkpoint (the last DELIVERED offset + 1: offsets have
 * gaps), conditioned on the checkpoints read. A partition whose records were all dead letters
 * or dropped still advances. Returns a plain GroupResult; the caller merges it.
 */
import { FencedError, IcebergError, RecordError, SchemaError } from '../errors.js'
import { registerBatches, withTransactionBudget, type OffsetRange, type PendingBatchInput } from '../control/index.js'
import type { EventPartition } from '../kafka/index.js'
import type { BufferStats } from './buffers.js'
import type { Item } from './decode.js'
import { writeDeadLetters, type DeadLetter } from './dead-letters.js'
import { FileSink, type Written } from './sink.js'
import type { HeapGuard } from './heap.js'
import type { ScanLane } from './scan-lane.js'
import type { Sample, TableSet } from './tables.js'
import type { ReplayOptions, WriterDeps } from './types.js'

export interface GroupOptions {
  deps: WriterDeps
  tables: TableSet
  /** The group's new records (their values are released once coerced). */
  items: Item[]
  /** The group's partitions ("topic-partition"). */
  keys: string[]
  byKey: ReadonlyMap<string, EventPartition>
  /** The checkpoints the registration is conditioned on. */
  checkpoints: ReadonlyMap<string, bigint | undefined>
  writerId: string
  /** New checkpoints of partitions registered in offset segments (groups.ts): the next segment's first offset. */
  ends: ReadonlyMap<string, bigint>
  replay?: ReplayOptions
  /** The invocation's heap guard (heap.ts), shared with the stages before. */
  heap?: HeapGuard
  /** The scanner lane (scan-lane.ts) when this is the batch's one group: its rows are written with the group's files. */
  lane?: ScanLane
}

export interface GroupResult {
  /** A FencedError is returned (not thrown) so the caller can delete `paths` and retry. */
  outcome: 'registered' | 'stale' | FencedError
  /** Every data file this attempt wrote. */
  paths: string[]
  /** The partitions' new checkpoints (set when registered). */
  next: Map<string, bigint>
  batches: PendingBatchInput[]
  deadLetters: number
  dropped: number
  deadLetterPaths: string[]
  stats: BufferStats
  /** Rows of the scanner lane's files. */
  scanned: number
}

/** Per table, per partition: how many rows were written and their latest Kafka timestamp. */
type Range = { records: number; maxTimestamp: number }
type Ranges = Map<string, Map<string, Range>>

interface Coerced {
  dead: DeadLetter[]
  dropped: number
  ranges: Ranges
  /** The tally the last row went to. */
  last?: { table: string; pkey: string; range: Range }
  /** Per partition, the first new offset. */
  firstNew: Map<string, bigint>
}

/** Write and register one group. */
export async function writeGroup(opts: GroupOptions): Promise<GroupResult> {
  const { deps, replay } = opts
  const sink = new FileSink({ ...opts, reserved: opts.lane?.reserved })
  const rows = await coerceRows(opts.tables, opts.items, sink)
  let scanned = 0
  for (const [table, built, partition] of opts.lane?.take() ?? []) {
    scanned += built.table.numRows
    await sink.writeBuilt(table, built, partition)
  }
  const written = await sink.close()
  // Dead letters before the registration: never lost, and a retry overwrites them.
  const { dead } = rows
  const deadLetterPaths = dead.length && (replay?.writeDeadLetters ?? true) ? await writeDeadLetters(deps.io, deps.config.dlq, deps.config.pipeline, dead) : []
  const next = nextCheckpoints(opts, rows.firstNew)
  const batches = pendingBatches(opts, written, rows, next)
  const outcome = await register(opts, batches, next, rows.dead)
  return { outcome, paths: written.paths, next, batches, deadLetters: dead.length, dropped: rows.dropped, deadLetterPaths, stats: written.stats, scanned }
}

/** The coerce stage: each record a row per table (into the sink), or a dead letter with the reason. */
async function coerceRows(tables: TableSet, items: Item[], sink: FileSink): Promise<Coerced> {
  const out: Coerced = { dead: [], dropped: 0, ranges: new Map(), firstNew: new Map() }
  // Indexed loops: for…of here allocated an iterator result per record (an async function; docs/benchmarks.md).
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!
    const off = item.record.offset
    if (off >= 0n) {
      const f = out.firstNew.get(item.pkey)
      if (f === undefined || off < f) out.firstNew.set(item.pkey, off)
    }
    if (item.dead) out.dead.push(item.dead)
    else if (item.dropped) out.dropped++
    // Its rows are in the scanner lane's columns: counted here, written with them.
    else if (item.run !== undefined) tally(out, item.tables[0]!, item, item.run.to - item.run.from)
    else {
      for (let t = 0; t < item.tables.length; t++) {
        // A Promise only when the row made the sink flush: no Promise or microtask per row.
        const adding = coerceInto(tables, item, item.tables[t]!, sink, out)
        if (adding !== undefined) await adding
      }
    }
    // Coerced: the decoded value is no longer needed (a retry decodes the record again).
    item.value = undefined
    item.fast = undefined
    if (item.coercedBy !== undefined) item.coercedBy = item.coercedRow = undefined
  }
  return out
}

function coerceInto(tables: TableSet, item: Item, table: string, sink: FileSink, out: Coerced): Promise<void> | undefined {
  const state = tables.get(table)!
  if (state.failure !== undefined) {
    out.dead.push({ record: item.record, reason: state.failure, table, stage: 'schema' })
    return
  }
  let built
  try {
    built = tables.buildRow(state, item as Sample)
  } catch (err) {
    // IcebergError: a value the partition transform refuses. Data, not a crash.
    if (err instanceof RecordError || err instanceof SchemaError || err instanceof IcebergError) {
      out.dead.push({ record: item.record, reason: err.message, table, stage: 'coerce' })
      return undefined
    }
    throw err
  }
  // Counted when the row is handed to the sink (as before, a flush's failure fails the whole attempt).
  tally(out, table, item)
  return sink.add(table, built.partition, built.row, built.bytes)
}

/** `rows` more rows (one, or a lane run's) of `item`'s partition in `table`, and its Kafka timestamp. */
function tally(out: Coerced, table: string, item: Item, rows = 1): void {
  const r = rangeOf(out, table, item.pkey)
  r.records += rows
  if (Number.isFinite(item.record.timestamp) && item.record.timestamp > r.maxTimestamp) r.maxTimestamp = item.record.timestamp
}

/** The (table, partition) tally of a row; consecutive rows mostly share it (no Map lookups for them). */
function rangeOf(out: Coerced, table: string, pkey: string): Range {
  const last = out.last
  if (last !== undefined && last.table === table && last.pkey === pkey) return last.range
  let perTable = out.ranges.get(table)
  if (!perTable) out.ranges.set(table, (perTable = new Map()))
  let range = perTable.get(pkey)
  if (range === undefined) perTable.set(pkey, (range = { records: 0, maxTimestamp: 0 }))
  out.last = { table, pkey, range }
  return range
}

/** Each partition with new records: its checkpoint after this group (the segment's end, else the last delivered offset + 1). */
function nextCheckpoints(opts: GroupOptions, firstNew: ReadonlyMap<string, bigint>): Map<string, bigint> {
  const next = new Map<string, bigint>()
  for (const key of opts.keys) {
    const p = opts.byKey.get(key)!
    if (p.lastOffset === undefined || !firstNew.has(key)) continue
    next.set(key, opts.ends.get(key) ?? p.lastOffset + 1n)
  }
  return next
}

/** One pending batch per table the group wrote files for. */
function pendingBatches(opts: GroupOptions, written: Written, rows: Coerced, next: ReadonlyMap<string, bigint>): PendingBatchInput[] {
  const batches: PendingBatchInput[] = []
  for (const [table, files] of written.files) {
    const state = opts.tables.get(table)!
    const ranges: OffsetRange[] = [...(rows.ranges.get(table) ?? new Map<string, { records: number; maxTimestamp: number }>())]
      .filter(([key]) => next.has(key))
      .map(([key, r]) => {
        const p = opts.byKey.get(key)!
        return { topic: p.topic, partition: p.partition, firstOffset: rows.firstNew.get(key)!, nextOffset: next.get(key)!, records: r.records, maxTimestamp: r.maxTimestamp }
      })
    batches.push({
      table,
      files,
      schemaId: state.schema['schema-id'],
      specId: state.spec['spec-id'],
      ranges,
      recordCount: files.reduce((n, f) => n + f.recordCount, 0),
      bytes: files.reduce((n, f) => n + f.fileSizeInBytes, 0),
      ...(opts.replay ? { replayId: opts.replay.replayId } : {}),
    })
  }
  return batches
}

/** The one transaction: fenced by the checkpoints read (or, for a replay, by its markers). */
async function register(opts: GroupOptions, batches: PendingBatchInput[], next: ReadonlyMap<string, bigint>, dead: DeadLetter[]): Promise<'registered' | 'stale' | FencedError> {
  const { deps, replay } = opts
  const expected = new Map([...next.keys()].map((k) => [k, opts.checkpoints.get(k)]))
  const fence = replay
    ? { expected: new Map<string, bigint | undefined>(), next: new Map<string, bigint>(), markers: await replay.markers(dead), replayId: replay.replayId }
    : { expected, next: new Map(next) }
  try {
    return await registerBatches(withTransactionBudget(deps.control, batches), { pipeline: deps.config.pipeline, writerId: opts.writerId, ...fence, batches })
  } catch (err) {
    // FencedError: the transaction was cancelled, nothing was written — the caller deletes the
    // files and retries. Any other error may hide a transaction that DID commit (a timeout after
    // sending): the files must stay; if they are not registered, orphan cleanup removes them.
    if (err instanceof FencedError) return err
    throw err
  }
}
