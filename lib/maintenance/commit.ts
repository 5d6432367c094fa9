/**
 * How maintenance changes a table: under the committer's per-table lease (lib/control/lease.ts),
 * so Floe's committer and maintenance never race each other, and through the catalog's
 * compare-and-swap, so an outside writer's commit is never overwritten: on a conflict the table
 * is reloaded and the change re-planned on the new base (`build` runs again): the reload-and-
 * rebase loop of lib/catalog (rebase.ts) under the committer's retry policy.
 */
import { randomUUID } from 'node:crypto'
import { commitWithRebase as rebase, parseTableId, type LoadedTable, type Rebased } from '../catalog/index.js'
import { acquireLease, releaseLease, renewLease, type Lease } from '../control/index.js'
import { CommitConflictError } from '../errors.js'
import { emitMetrics, logger } from '../log.js'
import { commitPolicy } from '../retry/index.js'
import type { MaintenanceDeps } from './types.js'

export interface LeaseHolder {
  lease: Lease
  /** Extend the lease (FencedError when it was taken over): call between long steps. */
  renew(): Promise<void>
}

/** Runs `fn` holding the table's commit lease; `undefined` when someone else holds it (busy). */
export async function withTableLease<T>(deps: MaintenanceDeps, table: string, fn: (holder: LeaseHolder) => Promise<T>): Promise<T | undefined> {
  let lease = await acquireLease(deps.control, deps.config.pipeline, table, { owner: `maintenance-${randomUUID()}` })
  if (lease === undefined) return undefined
  const holder: LeaseHolder = {
    get lease() {
      return lease!
    },
    async renew() {
      lease = await renewLease(deps.control, lease!)
    },
  }
  try {
    return await fn(holder)
  } finally {
    await releaseLease(deps.control, lease).catch((err) => logger.warn('could not release lease', { table, error: String(err) }))
  }
}

/** What one attempt's `build` returns: new metadata to swap in (or none: nothing left to do) and its plan. */
export type Planned<P> = Rebased<P>

/**
 * Load → build → renew lease → swap, retried on conflict (lib/catalog/rebase.ts, the committer's
 * policy: FLOE_COMMIT_RETRIES, FLOE_COMMIT_BACKOFF_MS up to FLOE_COMMIT_BACKOFF_MAX_MS). `build`
 * gets each fresh base and returns the new metadata (or none); a swap of unknown outcome is
 * rechecked by re-planning on the reloaded base (compaction skips outputs that are already live).
 * Returns the last plan and whether it was committed.
 */
export async function commitUnderLease<P>(
  deps: MaintenanceDeps,
  table: string,
  holder: LeaseHolder,
  build: (base: LoadedTable, attempt: number) => Promise<Planned<P>>,
): Promise<{ plan: P; committed?: LoadedTable; base: LoadedTable; conflicts: number }> {
  const out = await rebase(deps.catalog, parseTableId(table), build, {
    policy: commitPolicy(deps.config),
    beforeCommit: () => holder.renew(),
    recheckUnknown: true,
    onRetry: (err, { attempt }) => {
      emitMetrics({ MaintenanceConflicts: 1 })
      logger.info('maintenance commit conflict: reloading and re-planning', { table, attempt, error: err.message })
    },
    exhausted: (err, attempts) => {
      emitMetrics({ MaintenanceConflicts: 1 })
      return new CommitConflictError(`table ${table}: maintenance still conflicting after ${attempts} attempts; the next run resumes`, { cause: err })
    },
  })
  return { plan: out.plan, committed: out.committed, base: out.base, conflicts: out.attempts - 1 }
}
