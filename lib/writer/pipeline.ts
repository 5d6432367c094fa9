/**
 * One writer invocation (`writeBatch`): an MSK batch in, Parquet files on S3 and ONE fenced
 * registration per partition group out (DESIGN.md invariants 1, 2, 4, 5, 6, 8).
 *
 *   parse → read checkpoints (consistent) → drop records below them → decode → route
 *   → back pressure (before any file is written) → tables (load / create / evolve)
 *   → coerce (bad → dead letter) → bounded buffers → Parquet files → dead letters
 *   → registerBatches (one transaction per group) → on 'stale': delete this attempt's files.
 *
 * Offsets have gaps: a partition's new checkpoint is the last offset DELIVERED + 1, never a
 * count. A partition all of whose records are dead letters or dropped still advances.
 * Returns a plain WriteResult.
 */
import { randomUUID } from 'node:crypto'
import { BackpressureError, FencedError, IcebergError, RecordError, SchemaError } from '../errors.js'
import { countPendingBatches, maxTransactionItems, registerBatches } from '../control/batches.js'
import { readCheckpoints } from '../control/checkpoints.js'
import type { OffsetRange, PendingBatchInput } from '../control/types.js'
import type { DataFile } from '../iceberg/types.js'
import { eventPartitions, type EventPartition } from '../kafka/partitions.js'
import { parseKafkaEvent, partitionKey, type KafkaRecord } from '../kafka/event.js'
import { BufferPool, partitionKeyOf, type FlushReason } from './buffers.js'
import { writeDeadLetters, type DeadLetter } from './dead-letters.js'
import { dataFilePath, WrittenFiles, writeDataFile } from './files.js'
import { planGroups } from './groups.js'
import { TableSet, type Sample, type TableState } from './tables.js'
import type { Schema } from '../schema/types.js'
import type { TableWriteResult, WriteResult, WriterDeps } from './types.js'

/** Attempts per group when another writer advanced a checkpoint part of the way. */
const MAX_GROUP_ATTEMPTS = 3

interface Item {
  record: KafkaRecord
  pkey: string
  value?: Record<string, unknown>
  /** The value's schema when the format has one (Avro, Connect envelope). */
  schema?: Schema
  tables: string[]
  dead?: DeadLetter
  dropped?: boolean
}

export interface WriteOptions {
  /** Names files and the registration; the Lambda request id in production. */
  writerId?: string
}

export async function writeBatch(deps: WriterDeps, event: unknown, opts: WriteOptions = {}): Promise<WriteResult> {
  const { config, control } = deps
  const writerId = opts.writerId ?? randomUUID()
  const records = parseKafkaEvent(event)
  const partitions = eventPartitions(records)
  const byKey = new Map(partitions.map((p) => [p.key, p]))
  let checkpoints = await readCheckpoints(control, config.pipeline, partitions)

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
  const items: Item[] = []
  for (const record of records) {
    const pkey = partitionKey(record.topic, record.partition)
    const cp = checkpoints.get(pkey)
    if (record.offset >= 0n && cp !== undefined && record.offset < cp) {
      result.belowCheckpoint++
      continue
    }
    items.push(await prepareItem(deps, record, pkey))
  }
  if (items.length === 0) return finish(result, checkpoints)

  // Back pressure, before anything is written.
  const routed = new Set(items.flatMap((i) => i.tables))
  await checkBackpressure(deps, routed)

  const tables = new TableSet(deps)
  await prepareTables(tables, items)

  const pool = new BufferPool<Record<string, unknown>>({
    budgetBytes: config.memoryBudgetBytes,
    targetFileBytes: config.targetFileBytes,
    flush: async (buffer, _reason: FlushReason) => {
      const state = tables.get(buffer.table)!
      const chunk = await tables.encode(state, buffer.rows)
      const path = dataFilePath(state.metadata, state.partitionPath(buffer.partition), writerId, group.files.nextSeq())
      const file = await writeDataFile(deps.io, path, chunk, state.spec['spec-id'], buffer.partition)
      group.files.add(path)
      let list = group.dataFiles.get(buffer.table)
      if (!list) group.dataFiles.set(buffer.table, (list = []))
      list.push(file)
    },
  })
  let group = newGroupState()

  const partitionTables = new Map<string, Set<string>>()
  for (const item of items) {
    let s = partitionTables.get(item.pkey)
    if (!s) partitionTables.set(item.pkey, (s = new Set()))
    for (const t of item.tables) s.add(t)
  }
  const groups = planGroups(
    [...partitionTables].map(([key, t]) => ({ key, tables: t })),
    maxTransactionItems,
  )

  let anyRegistered = false
  let anyStale = false
  for (const keys of groups) {
    const inGroup = new Set(keys)
    for (let attempt = 1; ; attempt++) {
      group = newGroupState()
      const groupItems = items.filter((i) => inGroup.has(i.pkey) && !(i.record.offset >= 0n && (checkpoints.get(i.pkey) ?? -1n) > i.record.offset))
      if (groupItems.length === 0) break
      const outcome = await runGroup(deps, tables, pool, group, groupItems, keys, byKey, checkpoints, writerId, result)
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
  return finish(result, checkpoints)
}

interface GroupState {
  files: WrittenFiles
  dataFiles: Map<string, DataFile[]>
}
const newGroupState = (): GroupState => ({ files: new WrittenFiles(), dataFiles: new Map() })

type TableTally = { rows: number; files: number; bytes: number }
const tallies = new WeakMap<WriteResult, Map<string, TableTally>>()
function tally(result: WriteResult, table: string): TableTally {
  let m = tallies.get(result)
  if (!m) tallies.set(result, (m = new Map()))
  let t = m.get(table)
  if (!t) m.set(table, (t = { rows: 0, files: 0, bytes: 0 }))
  return t
}

async function prepareItem(deps: WriterDeps, record: KafkaRecord, pkey: string): Promise<Item> {
  if (record.error !== undefined) return { record, pkey, tables: [], dead: { record, reason: record.error, stage: 'event' } }
  let value: Record<string, unknown> | undefined
  let schema: Schema | undefined
  if (record.value !== null) {
    const decoded = await deps.decoders.decodeValue(record)
    if (!decoded.ok) return { record, pkey, tables: [], dead: { record, reason: decoded.reason, stage: 'decode' } }
    value = decoded.value
    schema = decoded.schema
  } else {
    // A tombstone (null value) has no row to write; it is a dead letter so it is never silent.
    return { record, pkey, tables: [], dead: { record, reason: 'record has no value (tombstone)', stage: 'decode' } }
  }
  const routed = deps.router.route(record.topic, value)
  if (routed.kind === 'tables') return { record, pkey, value, schema, tables: routed.tables }
  if (routed.kind === 'drop') return { record, pkey, tables: [], dropped: true }
  return { record, pkey, tables: [], dead: { record, reason: routed.reason, stage: 'route' } }
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

/** Load, create or evolve every routed table once, from all of its records in the batch. */
async function prepareTables(tables: TableSet, items: Item[]): Promise<void> {
  const values = new Map<string, Sample[]>()
  for (const item of items) {
    for (const t of item.tables) {
      let list = values.get(t)
      if (!list) values.set(t, (list = []))
      list.push({ record: item.record, value: item.value!, schema: item.schema })
    }
  }
  // A few at a time: each is a catalog round trip or three (load, maybe create, maybe evolve).
  const queue = [...values]
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) await tables.prepare(next[0], next[1])
  }
  await Promise.all(Array.from({ length: Math.min(8, queue.length) }, worker))
}

async function runGroup(
  deps: WriterDeps,
  tables: TableSet,
  pool: BufferPool<Record<string, unknown>>,
  group: GroupState,
  items: Item[],
  keys: string[],
  byKey: Map<string, EventPartition>,
  checkpoints: Map<string, bigint | undefined>,
  writerId: string,
  result: WriteResult,
): Promise<'registered' | 'stale' | FencedError> {
  const { config, control, io } = deps
  const dead: DeadLetter[] = []
  let dropped = 0
  // Per table, per partition: the offsets and timestamps of the rows written.
  const ranges = new Map<string, Map<string, { records: number; maxTimestamp: number }>>()
  const firstNew = new Map<string, bigint>()
  for (const item of items) {
    const off = item.record.offset
    if (off >= 0n) {
      const f = firstNew.get(item.pkey)
      if (f === undefined || off < f) firstNew.set(item.pkey, off)
    }
    if (item.dead) {
      dead.push(item.dead)
      continue
    }
    if (item.dropped) {
      dropped++
      continue
    }
    for (const table of item.tables) {
      const state = tables.get(table)!
      if (state.failure !== undefined) {
        dead.push({ record: item.record, reason: state.failure, table, stage: 'schema' })
        continue
      }
      let built
      try {
        built = tables.buildRow(state, item.record, item.value!)
      } catch (err) {
        // IcebergError: a value the partition transform refuses. Data, not a crash.
        if (err instanceof RecordError || err instanceof SchemaError || err instanceof IcebergError) {
          dead.push({ record: item.record, reason: err.message, table, stage: 'coerce' })
          continue
        }
        throw err
      }
      await pool.add(table, built.partition, partitionKeyOf(built.partition), built.row)
      let perTable = ranges.get(table)
      if (!perTable) ranges.set(table, (perTable = new Map()))
      const r = perTable.get(item.pkey) ?? { records: 0, maxTimestamp: 0 }
      r.records++
      if (Number.isFinite(item.record.timestamp) && item.record.timestamp > r.maxTimestamp) r.maxTimestamp = item.record.timestamp
      perTable.set(item.pkey, r)
    }
  }
  await pool.flushAll()

  // Dead letters before the registration: never lost, and a retry overwrites them.
  const dlqPaths = dead.length ? await writeDeadLetters(io, config.dlq, config.pipeline, dead) : []

  const expected = new Map<string, bigint | undefined>()
  const next = new Map<string, bigint>()
  for (const key of keys) {
    const p = byKey.get(key)!
    if (p.lastOffset === undefined || !firstNew.has(key)) continue
    expected.set(key, checkpoints.get(key))
    next.set(key, p.lastOffset + 1n)
  }
  const batches: PendingBatchInput[] = []
  for (const [table, files] of group.dataFiles) {
    const state = tables.get(table)!
    const perTable = ranges.get(table) ?? new Map()
    const offsetRanges: OffsetRange[] = [...perTable]
      .filter(([key]) => next.has(key))
      .map(([key, r]) => {
        const p = byKey.get(key)!
        return { topic: p.topic, partition: p.partition, firstOffset: firstNew.get(key)!, nextOffset: next.get(key)!, records: r.records, maxTimestamp: r.maxTimestamp }
      })
    batches.push({
      table,
      files,
      schemaId: state.schema['schema-id'],
      specId: state.spec['spec-id'],
      ranges: offsetRanges,
      recordCount: files.reduce((n, f) => n + f.recordCount, 0),
      bytes: files.reduce((n, f) => n + f.fileSizeInBytes, 0),
    })
  }

  let outcome: 'registered' | 'stale'
  try {
    outcome = await registerBatches(control, { pipeline: config.pipeline, writerId, expected, next, batches })
  } catch (err) {
    // FencedError: the transaction was cancelled, nothing was written — the caller deletes the
    // files and retries. Any other error may hide a transaction that DID commit (a timeout after
    // sending): the files must stay; if they are not registered, orphan cleanup removes them.
    if (err instanceof FencedError) return err
    throw err
  }
  result.transactions++
  if (outcome === 'registered') {
    for (const [k, v] of next) checkpoints.set(k, v)
    result.dropped += dropped
    result.deadLetters += dead.length
    result.deadLetterPaths.push(...dlqPaths)
    for (const b of batches) {
      const t = tally(result, b.table)
      t.rows += b.recordCount
      t.files += b.files.length
      t.bytes += b.bytes
      result.bytesWritten += b.bytes
    }
  }
  return outcome
}

function tableResult(s: TableState, result: WriteResult): TableWriteResult {
  const t = tally(result, s.name)
  return {
    table: s.name,
    rows: t.rows,
    files: t.files,
    bytes: t.bytes,
    schemaId: s.schema['schema-id'],
    specId: s.spec['spec-id'],
    unknownFieldsIgnored: s.unknownFieldsIgnored,
    ...(s.evolvedToSchemaId !== undefined ? { evolvedToSchemaId: s.evolvedToSchemaId } : {}),
    ...(s.created ? { created: true } : {}),
  }
}

function finish(result: WriteResult, checkpoints: Map<string, bigint | undefined>): WriteResult {
  result.checkpoints = Object.fromEntries([...checkpoints].filter(([, v]) => v !== undefined).map(([k, v]) => [k, v!.toString()]))
  return result
}
