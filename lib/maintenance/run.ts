/**
 * One maintenance run: orphan cleanup for every table this pipeline writes, in parallel (bounded
 * by FLOE_COMMIT_CONCURRENCY), each table independently — one table's failure is reported, never
 * a reason to skip the others — then the spilled file lists.
 *
 * Which tables: those the pipeline has committed to (a commit lease item, which is never
 * deleted) or has pending batches for. Deliberately NOT every table of the catalog namespaces
 * the routes name: other engines' tables may share those namespaces, and their writers (a Spark
 * job running for a day) are not covered by Floe's pending-batch protection.
 */
import { mapBounded } from '../commit/committer.js'
import { listLeasedTables } from '../control/lease.js'
import { listPendingTables } from '../control/pending.js'
import { NoSuchTableError } from '../errors.js'
import { logger, metrics, MetricUnit } from '../log.js'
import { removeOrphanFiles, removeOrphanSpills } from './orphans.js'
import type { MaintenanceDeps, OrphanOptions, OrphanResult } from './types.js'

export interface TableMaintenanceResult {
  table: string
  status: 'cleaned' | 'missing' | 'failed'
  orphans?: OrphanResult
  error?: Error
}

export interface MaintenanceRunResult {
  tables: number
  failures: number
  /** Orphans deleted over all tables and spills (or found, in a dry run). */
  orphans: number
  deleted: number
  results: TableMaintenanceResult[]
  spills?: OrphanResult
  spillError?: Error
}

export interface MaintenanceRunOptions extends OrphanOptions {
  /** Only these tables (default: every table of the pipeline, see above). Spills are skipped when set. */
  tables?: string[]
  /** Tables cleaned at once (default FLOE_COMMIT_CONCURRENCY). */
  concurrency?: number
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
      return { table, status: 'cleaned', orphans: await removeOrphanFiles(deps, table, opts) }
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err))
      if (error instanceof NoSuchTableError) return { table, status: 'missing', error }
      logger.error('orphan cleanup failed', { table, error })
      return { table, status: 'failed', error }
    }
  })
  const run: MaintenanceRunResult = { tables: tables.length, failures: results.filter((r) => r.status === 'failed').length, orphans: 0, deleted: 0, results }
  if (opts.tables === undefined) {
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
  metrics.addMetric('MaintenanceFailures', MetricUnit.Count, run.failures)
  logger.info('maintenance run finished', { tables: run.tables, failures: run.failures, orphans: run.orphans, deleted: run.deleted, dryRun: opts.dryRun === true })
  return run
}
