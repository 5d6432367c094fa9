/**
 * One maintenance run for every table this pipeline writes, in parallel (bounded by
 * FLOE_COMMIT_CONCURRENCY), each table independently — one table's failure is reported, never a
 * reason to skip the others. Per table, in this order: compaction, manifest rewrite and snapshot expiry (together
 * under the committer's lease for the table; a table whose lease is held is `busy` and left to
 * the next run), then orphan cleanup (which needs no lease: it deletes only old unreferenced
 * files); then the spilled file lists.
 *
 * Which tables: those the pipeline has committed to (a commit lease item, which is never
 * deleted) or has pending batches for. Deliberately NOT every table of the catalog namespaces
 * the routes name: other engines' tables may share those namespaces, and their writers (a Spark
 * job running for a day) are not covered by Floe's pending-batch protection.
 */
import { mapBounded } from '../concurrency.js'
import { listLeasedTables, listPendingTables } from '../control/index.js'
import { NoSuchTableError } from '../errors.js'
import { emitMetrics, logger } from '../log.js'
import { withTableLease } from './commit.js'
import { compactTable, type CompactResult } from './compact.js'
import { expireSnapshots, type ExpireResult } from './expire.js'
import { rewriteTableManifests, type ManifestRewriteResult } from './manifests.js'
import { removeOrphanFiles, removeOrphanSpills } from './orphans.js'
import type { MaintenanceDeps, OrphanOptions, OrphanResult } from './types.js'

export type MaintenanceTask = 'compact' | 'manifests' | 'expire' | 'orphans'
/** `--all` and the scheduled run: in this order. */
export const ALL_TASKS: MaintenanceTask[] = ['compact', 'manifests', 'expire', 'orphans']

export interface TableMaintenanceResult {
  table: string
  /** `busy`: the committer (or another maintenance run) held the table's lease; compaction and expiry wait for the next run. */
  status: 'cleaned' | 'missing' | 'failed' | 'busy'
  compaction?: CompactResult
  manifests?: ManifestRewriteResult
  expiry?: ExpireResult
  orphans?: OrphanResult
  error?: Error
}

export interface MaintenanceRunResult {
  tables: number
  failures: number
  /** Orphans deleted over all tables and spills (or found, in a dry run). */
  orphans: number
  deleted: number
  /** Tables whose lease was held (compaction and expiry skipped until the next run). */
  busy: number
  /** Small files rewritten, snapshots expired, and bytes freed by expiry over all tables. */
  filesCompacted: number
  snapshotsExpired: number
  bytesReclaimed: number
  results: TableMaintenanceResult[]
  spills?: OrphanResult
  spillError?: Error
}

export interface MaintenanceRunOptions extends OrphanOptions {
  /** Only these tables (default: every table of the pipeline, see above). Spills are skipped when set. */
  tables?: string[]
  /** Tables cleaned at once (default FLOE_COMMIT_CONCURRENCY). */
  concurrency?: number
  /** What to do (default: orphan cleanup only). */
  tasks?: MaintenanceTask[]
  /** Epoch ms after which compaction starts no new group (the Lambda's remaining time minus a margin). */
  deadline?: number
}

/** The tables the pipeline writes: ever leased by its committer, or with pending batches. */
export async function pipelineTables(deps: MaintenanceDeps): Promise<string[]> {
  const [leased, pending] = await Promise.all([listLeasedTables(deps.control, deps.config.pipeline), listPendingTables(deps.control, deps.config.pipeline)])
  return [...new Set([...leased, ...pending])].sort()
}

export async function runMaintenance(deps: MaintenanceDeps, opts: MaintenanceRunOptions = {}): Promise<MaintenanceRunResult> {
  const tables = opts.tables ?? (await pipelineTables(deps))
  const results = await mapBounded(tables, opts.concurrency ?? deps.config.commitConcurrency, async (table): Promise<TableMaintenanceResult> => {
    try {
      return await maintainTable(deps, table, opts)
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err))
      if (error instanceof NoSuchTableError) return { table, status: 'missing', error }
      logger.error('orphan cleanup failed', { table, error })
      return { table, status: 'failed', error }
    }
  })
  const tasks = opts.tasks ?? ['orphans']
  const run: MaintenanceRunResult = { tables: tables.length, failures: results.filter((r) => r.status === 'failed').length, orphans: 0, deleted: 0, busy: results.filter((r) => r.status === 'busy').length, filesCompacted: 0, snapshotsExpired: 0, bytesReclaimed: 0, results }
  for (const r of results) {
    run.filesCompacted += r.compaction?.filesRewritten ?? 0
    run.snapshotsExpired += r.expiry?.snapshotsExpired ?? 0
    run.bytesReclaimed += r.expiry?.bytesReclaimed ?? 0
  }
  if (opts.tables === undefined && tasks.includes('orphans')) {
    try {
      run.spills = await removeOrphanSpills(deps, { ...opts, tables })
    } catch (err) {
      run.spillError = err instanceof Error ? err : new Error(String(err))
      run.failures++
      logger.error('orphan spill cleanup failed', { error: run.spillError })
    }
  }
  for (const r of [...results.map((x) => x.orphans), run.spills]) {
    if (!r) continue
    run.orphans += r.orphans.length
    run.deleted += r.deleted
  }
  emitMetrics({ MaintenanceFailures: run.failures })
  logger.info('maintenance run finished', { tables: run.tables, failures: run.failures, busy: run.busy, filesCompacted: run.filesCompacted, snapshotsExpired: run.snapshotsExpired, bytesReclaimed: run.bytesReclaimed, orphans: run.orphans, deleted: run.deleted, dryRun: opts.dryRun === true })
  return run
}

/** The tasks of one table, in ALL_TASKS order. */
async function maintainTable(deps: MaintenanceDeps, table: string, opts: MaintenanceRunOptions): Promise<TableMaintenanceResult> {
  const tasks = opts.tasks ?? ['orphans']
  const result: TableMaintenanceResult = { table, status: 'cleaned' }
  if (tasks.includes('compact') || tasks.includes('manifests') || tasks.includes('expire')) {
    const leased = await withTableLease(deps, table, async (holder) => {
      if (tasks.includes('compact')) result.compaction = await compactTable(deps, table, holder, { dryRun: opts.dryRun, deadline: opts.deadline })
      if (tasks.includes('manifests')) result.manifests = await rewriteTableManifests(deps, table, holder, { dryRun: opts.dryRun })
      if (tasks.includes('expire')) result.expiry = await expireSnapshots(deps, table, holder, { dryRun: opts.dryRun, pipelines: opts.pipelines })
      return true
    })
    if (leased === undefined) result.status = 'busy'
  }
  if (tasks.includes('orphans')) result.orphans = await removeOrphanFiles(deps, table, opts)
  return result
}
