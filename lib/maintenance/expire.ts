/**
 * Snapshot expiry (DESIGN.md invariant 10): drop the snapshots lib/iceberg/expire.ts does not
 * keep, then delete the manifest lists, manifests and data files only they reached.
 *
 * Safety, in order:
 * 1. Pending batches are read FIRST (as orphan cleanup does), then the table: no file a pending
 *    batch names is ever deleted, whatever the snapshots say.
 * 2. The metadata change is swapped in through the catalog (under the lease, rebased on
 *    conflict) BEFORE anything is deleted; files are deleted only for the plan that committed.
 *    A crash in between leaves unreferenced files: orphan cleanup removes them later.
 * 3. A file is deleted only if no kept snapshot reaches it: every live (ADDED or EXISTING) entry
 *    of every manifest of every kept snapshot is read, and so is every manifest list of a kept
 *    snapshot. A DELETED entry does not keep its file: the file is live only in the snapshot's
 *    parent, which is kept (and then protects it) or expired.
 * 4. `gc.enabled=false` (Iceberg's switch for tables whose files another table owns): snapshots
 *    are expired, no file is deleted.
 */
import { planExpiry, type ManifestFile, type Snapshot, type TableMetadata } from '../iceberg/index.js'
import { readManifest, snapshotManifests } from '../iceberg/manifests.js'
import type { FileIO } from '../io/index.js'
import { mapBounded } from '../concurrency.js'
import { emitMetrics, logger, MetricUnit } from '../log.js'
import { commitUnderLease, type LeaseHolder } from './commit.js'
import { pendingFilesOf } from './orphans.js'
import { normalizePath } from './references.js'
import type { MaintenanceDeps } from './types.js'

const READ_CONCURRENCY = 16
const DELETE_CHUNK = 1_000

export interface ExpireOptions {
  dryRun?: boolean
  pipelines?: string[]
}

export interface ExpireResult {
  table: string
  snapshotsBefore: number
  snapshotsExpired: number
  /** Files deleted (or, in a dry run, that would be): manifest lists, manifests, data files. */
  filesDeleted: number
  bytesReclaimed: number
  /** Files kept although only expired snapshots reached them, because a pending batch names them. */
  protectedByPending: number
  metadataBytesBefore: number
  metadataBytesAfter: number
  dryRun: boolean
}

/** Expire the snapshots of one table (the caller holds its lease). */
export async function expireSnapshots(deps: MaintenanceDeps, table: string, holder: LeaseHolder, opts: ExpireOptions = {}): Promise<ExpireResult> {
  const now = deps.now?.() ?? Date.now()
  const pending = new Set<string>()
  for (const pipeline of opts.pipelines ?? [deps.config.pipeline]) for (const p of await pendingFilesOf(deps, pipeline, table)) pending.add(normalizePath(p))

  const { plan, committed, base } = await commitUnderLease(deps, table, holder, async (loaded) => {
    const p = planExpiry(loaded.metadata, now, { maxSnapshots: deps.config.expireMaxSnapshots })
    return { plan: p, metadata: p.expired.length > 0 && !opts.dryRun ? p.metadata : undefined }
  })
  const result: ExpireResult = {
    table,
    snapshotsBefore: base.metadata.snapshots.length,
    snapshotsExpired: plan.expired.length,
    filesDeleted: 0,
    bytesReclaimed: 0,
    protectedByPending: 0,
    metadataBytesBefore: (await deps.io.stat(base.metadataLocation))?.size ?? 0,
    metadataBytesAfter: 0,
    dryRun: opts.dryRun === true,
  }
  result.metadataBytesAfter = committed ? ((await deps.io.stat(committed.metadataLocation))?.size ?? 0) : result.metadataBytesBefore
  if (plan.expired.length === 0 || (!committed && !opts.dryRun)) return result
  const gc = (base.metadata.properties['gc.enabled'] ?? 'true').toLowerCase() !== 'false'
  if (gc) {
    const doomed = await unreachableFiles(deps.io, base.metadata, plan.expired, plan.kept)
    const files = doomed.filter((f) => !pending.has(normalizePath(f.path)))
    result.protectedByPending = doomed.length - files.length
    result.bytesReclaimed = files.reduce((a, f) => a + f.size, 0)
    if (!opts.dryRun) for (let i = 0; i < files.length; i += DELETE_CHUNK) await deps.io.deleteMany(files.slice(i, i + DELETE_CHUNK).map((f) => f.path))
    result.filesDeleted = files.length
  }
  if (!opts.dryRun) {
    emitMetrics({ SnapshotsExpired: result.snapshotsExpired, ExpiryBytesReclaimed: { value: result.bytesReclaimed, unit: MetricUnit.Bytes } })
  }
  logger.info('snapshots expired', { ...result })
  return result
}

interface Doomed {
  path: string
  size: number
}

/** Files reachable from `expired` and from no snapshot of `kept`. */
async function unreachableFiles(io: FileIO, md: TableMetadata, expired: Snapshot[], kept: Snapshot[]): Promise<Doomed[]> {
  const manifestsOf = async (snaps: Snapshot[]) => {
    const out = new Map<string, ManifestFile>()
    for (const lists of await mapBounded(snaps, READ_CONCURRENCY, (s) => snapshotManifests(io, s))) for (const m of lists) out.set(normalizePath(m.manifestPath), m)
    return out
  }
  const keptManifests = await manifestsOf(kept)
  const expiredManifests = await manifestsOf(expired)
  const keptLists = new Set(kept.flatMap((s) => (s['manifest-list'] ? [normalizePath(s['manifest-list'])] : [])))
  const onlyExpired = [...expiredManifests.entries()].filter(([k]) => !keptManifests.has(k)).map(([, m]) => m)
  const spec = (m: ManifestFile) => md['partition-specs'].find((s) => s['spec-id'] === m.partitionSpecId)
  const doomed = new Map<string, Doomed>()
  for (const entries of await mapBounded(onlyExpired, READ_CONCURRENCY, (m) => readManifest(io, m.manifestPath, { manifest: m, spec: spec(m) }))) {
    for (const e of entries) doomed.set(normalizePath(e.dataFile.filePath), { path: e.dataFile.filePath, size: e.dataFile.fileSizeInBytes })
  }
  if (doomed.size > 0) {
    await mapBounded([...keptManifests.values()], READ_CONCURRENCY, async (m) => {
      for (const e of await readManifest(io, m.manifestPath, { manifest: m, spec: spec(m) })) if (e.status !== 2) doomed.delete(normalizePath(e.dataFile.filePath))
    })
  }
  for (const m of onlyExpired) doomed.set(normalizePath(m.manifestPath), { path: m.manifestPath, size: m.manifestLength })
  for (const s of expired) {
    const list = s['manifest-list']
    if (list && !keptLists.has(normalizePath(list))) doomed.set(normalizePath(list), { path: list, size: 0 })
  }
  return [...doomed.values()]
}
