/**
 * The named policies: each retry loop's attempts and backoff come from FLOE_* settings here, so
 * none hides a hard-coded cap. Data commits also honour Iceberg's `commit.retry.*` table
 * properties (as iceberg-rust's Transaction::commit and Iceberg Java's SnapshotProducer do).
 */
import type { FloeConfig } from '../config.js'
import { logger } from '../log.js'
import type { RetryPolicy } from './policy.js'

type CommitSettings = Pick<FloeConfig, 'commitRetries' | 'commitBackoffMs' | 'commitBackoffMaxMs'>

/** Catalog-conflict retries: FLOE_COMMIT_RETRIES retries, FLOE_COMMIT_BACKOFF_MS doubling up to FLOE_COMMIT_BACKOFF_MAX_MS. */
export function commitPolicy(config: CommitSettings): RetryPolicy {
  return { attempts: config.commitRetries + 1, baseMs: config.commitBackoffMs, capMs: config.commitBackoffMaxMs }
}

/** A table's commit.retry.* properties over the settings, and commit.retry.total-timeout-ms as a deadline. */
export interface TablePolicy {
  policy: RetryPolicy
  /** Epoch ms after which no further wait starts (commit.retry.total-timeout-ms), if the table sets one. */
  deadline?: number
}

export const COMMIT_RETRY_PROPERTIES = {
  retries: 'commit.retry.num-retries',
  minWait: 'commit.retry.min-wait-ms',
  maxWait: 'commit.retry.max-wait-ms',
  totalTimeout: 'commit.retry.total-timeout-ms',
} as const

/**
 * The data-commit policy of one table. A property that is not a non-negative integer is ignored
 * (with a warning naming it and its value): a typo in a table written by another engine must
 * not stop Floe's commits.
 */
export function tableCommitPolicy(config: CommitSettings, properties: Record<string, string> | undefined, table: string, now = Date.now()): TablePolicy {
  const base = commitPolicy(config)
  const read = (key: string): number | undefined => {
    const raw = properties?.[key]
    if (raw === undefined) return undefined
    if (/^\d{1,15}$/.test(raw.trim())) return Number(raw.trim())
    logger.warn('ignoring an invalid commit retry table property', { table, property: key, value: raw })
    return undefined
  }
  const retries = read(COMMIT_RETRY_PROPERTIES.retries)
  const minWait = read(COMMIT_RETRY_PROPERTIES.minWait)
  const maxWait = read(COMMIT_RETRY_PROPERTIES.maxWait)
  const total = read(COMMIT_RETRY_PROPERTIES.totalTimeout)
  const policy: RetryPolicy = {
    attempts: retries === undefined ? base.attempts : retries + 1,
    baseMs: minWait ?? base.baseMs,
    capMs: maxWait ?? base.capMs,
  }
  return total === undefined ? { policy } : { policy, deadline: now + total }
}

/** Control-table retries (UnprocessedKeys rounds): FLOE_CONTROL_READ_ROUNDS tries, FLOE_CONTROL_BACKOFF_MS up to FLOE_CONTROL_BACKOFF_MAX_MS. */
export function controlReadPolicy(config: Pick<FloeConfig, 'controlReadRounds' | 'controlBackoffMs' | 'controlBackoffMaxMs'>): RetryPolicy {
  return { attempts: config.controlReadRounds, baseMs: config.controlBackoffMs, capMs: config.controlBackoffMaxMs }
}

/** A cancelled mark-committed transaction: FLOE_MARK_RETRIES retries with the control backoff. */
export function markPolicy(config: Pick<FloeConfig, 'markRetries' | 'controlBackoffMs' | 'controlBackoffMaxMs'>): RetryPolicy {
  return { attempts: config.markRetries + 1, baseMs: config.controlBackoffMs, capMs: config.controlBackoffMaxMs }
}

/** Retries at once, without waiting: loops whose next attempt re-reads state that has already changed. */
export const immediately = (attempts: number): RetryPolicy => ({ attempts, baseMs: 0, capMs: 0 })
