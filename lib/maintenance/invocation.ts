/**
 * One maintenance invocation (functions/maintenance.ts): what its event may ask — `{ "tables":
 * ["ns.t"], "dryRun": true, "olderThanHours": 48, "tasks": ["compact", "manifests", "expire",
 * "orphans"] }`, all optional (every task by default; the horizon never shorter than one hour) —
 * its deadline, and the JSON summary it answers with (counts, one row per table, errors as text).
 */
import { ALL_TASKS, type MaintenanceRunResult, type MaintenanceTask } from './run.js'

export interface MaintenanceEvent {
  tables?: string[]
  dryRun?: boolean
  olderThanHours?: number
  tasks?: MaintenanceTask[]
}

export interface MaintenanceSummary {
  tables: number
  failures: number
  orphans: number
  deleted: number
  dryRun: boolean
  filesCompacted: number
  snapshotsExpired: number
  bytesReclaimed: number
  results: {
    table: string
    status: string
    scanned?: number
    orphans?: number
    deleted?: number
    young?: number
    compacted?: number
    smallFileRatio?: number
    expired?: number
    bytesReclaimed?: number
    error?: string
  }[]
}

export function summarizeMaintenance(run: MaintenanceRunResult, dryRun: boolean): MaintenanceSummary {
  const rows = [...run.results]
  if (run.spills || run.spillError) rows.push({ table: '_spill', status: run.spillError ? 'failed' : 'cleaned', orphans: run.spills, error: run.spillError })
  return {
    tables: run.tables,
    failures: run.failures,
    orphans: run.orphans,
    deleted: run.deleted,
    dryRun,
    filesCompacted: run.filesCompacted,
    snapshotsExpired: run.snapshotsExpired,
    bytesReclaimed: run.bytesReclaimed,
    results: rows.map((r) => ({
      table: r.table,
      status: r.status,
      ...('compaction' in r && r.compaction ? { compacted: r.compaction.filesRewritten, smallFileRatio: r.compaction.health.smallFileRatio } : {}),
      ...('expiry' in r && r.expiry ? { expired: r.expiry.snapshotsExpired, bytesReclaimed: r.expiry.bytesReclaimed } : {}),
      ...(r.orphans ? { scanned: r.orphans.scanned, orphans: r.orphans.orphans.length, deleted: r.orphans.deleted, young: r.orphans.young } : {}),
      ...(r.error ? { error: `${r.error.name}: ${r.error.message}` } : {}),
    })),
  }
}

const MIN_EVENT_HORIZON_HOURS = 1
const DEADLINE_MARGIN_SHARE = 0.2
const DEADLINE_MARGIN_MIN_MS = 30_000

/**
 * When compaction starts no new group: the last 20 % of the invocation (at least 30 s) is kept
 * free, so a unit never runs into the timeout. Undefined without a remaining time.
 */
export function maintenanceDeadline(remainingMs: number | undefined, now = Date.now()): number | undefined {
  return remainingMs === undefined ? undefined : now + remainingMs - Math.max(DEADLINE_MARGIN_MIN_MS, remainingMs * DEADLINE_MARGIN_SHARE)
}

/** Options from a scheduled (`{}`) or hand-made event; anything else in the event is ignored. */
export function eventOptions(event: unknown): { tables?: string[]; dryRun: boolean; olderThanMs?: number; tasks: MaintenanceTask[] } {
  const e = (event && typeof event === 'object' ? event : {}) as MaintenanceEvent
  const tables = Array.isArray(e.tables) && e.tables.every((t) => typeof t === 'string') ? e.tables : undefined
  const hours = typeof e.olderThanHours === 'number' && Number.isFinite(e.olderThanHours) ? Math.max(MIN_EVENT_HORIZON_HOURS, e.olderThanHours) : undefined
  const tasks = Array.isArray(e.tasks) ? ALL_TASKS.filter((t) => e.tasks!.includes(t)) : ALL_TASKS
  return { tables, dryRun: e.dryRun === true, olderThanMs: hours === undefined ? undefined : hours * 3_600_000, tasks }
}
