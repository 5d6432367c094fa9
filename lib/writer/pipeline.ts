/**
 * One writer invocation (`writeBatch`): an MSK batch in, Parquet files on S3 and ONE fenced
 * registration per partition group out (DESIGN.md invariants 1, 2, 4, 5, 6, 8). A straight line
 * of stages, plain values between them:
 *
 *   parse event (JSON topics routed by topic alone left raw) → read checkpoints (consistent;
 *   meanwhile the raw partitions' tables load) → decode + route (decode.ts; records below their
 *   checkpoints skipped; raw partitions scanned into their tables' columns or decoded,
 *   scan-lane.ts) → table limit (groups.ts) → back pressure (before any file is written) →
 *   tables: load / create / evolve (tables.ts) → keys for string `_kafka.key` columns → plan
 *   groups (groups.ts) → per group: coerce → encode → write → register (register.ts, sink.ts) →
 *   on 'stale': delete this attempt's files.
 *
 * Offsets have gaps: a partition's new checkpoint is the last offset DELIVERED + 1, never a
 * count. A partition all of whose records are dead letters or dropped still advances.
 * Returns a plain WriteResult.
 */
import { randomUUID } from 'node:crypto'
import { BatchDeferredError, FencedError, FloeError } from '../errors.js'
import { immediately, retry } from '../retry/index.js'
import { maxTransactionItems, readCheckpoints, readCheckpointsWithBacklog } from '../control/index.js'
import { readKafkaEvent, type EventPartition } from '../kafka/index.js'
import { decodeItem, decodeRecords, jsonTopics, type Item } from './decode.js'
import { deferPastTableLimit, inSegment, planRegistration, type Segment } from './groups.js'
import { writeGroup, type GroupResult } from './register.js'
import { checkBackpressure, decodeKeys, prepareTables } from './prepare.js'
import { TableSet } from './tables.js'
import { HeapGuard } from './heap.js'
import { ScanLane } from './scan-lane.js'
import { laneTopics } from './scan-tables.js'
import type { BufferStats, FlushReason } from './buffers.js'
import type { ReplayOptions, TableWriteResult, WriteResult, WriterDeps } from './types.js'

export interface WriteOptions {
  /** Names files and the registration; the Lambda request id in production. */
  writerId?: string
  /**
   * Replay mode (lib/replay): the records are below their checkpoints on purpose. No checkpoint
   * is read, dropped by or advanced; the registration is ONE transaction fenced by the replay
   * markers instead, and its batches carry the replay id.
   */
  replay?: ReplayOptions
}

/** What the group stage needs, the same for every group of the batch. */
interface BatchContext {
  deps: WriterDeps
  tables: TableSet
  byKey: ReadonlyMap<string, EventPartition>
  writerId: string
  replay?: ReplayOptions
  heap: HeapGuard
  lane?: ScanLane
}

export async function writeBatch(deps: WriterDeps, event: unknown, opts: WriteOptions = {}): Promise<WriteResult> {
  const { config } = deps
  const writerId = opts.writerId ?? randomUUID()
  const replay = opts.replay
  // One guard for the whole invocation: the garbage of decoding, back pressure and table preparation too (heap.ts).
  const heap = new HeapGuard(config.gcHeadroomBytes)
  const { parts, count } = readKafkaEvent(event, laneTopics(deps, replay))
  const partitions = parts.map((p) => p.summary)
  const byKey = new Map(partitions.map((p) => [p.key, p]))
  const tables = new TableSet(deps)
  // Partitions left raw (lib/kafka event-parts.ts) are read by the scanner lane: their tables load while the checkpoints are read.
  const lane = parts.some((p) => p.raw !== undefined) ? new ScanLane(deps) : undefined
  // The lane's tables are known already: their back-pressure notes come with the checkpoints.
  const [{ checkpoints, backlog }] = await Promise.all([
    replay ? { checkpoints: new Map<string, bigint | undefined>(), backlog: undefined } : readCheckpointsWithBacklog(deps.control, config.pipeline, partitions, lane?.route(parts) ?? []),
    lane?.load(tables, parts),
  ])
  const { items: decoded, belowCheckpoint } = await decodeRecords(deps, parts, checkpoints, replay, lane)
  if (decoded.length === 0 && !replay) return emptyResult(writerId, count, belowCheckpoint, checkpoints)
  // A replay is one all-or-nothing registration with no checkpoints to stop a partition at.
  const { kept, cuts } = replay ? { kept: decoded, cuts: new Map<string, bigint>() } : deferPastTableLimit(decoded, config.limits.maxTablesPerBatch)
  // A cut partition stops at a record: the lane's runs go back to the present path, cut where they were (a raw partition's one
  // table is then never admitted, so `settle` would release it too: this holds whatever the routes).
  let items = cuts.size > 0 && lane ? deferPastTableLimit(lane.releaseAll(decoded), config.limits.maxTablesPerBatch).kept : kept

  heap.collect()
  await checkBackpressure(deps, routedTables(items), heap, backlog)
  items = await prepareTables(tables, items, heap, lane)
  await decodeKeys(deps, tables, items)

  // A replay registers all or nothing: one group, its markers in the same transaction.
  const groups: Segment[][] = replay
    ? [[...new Set(items.map((i) => i.pkey))].map((key) => ({ key, tables: new Set<string>() }))]
    : planRegistration(items, (t) => tables.get(t)?.failure === undefined, cuts, maxTransactionItems)
  // The lane's rows are a file per table and partition value, registered by the batch's one group: with more groups they take the present path.
  if (groups.length !== 1 && lane) items = lane.releaseAll(items)
  const ctx: BatchContext = { deps, tables, byKey, writerId, replay, heap, lane }
  const done = await registerGroups(ctx, items, groups, checkpoints)
  const result = batchResult(ctx, count, belowCheckpoint, done)
  if (cuts.size > 0) {
    const where = [...cuts].map(([k, offset]) => `${k} from offset ${offset}`).join(', ')
    throw new BatchDeferredError(
      `the batch reaches more than FLOE_MAX_TABLES_PER_BATCH=${config.limits.maxTablesPerBatch} tables: ${result.tables.length} tables registered, ${where} wait for the mapping's next delivery`,
      result,
    )
  }
  return result
}

/** Every table the items go to (records of one route share their tables array: each array read once, no array per record). */
function routedTables(items: readonly Item[]): Set<string> {
  const out = new Set<string>()
  let last: readonly string[] | undefined
  for (const item of items) {
    if (item.tables === last) continue
    last = item.tables
    for (const t of last) out.add(t)
  }
  return out
}

/** Every group's registrations (the registered ones), the checkpoints after them, and the transaction count. */
interface GroupsDone {
  results: GroupResult[]
  transactions: number
  anyStale: boolean
  checkpoints: Map<string, bigint | undefined>
  /** The buffer stats of every attempt. */
  stats: BufferStats[]
}

/** Another writer advanced part of a group's partitions (retryable: checkpoints re-read, the rest written again). */
class GroupOverlapped extends FloeError {
  constructor(readonly fenced: FencedError) {
    super(fenced.message, { cause: fenced, retryable: true })
  }
}

/** Each group in turn, retried (checkpoints re-read, records decoded again) when another writer advanced part of it. */
async function registerGroups(ctx: BatchContext, items: Item[], groups: Segment[][], read: Map<string, bigint | undefined>): Promise<GroupsDone> {
  const done: GroupsDone = { results: [], transactions: 0, anyStale: false, checkpoints: new Map(read), stats: [] }
  for (const segments of groups) {
    const keys = segments.map((s) => s.key)
    const inGroup = new Map(segments.map((s) => [s.key, s]))
    const ends = new Map(segments.filter((s) => s.until !== undefined).map((s) => [s.key, s.until!]))
    let own = items.filter((i) => inGroup.has(i.pkey) && inSegment(inGroup.get(i.pkey)!, i.record.offset))
    const cps = done.checkpoints
    await retry(
      async (attempt) => {
        // A retry writes the lane's records the present way: each on its own side of the checkpoints read again.
        if (attempt > 0 && ctx.lane) own = ctx.lane.releaseAll(own)
        const fresh = own.filter((i) => !(i.record.offset >= 0n && (cps.get(i.pkey) ?? -1n) > i.record.offset))
        if (fresh.length === 0 && !ctx.replay) return
        if (attempt > 0) await redecode(ctx, fresh)
        const g = await writeGroup({ ...ctx, items: fresh, keys, checkpoints: cps, ends })
        done.stats.push(g.stats)
        if (g.outcome === 'registered' || g.outcome === 'stale') done.transactions++
        if (g.outcome === 'registered') {
          done.results.push(g)
          if (!ctx.replay) for (const [k, v] of g.next) cps.set(k, v)
          return
        }
        await ctx.deps.io.deleteMany(g.paths)
        if (g.outcome === 'stale') {
          done.anyStale = true
          return
        }
        throw new GroupOverlapped(g.outcome)
      },
      immediately(ctx.deps.config.writerGroupAttempts),
      {
        when: (err) => err instanceof GroupOverlapped,
        onRetry: async () => {
          const again = await readCheckpoints(ctx.deps.control, ctx.deps.config.pipeline, keys.map((k) => ctx.byKey.get(k)!))
          for (const [k, v] of again) cps.set(k, v)
        },
        // FLOE_WRITER_GROUP_ATTEMPTS overlaps: the invocation fails with the fence itself.
        exhausted: (err) => (err as GroupOverlapped).fenced,
      },
    )
  }
  return done
}

/** A retry's records decoded again: their values were released once coerced (dead letters and drops keep what they are). */
async function redecode(ctx: BatchContext, items: Item[]): Promise<void> {
  const json = jsonTopics(ctx.deps)
  for (const item of items) {
    if (item.dead || item.dropped) continue
    const again = await decodeItem(ctx.deps, item.record, item.pkey, json(item.record.topic), ctx.replay)
    item.value = again.value
    item.fast = again.fast
  }
}

const checkpointText = (checkpoints: ReadonlyMap<string, bigint | undefined>): Record<string, string> =>
  Object.fromEntries([...checkpoints].filter(([, v]) => v !== undefined).map(([k, v]) => [k, v!.toString()]))

function emptyResult(writerId: string, recordsIn: number, belowCheckpoint: number, checkpoints: ReadonlyMap<string, bigint | undefined>): WriteResult {
  return {
    writerId,
    recordsIn,
    belowCheckpoint,
    dropped: 0,
    deadLetters: 0,
    deadLetterPaths: [],
    tables: [],
    transactions: 0,
    outcome: 'nothing-new',
    checkpoints: checkpointText(checkpoints),
    flushes: { budget: 0, 'target-size': 0, end: 0, 'oversize-row': 0 },
    peakBufferedBytes: 0,
    bytesWritten: 0,
    recordsScanned: 0,
  }
}

/** The plain WriteResult of the registered groups. */
function batchResult(ctx: BatchContext, recordsIn: number, belowCheckpoint: number, done: GroupsDone): WriteResult {
  const result = emptyResult(ctx.writerId, recordsIn, belowCheckpoint, done.checkpoints)
  const perTable = new Map<string, { rows: number; files: number; bytes: number }>()
  for (const g of done.results) {
    result.dropped += g.dropped
    result.deadLetters += g.deadLetters
    result.recordsScanned += g.scanned
    result.deadLetterPaths.push(...g.deadLetterPaths)
    for (const b of g.batches) {
      const t = perTable.get(b.table) ?? { rows: 0, files: 0, bytes: 0 }
      perTable.set(b.table, { rows: t.rows + b.recordCount, files: t.files + b.files.length, bytes: t.bytes + b.bytes })
      result.bytesWritten += b.bytes
    }
  }
  result.transactions = done.transactions
  for (const s of done.stats) {
    for (const reason of Object.keys(result.flushes) as FlushReason[]) result.flushes[reason] += s.flushes[reason]
    result.peakBufferedBytes = Math.max(result.peakBufferedBytes, s.peakBufferedBytes)
  }
  result.outcome = done.results.length > 0 ? 'registered' : done.anyStale ? 'stale' : 'nothing-new'
  result.tables = [...ctx.tables.states()]
    .map((s): TableWriteResult => {
      const t = perTable.get(s.name) ?? { rows: 0, files: 0, bytes: 0 }
      return {
        table: s.name,
        ...t,
        schemaId: s.schema['schema-id'],
        specId: s.spec['spec-id'],
        unknownFieldsIgnored: s.unknownFieldsIgnored,
        ...(s.evolvedToSchemaId !== undefined ? { evolvedToSchemaId: s.evolvedToSchemaId } : {}),
        ...(s.created ? { created: true } : {}),
      }
    })
    .filter((t) => t.rows > 0 || t.files > 0 || t.evolvedToSchemaId !== undefined || t.created)
  return result
}
