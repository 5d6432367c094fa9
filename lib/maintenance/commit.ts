/**
 * How maintenance changes a table: under the committer's per-table lease (lib/control/lease.ts),
 * so Floe's committer and maintenance never race each other, and through the catalog's
 * compare-and-swap, so an outside writer's commit is never overwritten: on a conflict the table
 * is reloaded and the change re-planned on the new base (`build` runs again), up to
 * FLOE_COMMIT_RETRIES times with the committer's backoff.
 */
import { randomUUID } from 'node:crypto'
import { parseTableId, type LoadedTable } from '../catalog/index.js'
import { acquireLease, releaseLease, renewLease, type Lease, sleep } from '../control/index.js'
import { CommitConflictError, CommitStateUnknownError } from '../errors.js'
import type { TableMetadata } from '../iceberg/index.js'
import { logger, metrics, MetricUnit } from '../log.js'
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

export interface Planned<P> {
  /** New metadata to swap in, or undefined when there is nothing (left) to do. */
  metadata?: TableMetadata
  plan: P
}

/**
 * Load → build → renew lease → swap, retried on conflict. `build` gets each fresh base and
 * returns the new metadata (or none). Returns the last plan and whether it was committed.
 */
export async function commitWithRebase<P>(
  deps: MaintenanceDeps,
  table: string,
  holder: LeaseHolder,
  build: (base: LoadedTable, attempt: number) => Promise<Planned<P>>,
): Promise<{ plan: P; committed?: LoadedTable; base: LoadedTable; conflicts: number }> {
  const id = parseTableId(table)
  for (let attempt = 0; ; attempt++) {
    const base = await deps.catalog.loadTable(id)
    const { metadata, plan } = await build(base, attempt)
    if (metadata === undefined) return { plan, base, conflicts: attempt }
    await holder.renew()
    try {
      const committed = await deps.catalog.commit(id, { base: base.metadataLocation, metadata, baseMetadata: base.metadata })
      return { plan, committed, base, conflicts: attempt }
    } catch (err) {
      if (!(err instanceof CommitConflictError || err instanceof CommitStateUnknownError)) throw err
      metrics.addMetric('MaintenanceConflicts', MetricUnit.Count, 1)
      if (attempt >= deps.config.commitRetries) throw new CommitConflictError(`table ${table}: maintenance still conflicting after ${attempt + 1} attempts; the next run resumes`, { cause: err })
      const backoff = Math.min(30_000, deps.config.commitBackoffMs * 2 ** attempt) * Math.random()
      logger.info('maintenance commit conflict: reloading and re-planning', { table, attempt, error: (err as Error).message })
      await sleep(backoff)
    }
  }
}
