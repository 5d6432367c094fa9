/** What the commit protocol needs and reports. */
import type { FloeConfig } from '../config.js'
import type { ControlContext } from '../control/index.js'
import type { Catalog } from '../catalog/index.js'
import type { FileIO } from '../io/index.js'

/** The part of lib/catalog's Catalog the committer uses. */
export type CommitCatalog = Pick<Catalog, 'loadTable' | 'commit'>

export interface CommitDeps {
  control: ControlContext
  catalog: CommitCatalog
  /** Table files (manifests, manifest lists). */
  io: FileIO
  config: FloeConfig
}

/** Test seams: each runs at the named point and may throw (a crash) or wait (a slow committer). */
export interface CommitHooks {
  /** After the lease was renewed and the new metadata built, just before the catalog swap. */
  beforeSwap?(info: { table: string; attempt: number }): Promise<void> | void
  /** After a successful catalog swap, before the batches are marked committed. */
  afterSwap?(info: { table: string; snapshotId: bigint }): Promise<void> | void
}

export interface CommitOptions {
  /** Lease owner id (default: a fresh uuid per table commit). */
  owner?: string
  hooks?: CommitHooks
}

export type TableCommitStatus =
  /** A snapshot was appended (and maybe some batches were found already covered). */
  | 'committed'
  /** Every selected batch was already in the table (a crashed or zombie committer's swap): only marked. */
  | 'marked'
  /** No pending batches. */
  | 'idle'
  /** Another committer holds the lease. */
  | 'busy'
  /** Not started: the invocation's time was nearly up (the next run takes it). */
  | 'deferred'
  | 'failed'

export interface TableCommitResult {
  table: string
  status: TableCommitStatus
  /** The new snapshot ('committed'). */
  snapshotId?: bigint
  /** Batches appended by this commit. */
  batches: number
  files: number
  records: number
  /** Batches found already covered by the table's offsets and only marked. */
  alreadyCommitted: number
  /** Pending batches of the table before this commit (backlog). */
  pending: number
  conflicts: number
  latencyMs: number
  /** Snapshots this run appended when it took more than one (FLOE_COMMIT_RUN_SECONDS). */
  snapshots?: number
  error?: Error
}
