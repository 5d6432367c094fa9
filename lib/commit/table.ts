/**
 * The commit protocol for one table (DESIGN.md invariant 3):
 * lease → pending batches (consistent, offset order) → load table → drop batches the table's
 * offsets already cover → append one snapshot → renew lease → catalog swap (on conflict: reload,
 * re-drop, rebase, retry with backoff: lib/catalog/rebase.ts under FLOE_COMMIT_* or the table's commit.retry.*) → mark batches committed (fenced by the lease epoch) →
 * release. A crash anywhere leaves either no snapshot (the batches stay pending) or a snapshot
 * whose summary covers the batches (the next run drops and marks them): never a second append.
 */
import { randomUUID } from 'node:crypto'
import { appendFiles } from '../iceberg/manifests.js'
import { currentSnapshot, dataFileFromJSON, type DataFile, type TableMetadata } from '../iceberg/index.js'
import { commitWithRebase, parseTableId, type LoadedTable, type Rebased, type TableId } from '../catalog/index.js'
import { CommitConflictError, CommitStateUnknownError, FloeError } from '../errors.js'
import { emitMetrics, logger, MetricUnit } from '../log.js'
import { acquireLease, markCommitted, releaseLease, renewLease, type CommittedMark, type Lease, loadBatchFiles, readPendingBatches, noteBacklog, type PendingBatch } from '../control/index.js'
import { tableCommitPolicy } from '../retry/index.js'
import {
  COMMIT_ID_KEY,
  committedOffsets,
  coverage,
  formatOffsets,
  mergeOffsets,
  offsetsSummaryKey,
  REPLAY_ID_KEY,
  replayedIds,
  VALID_THROUGH_KEY,
  validThroughTs,
} from './offsets.js'
import { selectBatches } from './select.js'
import type { CommitDeps, CommitOptions, TableCommitResult } from './types.js'

/** `namespace.name` → catalog identifier (the name is after the last dot). */
export function tableIdentifier(table: string): TableId {
  return parseTableId(table)
}

/** Commit the pending batches of one table. Never throws: failures come back as status 'failed'. */
export async function commitTable(deps: CommitDeps, table: string, opts: CommitOptions = {}): Promise<TableCommitResult> {
  const started = Date.now()
  const result: TableCommitResult = { table, status: 'idle', batches: 0, files: 0, records: 0, alreadyCommitted: 0, pending: 0, conflicts: 0, latencyMs: 0 }
  const pipeline = deps.config.pipeline
  let lease: Lease | undefined
  try {
    lease = await acquireLease(deps.control, pipeline, table, { owner: opts.owner })
    if (lease === undefined) {
      result.status = 'busy'
      return result
    }
    const first = await readPendingBatches(deps.control, pipeline, table)
    if (first.length === 0) {
      await noteBacklogQuietly(deps, table, 0)
      return result
    }
    // The shards (and the pages of one shard) are read one after another, not at one instant: a
    // writer may register batch r into a part already read and then r+1 into one not yet read.
    // Committing r+1 without r would raise the summary offsets past r, which would then look
    // covered and never be appended. A second read sees every batch registered before it starts,
    // so every predecessor of a batch of the first read: only those are taken, in offset order
    // over the second read.
    const pending = await readPendingBatches(deps.control, pipeline, table)
    result.pending = pending.length
    emitMetrics({ PendingBatches: pending.length })
    const eligible = new Set(first.map((b) => b.batchId))
    const selected = selectBatches(pending, { maxBatches: deps.config.commitMaxBatches, maxBytes: deps.config.commitMaxBytes }, eligible)
    if (selected.length === 0) return result
    const files = await loadBatchFiles(deps.control, pipeline, selected, dataFileFromJSON)
    const outcome = await appendWithRetries(deps, table, lease, selected, files, opts, result)
    lease = outcome.lease
    if (outcome.appended.length > 0) await opts.hooks?.afterSwap?.({ table, snapshotId: outcome.snapshotId! })
    const marks: CommittedMark[] = [
      ...outcome.appended.map((batch) => ({ batch, snapshotId: outcome.snapshotId!, commitId: outcome.commitId })),
      ...outcome.covered.map((batch) => ({ batch, snapshotId: outcome.coveringSnapshotId ?? 0n, commitId: 'already-committed' })),
    ]
    await markCommitted(deps.control, lease, marks)
    const spills = [...outcome.appended, ...outcome.covered].flatMap((b) => (b.spillPath ? [b.spillPath] : []))
    if (spills.length > 0) {
      await deps.control.io.deleteMany(spills).catch((err) => logger.warn('could not delete spilled file lists', { table, error: String(err) }))
    }
    result.status = outcome.appended.length > 0 ? 'committed' : 'marked'
    result.snapshotId = outcome.appended.length > 0 ? outcome.snapshotId : undefined
    result.batches = outcome.appended.length
    result.files = outcome.appended.reduce((n, b) => n + b.fileCount, 0)
    result.records = outcome.appended.reduce((n, b) => n + b.recordCount, 0)
    result.alreadyCommitted = outcome.covered.length
    await noteBacklogQuietly(deps, table, pending.length - outcome.appended.length - outcome.covered.length)
    emitMetrics({ BatchesCommitted: result.batches, FilesCommitted: result.files, RecordsCommitted: result.records })
    if (result.alreadyCommitted > 0) emitMetrics({ BatchesAlreadyCommitted: result.alreadyCommitted })
    logger.info('table committed', {
      table,
      status: result.status,
      snapshotId: result.snapshotId?.toString(),
      batches: result.batches,
      files: result.files,
      records: result.records,
      alreadyCommitted: result.alreadyCommitted,
      pending: result.pending,
      conflicts: result.conflicts,
    })
    return result
  } catch (err) {
    result.status = 'failed'
    result.error = err as Error
    emitMetrics({ CommitFailures: 1 })
    logger.error('table commit failed', { table, error: err as Error, retryable: (err as FloeError).retryable ?? false })
    return result
  } finally {
    if (lease !== undefined) await releaseLease(deps.control, lease).catch((err) => logger.warn('could not release lease', { table, error: String(err) }))
    result.latencyMs = Date.now() - started
    emitMetrics({ CommitLatency: { value: result.latencyMs, unit: MetricUnit.Milliseconds } })
  }
}

/** The writers' back-pressure hint (countPendingBatches); losing it only costs them a full count. */
async function noteBacklogQuietly(deps: CommitDeps, table: string, pending: number): Promise<void> {
  await noteBacklog(deps.control, deps.config.pipeline, table, pending).catch((err) => logger.warn('could not note the backlog', { table, error: String(err) }))
}

interface AppendOutcome {
  lease: Lease
  appended: PendingBatch[]
  covered: PendingBatch[]
  snapshotId?: bigint
  coveringSnapshotId?: bigint
  commitId: string
}

/** The batches one attempt appends (or finds covered) on a fresh base. */
interface Split {
  todo: PendingBatch[]
  covered: PendingBatch[]
  coveringSnapshotId?: bigint
}

async function appendWithRetries(
  deps: CommitDeps,
  table: string,
  lease: Lease,
  selected: PendingBatch[],
  files: Map<string, DataFile[]>,
  opts: CommitOptions,
  result: TableCommitResult,
): Promise<AppendOutcome> {
  const commitId = randomUUID()
  const pipeline = deps.config.pipeline
  const build = async ({ metadata }: LoadedTable): Promise<Rebased<Split>> => {
    const split = splitCovered(table, pipeline, metadata, selected)
    if (split.todo.length === 0) return { plan: split }
    const newFiles = split.todo.flatMap((b) => files.get(b.batchId)!)
    const summary = snapshotSummary(pipeline, committedOffsets(metadata, pipeline).offsets, split.todo, commitId)
    return { plan: split, metadata: await appendFiles(deps.io, metadata, newFiles, { summary }) }
  }
  const { plan, committed } = await commitWithRebase(deps.catalog, tableIdentifier(table), build, {
    policy: (first) => tableCommitPolicy(deps.config, first.metadata.properties, table),
    beforeCommit: async (attempt) => {
      lease = await renewLease(deps.control, lease)
      await opts.hooks?.beforeSwap?.({ table, attempt })
    },
    // Unknown state is rechecked, not retried blindly: the reload shows whether our snapshot
    // landed (its offsets then cover our batches, which `build` drops as covered), which is the
    // point of carrying them in the summary.
    recheckUnknown: true,
    onRetry: (err, { attempt, delayMs }) => {
      result.conflicts++
      emitMetrics({ [err instanceof CommitStateUnknownError ? 'CommitStateUnknown' : 'CommitConflicts']: 1, CommitRetries: 1 })
      logger.info('commit conflict: reloading and rebasing', { table, attempt, backoffMs: Math.round(delayMs), error: err.message })
    },
    exhausted: (err, attempts) => {
      result.conflicts++
      emitMetrics({ [err instanceof CommitStateUnknownError ? 'CommitStateUnknown' : 'CommitConflicts']: 1 })
      return new CommitConflictError(`table ${table}: still conflicting after ${attempts} attempts; the next run resumes`, { cause: err })
    },
  })
  const { todo, covered, coveringSnapshotId } = plan
  if (committed === undefined) return { lease, appended: [], covered, coveringSnapshotId, commitId }
  return { lease, appended: todo, covered, snapshotId: currentSnapshot(committed.metadata)!['snapshot-id'], coveringSnapshotId, commitId }
}

/** The selected batches the table does not hold yet (todo) and those its snapshots already cover. */
function splitCovered(table: string, pipeline: string, metadata: TableMetadata, selected: PendingBatch[]): Split {
  const committed = committedOffsets(metadata, pipeline)
  const todo: PendingBatch[] = []
  const covered: PendingBatch[] = []
  const replayed = selected.some((b) => b.replayId !== undefined) ? replayedIds(metadata) : new Set<string>()
  for (const b of selected) {
    if (b.replayId !== undefined) {
      // Below the committed offsets by nature: in the table iff a snapshot names its replay id.
      ;(replayed.has(b.replayId) ? covered : todo).push(b)
      continue
    }
    const c = coverage(b.ranges, committed.offsets)
    if (c === 'covered') covered.push(b)
    else if (c === 'uncovered') todo.push(b)
    else {
      // Batches commit whole, so this means the summary was edited by hand or another pipeline shares the key.
      throw new FloeError(
        `table ${table}: pending batch ${b.batchId} is only partly covered by ${offsetsSummaryKey(pipeline)} of snapshot ${committed.snapshot?.['snapshot-id']} (ranges ${describeRanges(b)}); refusing to append part of it twice`,
      )
    }
  }
  return { todo, covered, coveringSnapshotId: committed.snapshot?.['snapshot-id'] }
}

/** The new snapshot's summary: the merged offsets, the commit id, valid-through and replay ids. */
function snapshotSummary(pipeline: string, offsets: ReturnType<typeof committedOffsets>['offsets'], todo: PendingBatch[], commitId: string): Record<string, string> {
  const summary: Record<string, string> = {
    [offsetsSummaryKey(pipeline)]: formatOffsets(mergeOffsets(offsets, todo)),
    [COMMIT_ID_KEY]: commitId,
  }
  const validThrough = validThroughTs(todo)
  if (validThrough !== undefined) summary[VALID_THROUGH_KEY] = String(validThrough)
  const replayIds = [...new Set(todo.flatMap((b) => (b.replayId ? [b.replayId] : [])))]
  if (replayIds.length > 0) summary[REPLAY_ID_KEY] = replayIds.sort().join(',')
  return summary
}

function describeRanges(b: PendingBatch): string {
  return b.ranges.map((r) => `${r.topic}-${r.partition} [${r.firstOffset}, ${r.nextOffset})`).join(', ')
}
