/**
 * Reload and rebase: the one loop every table change goes through (data commits, schema
 * commits, maintenance). Load the table, build the change on that fresh base, swap it in through
 * the catalog's compare-and-swap; on CommitConflictError reload and build again, under a retry
 * policy (lib/retry) — like iceberg-rust's `Transaction::commit`, whose loop refreshes the table
 * and re-applies its actions on each conflict.
 *
 * CommitStateUnknownError (the swap may or may not have landed) is not retryable: retrying the
 * same swap blindly could apply it twice. It is retried here only for a caller that says its
 * `build` finds out on the reloaded base whether the earlier swap landed (`recheckUnknown`): the
 * committer's build drops the batches whose offsets the table's summary already covers, and
 * maintenance re-plans against the live files. Everyone else gets the error as it is.
 */
import { CommitConflictError, CommitStateUnknownError, FloeError } from '../errors.js'
import type { TableMetadata } from '../iceberg/index.js'
import { retry, type RetryInfo, type RetryPolicy } from '../retry/index.js'
import type { CommitRequest, LoadedTable } from './types.js'
import type { TableId } from './identifier.js'

/** What the loop needs of a catalog (the writer's injected catalog is narrower than Catalog). */
export interface RebaseCatalog {
  loadTable(id: TableId): Promise<LoadedTable>
  commit(id: TableId, req: CommitRequest): Promise<{ metadataLocation: string; metadata?: TableMetadata }>
}

export interface Rebased<P> {
  /** New metadata to swap in on top of the base, or none when there is nothing (left) to do. */
  metadata?: TableMetadata
  plan: P
}

export interface RebaseOptions {
  /** Attempts and backoff; a function of the first base reads the table's properties (and may set a deadline). */
  policy: RetryPolicy | ((first: LoadedTable) => { policy: RetryPolicy; deadline?: number })
  /** The first attempt's base when the caller already holds a fresh one (else it is loaded). */
  base?: LoadedTable
  /** Runs after build and before each swap (renew a lease, test hooks). */
  beforeCommit?: (attempt: number) => Promise<void> | void
  /** `build` sees on a reloaded base whether a swap of unknown outcome landed: retry CommitStateUnknownError too. */
  recheckUnknown?: boolean
  /** Before each retry's wait, with the swap's error (CommitConflictError or CommitStateUnknownError). */
  onRetry?: (err: FloeError, info: RetryInfo) => void
  /** The error thrown when conflicts outlast the policy (default: the last swap error). */
  exhausted?: (err: FloeError, attempts: number) => Error
}

export interface RebaseResult<P> {
  plan: P
  /** The base the last plan was built on. */
  base: LoadedTable
  /** The table after the swap; undefined when `build` had nothing to do. */
  committed?: LoadedTable
  /** Attempts made (1 when the first swap went through). */
  attempts: number
}

/** A swap of unknown outcome the caller's build will recheck: retryable, carrying the original. */
class RecheckUnknown extends FloeError {
  constructor(readonly original: CommitStateUnknownError) {
    super(`${original.message} (reloading to see whether it landed)`, { cause: original, retryable: true })
  }
}

const unwrap = (err: FloeError): FloeError => (err instanceof RecheckUnknown ? err.original : err)

export async function commitWithRebase<P>(
  catalog: RebaseCatalog,
  id: TableId,
  build: (base: LoadedTable, attempt: number) => Promise<Rebased<P>> | Rebased<P>,
  opts: RebaseOptions,
): Promise<RebaseResult<P>> {
  let base = opts.base ?? (await catalog.loadTable(id))
  const { policy, deadline } = typeof opts.policy === 'function' ? opts.policy(base) : { policy: opts.policy, deadline: undefined }
  return await retry(
    async (attempt) => {
      if (attempt > 0) base = await catalog.loadTable(id)
      const { metadata, plan } = await build(base, attempt)
      if (metadata === undefined) return { plan, base, attempts: attempt + 1 }
      await opts.beforeCommit?.(attempt)
      try {
        const out = await catalog.commit(id, { base: base.metadataLocation, metadata, baseMetadata: base.metadata })
        return { plan, base, committed: { metadata: out.metadata ?? metadata, metadataLocation: out.metadataLocation }, attempts: attempt + 1 }
      } catch (err) {
        if (err instanceof CommitStateUnknownError && opts.recheckUnknown) throw new RecheckUnknown(err)
        throw err
      }
    },
    policy,
    {
      // Of the retryable errors only conflicts are this loop's (a throttled lease renewal is not).
      when: (err) => err instanceof CommitConflictError || err instanceof RecheckUnknown,
      onRetry: opts.onRetry && ((err, info) => opts.onRetry!(unwrap(err), info)),
      exhausted: (err, attempts) => (opts.exhausted ? opts.exhausted(unwrap(err), attempts) : unwrap(err)),
      deadline,
    },
  )
}
