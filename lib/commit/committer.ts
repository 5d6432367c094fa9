/**
 * One committer run: every table of the pipeline with pending batches, committed in parallel
 * (bounded by FLOE_COMMIT_CONCURRENCY), each independently — one table's failure is reported,
 * never a reason to skip the others.
 */
import { listPendingTables } from '../control/index.js'
import { emitMetrics, logger } from '../log.js'
import { commitTable } from './table.js'
import type { CommitDeps, CommitOptions, TableCommitResult } from './types.js'
import { mapBounded } from '../concurrency.js'

export interface CommitRunResult {
  tables: number
  committed: number
  /** Tables whose commit failed (see results[].error); non-zero means the run needs attention. */
  failures: number
  busy: number
  /** Tables not started because the deadline passed. */
  deferred: number
  batches: number
  files: number
  records: number
  results: TableCommitResult[]
}

export interface RunOptions extends CommitOptions {
  /** Only these tables (default: every table with pending batches). */
  tables?: string[]
  /** Epoch ms after which no new table commit starts (a Lambda's remaining time minus a margin). */
  deadline?: number
}

export async function runCommitter(deps: CommitDeps, opts: RunOptions = {}): Promise<CommitRunResult> {
  const tables = opts.tables ?? (await listPendingTables(deps.control, deps.config.pipeline))
  const results = await mapBounded(tables, deps.config.commitConcurrency, async (table): Promise<TableCommitResult> => {
    if (opts.deadline !== undefined && Date.now() >= opts.deadline) {
      return { table, status: 'deferred', batches: 0, files: 0, records: 0, alreadyCommitted: 0, pending: 0, conflicts: 0, latencyMs: 0 }
    }
    return commitTableWhileBacklogged(deps, table, opts)
  })
  const run: CommitRunResult = {
    tables: tables.length,
    committed: results.filter((r) => r.status === 'committed').length,
    failures: results.filter((r) => r.status === 'failed').length,
    busy: results.filter((r) => r.status === 'busy').length,
    deferred: results.filter((r) => r.status === 'deferred').length,
    batches: sum(results, (r) => r.batches),
    files: sum(results, (r) => r.files),
    records: sum(results, (r) => r.records),
    results,
  }
  emitMetrics({ TablesWithBacklog: tables.length, TableCommitFailures: run.failures })
  const log = run.failures > 0 ? logger.error.bind(logger) : logger.info.bind(logger)
  log('committer run finished', {
    tables: run.tables,
    committed: run.committed,
    failures: run.failures,
    busy: run.busy,
    deferred: run.deferred,
    batches: run.batches,
    failed: results.filter((r) => r.status === 'failed').map((r) => ({ table: r.table, error: r.error?.message })),
  })
  return run
}

/**
 * Snapshot after snapshot of one table while batches remain and FLOE_COMMIT_RUN_SECONDS (and the
 * run's deadline) allow: at 1,000 partitions one table gets more batches a minute than one
 * snapshot takes (docs/scale.md). Each round is the whole protocol — lease, consistent read,
 * coverage check, swap, fenced mark — so every invariant holds per round.
 */
async function commitTableWhileBacklogged(deps: CommitDeps, table: string, opts: RunOptions): Promise<TableCommitResult> {
  const budgetEnd = Date.now() + deps.config.commitRunMs
  const end = opts.deadline === undefined ? budgetEnd : Math.min(budgetEnd, opts.deadline)
  const total = await commitTable(deps, table, opts)
  let last = total
  let snapshots = total.status === 'committed' ? 1 : 0
  // Another round only after a snapshot, with batches left, and time for one more like the last.
  while (last.status === 'committed' && last.pending - last.batches - last.alreadyCommitted > 0 && Date.now() + last.latencyMs <= end) {
    last = await commitTable(deps, table, opts)
    if (last.status === 'committed') snapshots++
    if (last.status === 'failed') {
      total.status = 'failed'
      total.error = last.error
    }
    if (last.snapshotId !== undefined) total.snapshotId = last.snapshotId
    total.batches += last.batches
    total.files += last.files
    total.records += last.records
    total.alreadyCommitted += last.alreadyCommitted
    total.conflicts += last.conflicts
    total.latencyMs += last.latencyMs
  }
  if (snapshots > 1) total.snapshots = snapshots
  return total
}

const sum = <T>(xs: T[], f: (x: T) => number) => xs.reduce((n, x) => n + f(x), 0)
