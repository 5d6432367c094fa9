/**
 * Manifest rewrite as a maintenance step (lib/iceberg/rewrite-manifests.ts): when the current
 * snapshot carries at least `commit.manifest.min-count-to-merge` small data manifests of a spec,
 * they are packed into fewer and swapped in as a `replace` snapshot under the table's lease,
 * re-planned from the fresh base on a conflict. The snapshot carries the newest `floe.*` summary
 * values of its ancestry, as compaction's does, so the committer still finds its offsets.
 * Replaced manifests stay reachable from the parent snapshot: expiry deletes them with it.
 */
import { planManifestRewrite, rewriteManifests } from '../iceberg/manifests.js'
import { currentSnapshot } from '../iceberg/index.js'
import { emitMetrics, logger } from '../log.js'
import { commitUnderLease, type LeaseHolder } from './commit.js'
import { floeSummary } from './compact.js'
import type { MaintenanceDeps } from './types.js'

export interface ManifestRewriteResult {
  table: string
  manifestsBefore: number
  manifestsReplaced: number
  manifestsCreated: number
  snapshotId?: bigint
  /** Why the table was not rewritten at all. */
  skipped?: string
  dryRun: boolean
}

export async function rewriteTableManifests(deps: MaintenanceDeps, table: string, holder: LeaseHolder, opts: { dryRun?: boolean } = {}): Promise<ManifestRewriteResult> {
  const result: ManifestRewriteResult = { table, manifestsBefore: 0, manifestsReplaced: 0, manifestsCreated: 0, dryRun: opts.dryRun === true }
  const outcome = await commitUnderLease(deps, table, holder, async (base) => {
    const plan = await planManifestRewrite(deps.io, base.metadata)
    result.manifestsBefore = plan.manifests
    result.manifestsReplaced = plan.replaced.reduce((a, b) => a + b.length, 0)
    result.manifestsCreated = plan.replaced.length
    if (plan.replaced.length === 0 || opts.dryRun) return { plan, metadata: undefined }
    if (base.metadata['format-version'] !== 2) {
      result.skipped = `format v${base.metadata['format-version']} (manifest rewrite writes v2 replace snapshots only)`
      return { plan, metadata: undefined }
    }
    const metadata = await rewriteManifests(deps.io, base.metadata, plan, { summary: { ...floeSummary(base.metadata), 'floe.maintenance': 'rewrite-manifests' } })
    return { plan, metadata }
  })
  if (outcome.committed) {
    result.snapshotId = currentSnapshot(outcome.committed.metadata)?.['snapshot-id']
    emitMetrics({ ManifestsRewritten: result.manifestsReplaced })
  } else if (!opts.dryRun) {
    result.manifestsReplaced = 0
    result.manifestsCreated = 0
  }
  if (result.manifestsReplaced > 0) logger.info('manifests rewritten', { ...result, snapshotId: result.snapshotId?.toString() })
  return result
}
