/**
 * One writer invocation (`writeBatch`): an MSK batch in, Parquet files on S3 and ONE fenced
 * registration per partition group out (DESIGN.md invariants 1, 2, 4, 5, 6, 8).
 *
 *   parse → read checkpoints (consistent) → drop records below them → decode → route
 *   → back pressure (before any file is written) → tables (load / create / evolve)
 *   → decode keys for string `_kafka.key` columns (bad → dead letter)
 *   → coerce (bad → dead letter) → bounded buffers → Parquet files → dead letters
 *   → registerBatches (one transaction per group) → on 'stale': delete this attempt's files.
 *
 * Offsets have gaps: a partition's new checkpoint is the last offset DELIVERED + 1, never a
 * count. A partition all of whose records are dead letters or dropped still advances.
 * Returns a plain WriteResult.
 */
import { randomUUID } from 'node:crypto'
import { BackpressureError, BatchDeferredError, FloeError, RecordError } from '../errors.js'
import { countPendingBatches, maxTransactionItems } from '../control/batches.js'
import { readCheckpoints } from '../control/checkpoints.js'
import { eventPartitions } from '../kafka/partitions.js'
import { parseKafkaEvent, partitionKey, type KafkaRecord } from '../kafka/event.js'
import type { Schema } from '../schema/types.js'
import { BufferPool, type FlushReason } from './buffers.js'
import { inspectRecord } from './guard.js'
import { dataFilePath, writeDataFile } from './files.js'
import { inSegment, planGroups, segmentPartition, type Segment } from './groups.js'
import { newGroupState, tableResult, writeGroup, type Item } from './register.js'
import { TableSet, type Sample } from './tables.js'
import { parseJsonObject, parseJsonObjectFast } from '../codec/json.js'
import type { DecodedValue, ReplayOptions, WriteResult, WriterDeps } from './types.js'

/** Attempts per group when another writer advanced a checkpoint part of the way. */
const MAX_GROUP_ATTEMPTS = 3

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

export async function writeBatch(deps: WriterDeps, event: unknown, opts: WriteOptions = {}): Promise<WriteResult> {
  const { config, control } = deps
  const writerId = opts.writerId ?? randomUUID()
  const records = parseKafkaEvent(event)
  const partitions = eventPartitions(records)
  const byKey = new Map(partitions.map((p) => [p.key, p]))
  const replay = opts.replay
  let checkpoints = replay ? new Map<string, bigint | undefined>() : await readCheckpoints(control, config.pipeline, partitions)

  const result: WriteResult = {
    writerId,
    recordsIn: records.length,
    belowCheckpoint: 0,
    dropped: 0,
    deadLetters: 0,
    deadLetterPaths: [],
    tables: [],
    transactions: 0,
    outcome: 'nothing-new',
    checkpoints: {},
    flushes: { budget: 0, 'target-size': 0, end: 0, 'oversize-row': 0 },
    peakBufferedBytes: 0,
    bytesWritten: 0,
  }

  // Decode and route only what is new.
  const decoded: Item[] = []
  const jsonTopic = jsonTopics(deps)
  let pkey = ''
  let pkeyOf: KafkaRecord | undefined
  for (const record of records) {
    // Records come grouped by partition: the key string is built once per run, not per record.
    if (pkeyOf === undefined || pkeyOf.topic !== record.topic || pkeyOf.partition !== record.partition) pkey = partitionKey(record.topic, record.partition)
    pkeyOf = record
    const cp = checkpoints.get(pkey)
    if (record.offset >= 0n && cp !== undefined && record.offset < cp) {
      result.belowCheckpoint++
      continue
    }
    const prepared = prepareItem(deps, record, pkey, jsonTopic(record.topic))
    // JSON is decoded synchronously: no Promise per record where nothing is awaited.
    const item = prepared instanceof Promise ? await prepared : prepared
    if (replay?.tablesFor) restrictTables(item, replay.tablesFor(record))
    decoded.push(item)
  }
  if (decoded.length === 0 && !replay) return finish(result, checkpoints)
  // A replay is one all-or-nothing registration with no checkpoints to stop a partition at.
  const { kept: items, cuts } = replay ? { kept: decoded, cuts: new Map<string, bigint>() } : deferPastTableLimit(decoded, config.limits.maxTablesPerBatch)

  // Back pressure, before anything is written.
  const tables = new TableSet(deps)
  await checkBackpressure(deps, new Set(items.flatMap((i) => i.tables)))
  await prepareTables(tables, items)
  await decodeKeys(deps, tables, items)

  const pool = new BufferPool<Record<string, unknown>>({
    budgetBytes: config.memoryBudgetBytes,
    targetFileBytes: config.targetFileBytes,
    flush: async (buffer, _reason: FlushReason) => {
      const state = tables.get(buffer.table)!
      const chunk = await tables.encode(state, buffer.rows)
      const path = dataFilePath(state.metadata, state.partitionPath(buffer.partition), writerId, group.files.nextSeq(), deps.config.objectStorageLayout)
      const file = await writeDataFile(deps.io, path, chunk, state.spec['spec-id'], buffer.partition)
      group.files.add(path)
      let list = group.dataFiles.get(buffer.table)
      if (!list) group.dataFiles.set(buffer.table, (list = []))
      list.push(file)
    },
  })
  let group = newGroupState()

  // Segments per partition (offset runs that fit one transaction's tables), then groups of them.
  const perPartition = new Map<string, { offset: bigint; tables: string[] }[]>()
  for (const item of items) {
    let list = perPartition.get(item.pkey)
    if (!list) perPartition.set(item.pkey, (list = []))
    // Only tables that get a batch count (failed ones only make dead letters).
    list.push({ offset: item.record.offset, tables: item.tables.filter((t) => tables.get(t)?.failure === undefined) })
  }
  // A replay registers all or nothing: one group, its markers in the same transaction.
  const groups: Segment[][] = replay
    ? [[...new Set(items.map((i) => i.pkey))].map((key) => ({ key, tables: new Set<string>() }))]
    : planGroups(
        [...perPartition].flatMap(([key, list]) => {
          const segments = segmentPartition(key, list, maxTransactionItems - 1)
          // A partition cut at the table limit moves its checkpoint only up to its first deferred record.
          const cut = cuts.get(key)
          if (cut !== undefined) segments.at(-1)!.until = cut
          return segments
        }),
        maxTransactionItems,
      )

  let anyRegistered = false
  let anyStale = false
  for (const segments of groups) {
    const keys = segments.map((s) => s.key)
    const inGroup = new Map(segments.map((s) => [s.key, s]))
    const ends = new Map(segments.filter((s) => s.until !== undefined).map((s) => [s.key, s.until!]))
    for (let attempt = 1; ; attempt++) {
      group = newGroupState()
      const groupItems = items.filter((i) => {
        const segment = inGroup.get(i.pkey)
        return segment !== undefined && inSegment(segment, i.record.offset) && !(i.record.offset >= 0n && (checkpoints.get(i.pkey) ?? -1n) > i.record.offset)
      })
      if (groupItems.length === 0 && !replay) break
      const outcome = await writeGroup(deps, tables, pool, group, groupItems, keys, byKey, checkpoints, writerId, result, ends, replay)
      if (outcome === 'registered') {
        anyRegistered = true
        break
      }
      await group.files.deleteAll(deps.io)
      if (outcome === 'stale') {
        anyStale = true
        break
      }
      if (attempt >= MAX_GROUP_ATTEMPTS) throw outcome
      checkpoints = new Map([...checkpoints, ...(await readCheckpoints(control, config.pipeline, keys.map((k) => byKey.get(k)!)))])
    }
  }
  result.outcome = anyRegistered ? 'registered' : anyStale ? 'stale' : 'nothing-new'
  result.flushes = { ...pool.stats.flushes }
  result.peakBufferedBytes = pool.stats.peakBufferedBytes
  result.tables = [...tables.states()]
    .map((s) => tableResult(s, result))
    .filter((t) => t.rows > 0 || t.files > 0 || t.evolvedToSchemaId !== undefined || t.created)
  finish(result, checkpoints)
  if (cuts.size > 0) {
    const where = [...cuts].map(([k, offset]) => `${k} from offset ${offset}`).join(', ')
    throw new BatchDeferredError(
      `the batch reaches more than FLOE_MAX_TABLES_PER_BATCH=${config.limits.maxTablesPerBatch} tables: ${result.tables.length} tables registered, ${where} wait for the mapping's next delivery`,
      result,
    )
  }
  return result
}

/** A replayed dead letter goes only to the tables it failed for (it is already in the others). */
function restrictTables(item: Item, allowed: Set<string> | undefined): void {
  if (allowed === undefined || item.dead || item.dropped) return
  const before = item.tables
  item.tables = before.filter((t) => allowed.has(t))
  if (item.tables.length === 0) {
    const reason = `replay: the routes no longer send this record to ${[...allowed].join(', ')} (they send it to ${before.join(', ') || 'no table'})`
    item.dead = { record: item.record, reason, stage: 'route' }
  }
}

/** Per topic (memoised for the batch): true when its value format is `json`, decoded here without a Promise. */
function jsonTopics(deps: WriterDeps): (topic: string) => boolean {
  const known = new Map<string, boolean>()
  const format = deps.decoders.valueFormat
  return (topic) => {
    let json = known.get(topic)
    if (json === undefined) known.set(topic, (json = format?.(topic) === 'json'))
    return json
  }
}

/**
 * The `json` format's decoding without the Promise: JSON.parse's value (`fast`), the reason as
 * lib/codec's decodeValue gives it. `exact` is the record decoded exactly (parseJsonObject, once,
 * on demand): the value where digits JSON.parse may have rounded matter (guard.ts inspectRecord,
 * columnar/coerce.ts NeedsExact).
 */
function decodeJson(bytes: Uint8Array): DecodedValue & { exact?: () => Record<string, unknown> } {
  const r = parseJsonObjectFast(bytes)
  if (!r.ok) return { ok: false, reason: `json value: ${r.reason}` }
  let exact: Record<string, unknown> | undefined
  return {
    ok: true,
    value: r.value,
    exact: () => {
      if (exact !== undefined) return exact
      const e = parseJsonObject(bytes)
      if (!e.ok) throw new RecordError(`json value: ${e.reason}`)
      return (exact = e.value)
    },
  }
}

function prepareItem(deps: WriterDeps, record: KafkaRecord, pkey: string, json: boolean): Item | Promise<Item> {
  const { error, value } = record
  // Flagged, tombstone or too large: a dead letter without decoding.
  if (error !== undefined || value === null || value.byteLength > deps.config.limits.maxRecordBytes) return routeItem(deps, record, pkey, undefined)
  if (json) return routeItem(deps, record, pkey, decodeJson(value))
  return deps.decoders.decodeValue(record).then((decoded) => routeItem(deps, record, pkey, decoded))
}

/** A record with its decoded value (undefined: not decoded, because it is flagged, a tombstone or too large) → routed item or dead letter. */
function routeItem(deps: WriterDeps, record: KafkaRecord, pkey: string, decoded: (DecodedValue & { exact?: () => Record<string, unknown> }) | undefined): Item {
  if (record.error !== undefined) return { record, pkey, tables: [], dead: { record, reason: record.error, stage: 'event' } }
  let value: Record<string, unknown> | undefined
  let schema: Schema | undefined
  let exact: (() => Record<string, unknown>) | undefined
  const limits = deps.config.limits
  if (record.value !== null) {
    if (record.value.byteLength > limits.maxRecordBytes) {
      const reason = `record value is ${record.value.byteLength} bytes, more than FLOE_MAX_RECORD_KB=${limits.maxRecordBytes / 1024}`
      return { record, pkey, tables: [], dead: { record, reason, stage: 'decode' } }
    }
    if (decoded === undefined) throw new FloeError(`writer: record ${pkey}@${record.offset} reached routing undecoded`)
    if (!decoded.ok) return { record, pkey, tables: [], dead: { record, reason: decoded.reason, stage: 'decode' } }
    value = decoded.value
    schema = decoded.schema
    exact = decoded.exact
    let inspected = inspectRecord(value, limits, { declared: schema !== undefined })
    if (exact !== undefined && (inspected.problem !== undefined || inspected.unsafeInteger)) {
      // JSON.parse rounded an integer beyond 2^53, or the record breaks a limit (an overflowing
      // literal is Infinity only to JSON.parse): this record alone is decoded exactly and judged on that.
      const e = parseJsonObject(record.value)
      if (!e.ok) return { record, pkey, tables: [], dead: { record, reason: `json value: ${e.reason}`, stage: 'decode' } }
      value = e.value
      exact = undefined
      inspected = inspectRecord(value, limits, { declared: false })
    }
    const problem = inspected.problem
    if (problem !== undefined) return { record, pkey, tables: [], dead: { record, reason: problem, stage: 'decode' } }
  } else {
    // A tombstone (null value) has no row to write; it is a dead letter so it is never silent.
    return { record, pkey, tables: [], dead: { record, reason: 'record has no value (tombstone)', stage: 'decode' } }
  }
  const routed = deps.router.route(record.topic, value)
  if (routed.kind === 'tables') return { record, pkey, value, schema, tables: routed.tables, ...(exact !== undefined ? { exact } : {}) }
  if (routed.kind === 'drop') return { record, pkey, tables: [], dropped: true }
  return { record, pkey, tables: [], dead: { record, reason: routed.reason, stage: 'route' } }
}

/**
 * Keys of topics with a key format, decoded for the records routed to a table whose `_kafka.key`
 * is a string column (a binary column takes the raw bytes: nothing to decode). A key that cannot
 * be decoded makes the record a dead letter (`key: <reason>`); a registry outage throws
 * (retryable), before any file is written.
 */
async function decodeKeys(deps: WriterDeps, tables: TableSet, items: Item[]): Promise<void> {
  const decoders = deps.decoders
  if (decoders.decodeKey === undefined || decoders.keyFormat === undefined) return
  for (const item of items) {
    const { record } = item
    if (item.dead || record.key === null || decoders.keyFormat(record.topic) === undefined) continue
    if (!item.tables.some((t) => tables.wantsKeyText(t))) continue
    const decoded = await decoders.decodeKey(record)
    if (decoded.ok) {
      tables.setKey(record, decoded.value)
    } else {
      item.dead = { record, reason: `key: ${decoded.reason}`, stage: 'decode' }
      item.tables = []
    }
  }
}

async function checkBackpressure(deps: WriterDeps, tables: Set<string>): Promise<void> {
  const { config, control } = deps
  const counts = await Promise.all([...tables].map(async (t) => [t, await countPendingBatches(control, config.pipeline, t)] as const))
  const over = counts.filter(([, n]) => n > config.maxPendingBatches)
  if (over.length > 0) {
    throw new BackpressureError(
      `back pressure: ${over.map(([t, n]) => `table ${t} has ${n} pending batches`).join(', ')}, more than FLOE_MAX_PENDING_BATCHES=${config.maxPendingBatches}; the committer is behind, the records wait in Kafka`,
    )
  }
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
function deferPastTableLimit(items: Item[], max: number): { kept: Item[]; cuts: Map<string, bigint> } {
  const admitted = new Set<string>()
  const cuts = new Map<string, bigint>()
  const kept: Item[] = []
  for (const item of items) {
    if (cuts.has(item.pkey)) continue
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

/** Load, create or evolve every routed table once, from all of its records in the batch. */
async function prepareTables(tables: TableSet, items: Item[]): Promise<void> {
  const values = new Map<string, Sample[]>()
  for (const item of items) {
    for (const t of item.tables) {
      let list = values.get(t)
      if (!list) values.set(t, (list = []))
      list.push({ record: item.record, value: item.value!, schema: item.schema, exact: item.exact })
    }
  }
  // A few at a time: each is a catalog round trip or three (load, maybe create, maybe evolve).
  const queue = [...values]
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) await tables.prepare(next[0], next[1])
  }
  await Promise.all(Array.from({ length: Math.min(8, queue.length) }, worker))
}

function finish(result: WriteResult, checkpoints: Map<string, bigint | undefined>): WriteResult {
  result.checkpoints = Object.fromEntries([...checkpoints].filter(([, v]) => v !== undefined).map(([k, v]) => [k, v!.toString()]))
  return result
}
