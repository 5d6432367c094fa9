/** What table maintenance needs and reports. */
import type { Catalog } from '../catalog/index.js'
import type { FloeConfig } from '../config.js'
import type { ControlContext } from '../control/index.js'
import type { FileIO } from '../io/index.js'

/** Committer deps (lib/commit CommitDeps) fit. Maintenance commits only under the table's commit lease. */
export interface MaintenanceDeps {
  config: FloeConfig
  io: FileIO
  catalog: Pick<Catalog, 'loadTable' | 'commit'>
  control: ControlContext
  /** Clock in epoch ms (tests inject one instead of waiting for the horizon). */
  now?: () => number
}

export interface OrphanOptions {
  /** Only files last modified at least this long ago are deleted. Default FLOE_ORPHAN_HORIZON_HOURS. */
  olderThanMs?: number
  /** List what would be deleted, delete nothing. */
  dryRun?: boolean
  /**
   * Pipelines whose pending batches protect their files (default: this pipeline). List every
   * pipeline that writes to the same tables or warehouse: files of another pipeline's pending
   * batches are otherwise protected by the horizon alone.
   */
  pipelines?: string[]
}

export interface OrphanResult {
  /** `ns.name`, or `_spill` for the spilled file lists. */
  table: string
  /** Files listed under the scanned prefixes. */
  scanned: number
  /** Files reachable from the table's metadata or a pending batch. */
  referenced: number
  /** Unreferenced but younger than the horizon (a writer or committer may still be using them). */
  young: number
  /** Unreferenced metadata-folder files of unknown kinds, never deleted. */
  skipped: number
  /** Unreferenced, older than the horizon: deleted (or, in a dry run, to be deleted). */
  orphans: string[]
  /** Orphans actually deleted (0 in a dry run). */
  deleted: number
  dryRun: boolean
  /** Prefixes listed. */
  prefixes: string[]
}
