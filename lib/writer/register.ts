/**
 * One registration group (see groups.ts): the group's new records become rows in the shared
 * buffer pool, the buffers become Parquet files, the dead letters are written, and ONE
 * registerBatches transaction records a pending batch per table plus every partition's new
 * checkpoint (the last DELIVERED offset + 1: offsets have gaps), conditioned on the checkpoints
 * read. A partition whose records were all dead letters or dropped still advances.
 */
import { FencedError, IcebergError, RecordError, SchemaError } from '../errors.js'
import { registerBatches } from '../control/batches.js'
import type { OffsetRange, PendingBatchInput } from '../control/types.js'
import type { DataFile } from '../iceberg/types.js'
import type { EventPartition } from '../kafka/partitions.js'
import type { KafkaRecord } from '../kafka/event.js'
import type { Schema } from '../schema/types.js'
import { partitionKeyOf, type BufferPool } from './buffers.js'
import { writeDeadLetters, type DeadLetter } from './dead-letters.js'
import { WrittenFiles } from './files.js'
import type { TableSet, TableState } from './tables.js'
import { withTransactionBudget } from './tx-budget.js'
import type { ReplayOptions, TableWriteResult, WriteResult, WriterDeps } from './types.js'

/** One record of the batch after decoding and routing. */
export interface Item {
  record: KafkaRecord
  pkey: string
  value?: Record<string, unknown>
  /** The value's schema when the format has one (Avro, Connect envelope). */
  schema?: Schema
  tables: string[]
  /** Set when `value` is JSON.parse's: the exact decoding, for where digits matter (see pipeline.ts decodeJson). */
  exact?: () => Record<string, unknown>
  dead?: DeadLetter
  dropped?: boolean
}

/** The files one attempt of a group wrote, by table. */
export interface GroupState {
  files: WrittenFiles
  dataFiles: Map<string, DataFile[]>
}
export const newGroupState = (): GroupState => ({ files: new WrittenFiles(), dataFiles: new Map() })

/** Rows, files and bytes registered per table, kept beside the result until the end. */
type TableTally = { rows: number; files: number; bytes: number }
const tallies = new WeakMap<WriteResult, Map<string, TableTally>>()
export function tally(result: WriteResult, table: string): TableTally {
  let m = tallies.get(result)
  if (!m) tallies.set(result, (m = new Map()))
  let t = m.get(table)
  if (!t) m.set(table, (t = { rows: 0, files: 0, bytes: 0 }))
  return t
}

/** Write and register one group; a FencedError is returned (not thrown) so the caller can retry. */
export async function writeGroup(
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
  /** New checkpoints of partitions registered in offset segments (groups.ts): the next segment's first offset. */
  ends: ReadonlyMap<string, bigint> = new Map(),
  replay?: ReplayOptions,
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
        built = tables.buildRow(state, item.record, item.value!, item.exact)
      } catch (err) {
        // IcebergError: a value the partition transform refuses. Data, not a crash.
        if (err instanceof RecordError || err instanceof SchemaError || err instanceof IcebergError) {
          dead.push({ record: item.record, reason: err.message, table, stage: 'coerce' })
          continue
        }
        throw err
      }
      const adding = pool.add(table, built.partition, partitionKeyOf(built.partition), built.row, built.bytes)
      if (adding !== undefined) await adding
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
  const dlqPaths = dead.length && (replay?.writeDeadLetters ?? true) ? await writeDeadLetters(io, config.dlq, config.pipeline, dead) : []

  const expected = new Map<string, bigint | undefined>()
  const next = new Map<string, bigint>()
  for (const key of keys) {
    const p = byKey.get(key)!
    if (p.lastOffset === undefined || !firstNew.has(key)) continue
    expected.set(key, checkpoints.get(key))
    next.set(key, ends.get(key) ?? p.lastOffset + 1n)
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
      ...(replay ? { replayId: replay.replayId } : {}),
    })
  }
  const fence = replay
    ? { expected: new Map<string, bigint | undefined>(), next: new Map<string, bigint>(), markers: await replay.markers(dead), replayId: replay.replayId }
    : { expected, next }

  let outcome: 'registered' | 'stale'
  try {
    outcome = await registerBatches(withTransactionBudget(control, batches), { pipeline: config.pipeline, writerId, ...fence, batches })
  } catch (err) {
    // FencedError: the transaction was cancelled, nothing was written — the caller deletes the
    // files and retries. Any other error may hide a transaction that DID commit (a timeout after
    // sending): the files must stay; if they are not registered, orphan cleanup removes them.
    if (err instanceof FencedError) return err
    throw err
  }
  result.transactions++
  if (outcome === 'registered') {
    if (!replay) for (const [k, v] of next) checkpoints.set(k, v)
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

export function tableResult(s: TableState, result: WriteResult): TableWriteResult {
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
