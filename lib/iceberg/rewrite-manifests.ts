/**
 * Manifest rewrite (Iceberg Java's RewriteManifests / BaseRewriteManifests, Spark's
 * `rewrite_manifests` procedure): a snapshot that carries many small data manifests gets them
 * packed into fewer, committed as a snapshot of operation `replace` with the same live entries.
 *
 * - Trigger, per partition spec: at least `commit.manifest.min-count-to-merge` (default 100) data
 *   manifests smaller than `commit.manifest.target-size-bytes` (default 8 MB) — the table
 *   properties the append-time merge (merge.ts) reads, so a table tuned for one is tuned for both.
 * - Those small manifests are packed in list order toward the target size (merge.ts packEnd); a
 *   bin of two or more becomes one manifest. Large manifests and delete manifests are kept as
 *   they are.
 * - Every live entry keeps its status EXISTING (an ADDED one becomes EXISTING), its snapshot id and
 *   its data and file sequence numbers, written out explicitly; DELETED entries are dropped. So
 *   the new snapshot has exactly the parent's live files with their sequence numbers: a delete
 *   file applies to the same rows as before.
 * - Summary: Java's `manifests-created`, `manifests-kept`, `manifests-replaced`,
 *   `entries-processed`, and the parent's totals unchanged; extra keys (Floe's `floe.*`) are the
 *   caller's.
 *
 * Format v2 only, like replace.ts.
 */
import { randomUUID } from 'node:crypto'
import { IcebergError } from '../errors.js'
import type { FileIO } from '../io/index.js'
import { mapBounded } from '../concurrency.js'
import { newSnapshotId } from './append.js'
import { readManifest } from './manifest.js'
import { encodeManifestList } from './manifest-list.js'
import { mergeSettings, packEnd } from './merge.js'
import { metadataDir } from './metadata-io.js'
import { currentSchema, currentSnapshot, specById, withNewMainSnapshot } from './metadata.js'
import { writeManifest } from './replace.js'
import { snapshotManifests } from './scan.js'
import type { ManifestEntry, ManifestFile, Snapshot, TableMetadata } from './types.js'

const READ_CONCURRENCY = 16
const TOTALS = ['total-records', 'total-files-size', 'total-data-files', 'total-delete-files', 'total-position-deletes', 'total-equality-deletes'] as const

export interface ManifestRewritePlan {
  /** Data and delete manifests of the current snapshot. */
  manifests: number
  /** Small data manifests packed into bins of two or more (what would be replaced). */
  replaced: ManifestFile[][]
}

export interface RewriteManifestsOptions {
  summary?: Record<string, string>
  snapshotId?: bigint
  nowMs?: number
}

const isSmall = (m: ManifestFile, target: number) => m.content === 0 && m.manifestLength < target

/** Which manifests of the current snapshot a rewrite would replace (none: nothing to do). */
export async function planManifestRewrite(io: FileIO, md: TableMetadata): Promise<ManifestRewritePlan> {
  const parent = currentSnapshot(md)
  if (!parent) return { manifests: 0, replaced: [] }
  const { minCountToMerge, targetSizeBytes } = mergeSettings(md)
  const manifests = await snapshotManifests(io, parent)
  const bySpec = new Map<number, ManifestFile[]>()
  for (const m of manifests) if (isSmall(m, targetSizeBytes)) bySpec.set(m.partitionSpecId, [...(bySpec.get(m.partitionSpecId) ?? []), m])
  const replaced: ManifestFile[][] = []
  for (const small of bySpec.values()) {
    if (small.length < minCountToMerge) continue
    for (const bin of packEnd(small, targetSizeBytes, (m) => m.manifestLength)) if (bin.length > 1) replaced.push(bin)
  }
  return { manifests: manifests.length, replaced }
}

/** A `replace` snapshot with the bins of `plan` rewritten as one manifest each; the new metadata (not yet swapped in). */
export async function rewriteManifests(io: FileIO, base: TableMetadata, plan: ManifestRewritePlan, opts: RewriteManifestsOptions = {}): Promise<TableMetadata> {
  if (base['format-version'] !== 2) throw new IcebergError(`table ${base.location}: manifest rewrite is written for format v2 only (table is v${base['format-version']})`)
  const parent = currentSnapshot(base)
  if (!parent || plan.replaced.length === 0) throw new IcebergError(`table ${base.location}: no manifests to rewrite`)
  const snapshotId = opts.snapshotId ?? newSnapshotId(base)
  const now = opts.nowMs ?? Date.now()
  const sequenceNumber = (base['last-sequence-number'] ?? 0n) + 1n
  const dir = metadataDir(base)
  const uuid = randomUUID()
  let entriesProcessed = 0
  const created = await mapBounded(plan.replaced.map((bin, n) => ({ bin, n })), 4, async ({ bin, n }) => {
    const lists = await mapBounded(bin, READ_CONCURRENCY, (m) => readManifest(io, m.manifestPath, { manifest: m, spec: specById(base, m.partitionSpecId) }))
    const entries: ManifestEntry[] = []
    for (const [i, list] of lists.entries()) {
      for (const e of list) {
        if (e.status === 2) continue
        if (e.sequenceNumber === null || e.sequenceNumber === undefined) throw new IcebergError(`manifest ${bin[i]!.manifestPath}: entry ${e.dataFile.filePath} has no data sequence number`)
        entries.push({ status: 0, snapshotId: e.snapshotId, sequenceNumber: e.sequenceNumber, fileSequenceNumber: e.fileSequenceNumber ?? null, dataFile: e.dataFile })
      }
    }
    entriesProcessed += entries.length
    return writeManifest(io, base, bin[0]!.partitionSpecId, entries, { path: `${dir}/${uuid}-r${n}.avro`, snapshotId, sequenceNumber })
  })
  // The list keeps its order: each bin's manifest takes the place of the bin's first manifest.
  const firstOf = new Map<ManifestFile, ManifestFile>()
  const gone = new Set<string>()
  plan.replaced.forEach((bin, i) => {
    firstOf.set(bin[0]!, created[i]!)
    for (const m of bin) gone.add(m.manifestPath)
  })
  const current = await snapshotManifests(io, parent)
  const paths = new Set(current.map((m) => m.manifestPath))
  const stale = [...gone].find((p) => !paths.has(p))
  if (stale) throw new IcebergError(`table ${base.location}: manifest ${stale} is not in the current snapshot (plan from another base)`)
  const byPath = new Map([...firstOf].map(([k, v]) => [k.manifestPath, v]))
  const manifests = current.flatMap((m) => (byPath.has(m.manifestPath) ? [byPath.get(m.manifestPath)!] : gone.has(m.manifestPath) ? [] : [m]))
  const listPath = `${dir}/snap-${snapshotId}-1-${uuid}.avro`
  await io.write(listPath, encodeManifestList(2, { snapshotId, parentSnapshotId: parent['snapshot-id'], sequenceNumber }, manifests), { contentType: 'application/octet-stream' })

  const summary: Record<string, string> = {
    ...opts.summary,
    operation: 'replace',
    'manifests-created': String(created.length),
    'manifests-kept': String(manifests.length - created.length),
    'manifests-replaced': String(gone.size),
    'entries-processed': String(entriesProcessed),
  }
  for (const key of TOTALS) if (parent.summary[key] !== undefined) summary[key] = parent.summary[key]!
  const snapshot: Snapshot = {
    'snapshot-id': snapshotId,
    'parent-snapshot-id': parent['snapshot-id'],
    'sequence-number': sequenceNumber,
    'timestamp-ms': now,
    summary: summary as Snapshot['summary'],
    'manifest-list': listPath,
    'schema-id': currentSchema(base)['schema-id'],
  }
  return withNewMainSnapshot(base, snapshot)
}
