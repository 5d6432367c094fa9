/**
 * Manifest merging on append, as Iceberg-Java's default append (MergeAppend) does, so a table
 * appended to every minute keeps a bounded number of manifests instead of one more per commit.
 *
 * Followed from apache/iceberg (core/src/main/java/org/apache/iceberg/):
 * - TableProperties: `commit.manifest-merge.enabled` (default true; Boolean.parseBoolean, so only
 *   "true" in any case is true), `commit.manifest.min-count-to-merge` (default 100, an int),
 *   `commit.manifest.target-size-bytes` (default 8388608, a long). A malformed number throws, as
 *   Java's PropertyUtil does.
 * - MergingSnapshotProducer.apply: before merging, manifests with no ADDED and no EXISTING files
 *   (only DELETED entries, so no live file) are dropped unless written by this commit; data
 *   manifests go through the merge; delete manifests are NOT merged here (Java merges them with a
 *   second manager; Floe only carries them forward unchanged).
 * - ManifestMergeManager.mergeManifests/mergeGroup: data manifests are grouped by partition spec
 *   id; within a group, in list order (this commit's new manifest first, then the parent's
 *   manifests newest first), they are bin-packed by manifest length toward the target size with
 *   BinPacking.ListPacker(target, lookback 1, largestBinFirst false).packEnd: packing runs from the
 *   oldest manifest, so order is kept and the under-filled bin is the newest one. A bin of one
 *   manifest is kept as is; the bin holding the commit's new manifest is merged only once it holds
 *   at least min-count manifests (so a trickle of tiny appends is merged every min-count commits,
 *   and large old manifests never block it); every other bin of two or more manifests is merged.
 * - ManifestMergeManager.createManifest: a merged manifest rewrites the entries of its inputs:
 *   ADDED entries of this snapshot stay ADDED (sequence numbers left null, inherited from the
 *   merged manifest, which carries this commit's sequence number); every other live entry
 *   becomes EXISTING with its original snapshot id, data and file sequence numbers written out
 *   explicitly (the values inherited on read, spec "Sequence Number Inheritance"); DELETED entries
 *   from earlier snapshots are dropped. Its added_snapshot_id is this snapshot.
 *
 * Deviations, all on the safe side: Java exempts only the bin of the single first manifest of
 * the list from min-count; Floe writes one new manifest per spec and exempts the bin of each (Java
 * would otherwise rewrite the newest bin of every other spec on every commit). Groups keep their
 * place in the list instead of Java's descending spec id order (order carries no meaning). A bin
 * that cannot be rewritten faithfully (a v2 EXISTING entry without a data sequence number, a v3
 * data file whose first_row_id is not yet assigned, a spec missing from the metadata) is kept
 * unmerged rather than written wrong. Only the manifests of merged bins are read, and at most
 * `maxManifestsRead` of them per commit (Floe's own bound, not Java's): a table that piled up
 * tens of thousands of manifests before merging existed would otherwise have its first merging
 * commit read them all inside one committer invocation, time out, and retry forever. Bins are
 * taken newest first and the first eligible bin always merges, so the backlog shrinks by at
 * least one bin per commit and steady state (at most min-count reads) is never limited.
 */
import { IcebergError } from '../errors.js'
import type { FileIO } from '../io/index.js'
import { logger } from '../log.js'
import type { Schema } from '../schema/index.js'
import { encodeManifest, readManifest, summarizePartitions } from './manifest.js'
import { toBoundBytes, type BoundValue } from './conversions.js'
import type { ManifestEntry, ManifestFile, PartitionSpec, PartitionValue, TableMetadata } from './types.js'
import { mapBounded } from '../concurrency.js'

export const MERGE_ENABLED = 'commit.manifest-merge.enabled'
export const MIN_COUNT_TO_MERGE = 'commit.manifest.min-count-to-merge'
export const TARGET_SIZE_BYTES = 'commit.manifest.target-size-bytes'

export interface MergeSettings {
  enabled: boolean
  minCountToMerge: number
  targetSizeBytes: number
  /** Manifests read for merging per commit, after the first merged bin (Floe's bound; see the header). */
  maxManifestsRead: number
}

/** Enough for steady state (min-count 100) many times over; a few seconds of S3 GETs at 16 in flight. */
export const MAX_MANIFESTS_READ_PER_COMMIT = 2000

/** Merge settings from table properties, with Java's defaults and parsing. */
export function mergeSettings(md: TableMetadata): MergeSettings {
  const props = md.properties ?? {}
  const int = (key: string, dflt: number, max: number): number => {
    const v = props[key]
    if (v === undefined) return dflt
    const n = /^[+-]?\d+$/.test(v.trim()) ? Number(v.trim()) : NaN
    if (!Number.isSafeInteger(n) || Math.abs(n) > max)
      throw new IcebergError(`table ${md.location}: property ${key} must be an integer, got '${v}'`)
    return n
  }
  const enabled = props[MERGE_ENABLED]
  return {
    enabled: enabled === undefined ? true : enabled.trim().toLowerCase() === 'true',
    minCountToMerge: int(MIN_COUNT_TO_MERGE, 100, 2 ** 31 - 1),
    targetSizeBytes: int(TARGET_SIZE_BYTES, 8 * 1024 * 1024, Number.MAX_SAFE_INTEGER),
    maxManifestsRead: MAX_MANIFESTS_READ_PER_COMMIT,
  }
}

/**
 * Java's ListPacker(target, lookback = 1, largestBinFirst = false).packEnd: greedy packing from
 * the end of the list with one open bin; an item that does not fit opens a new bin (an item
 * heavier than the target gets a bin of its own). Bins and their items keep list order.
 */
export function packEnd<T>(items: T[], target: number, weight: (item: T) => number): T[][] {
  const bins: T[][] = []
  let open: T[] | undefined
  let openWeight = 0
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]!
    const w = weight(item)
    if (open !== undefined && openWeight + w <= target) {
      open.unshift(item)
      openWeight += w
    } else {
      open = [item]
      openWeight = w
      bins.unshift(open)
    }
  }
  return bins
}

/** A partition summary bound, or none rather than a wrong one. */
export const boundBytes = (type: string, v: PartitionValue): Uint8Array | null => {
  try {
    return toBoundBytes(type, v as BoundValue)
  } catch {
    return null
  }
}

export interface MergeContext {
  io: FileIO
  base: TableMetadata
  formatVersion: 1 | 2 | 3
  /** Schema of the merged manifests (Java: the table's current schema). */
  schema: Schema
  snapshotId: bigint
  sequenceNumber: bigint
  settings: MergeSettings
  /** Entries of this commit's manifests not yet written (merged from memory, never read back). */
  pending: Map<ManifestFile, ManifestEntry[]>
  /** A fresh manifest path for each merged manifest. */
  newPath: () => string
}

const hasLiveFiles = (m: ManifestFile) => m.countsMissing === true || m.addedFilesCount > 0 || m.existingFilesCount > 0

/**
 * Merges the data manifests of `manifests` (this commit's new manifests first, then the carried
 * ones) per the rules above and returns the new list. Merged manifests are written through `io`;
 * manifests of `ctx.pending` that survive unmerged are left for the caller to write.
 */
export async function mergeManifests(ctx: MergeContext, manifests: ManifestFile[]): Promise<ManifestFile[]> {
  const mine = (m: ManifestFile) => ctx.pending.has(m) || m.addedSnapshotId === ctx.snapshotId
  const kept = manifests.filter((m) => mine(m) || hasLiveFiles(m))
  const firstData = kept.find((m) => m.content === 0)
  if (firstData === undefined) return kept
  // Java's `first` (the first data manifest), widened to this commit's new manifest of every spec (see the header).
  const exempt = new Set<ManifestFile>([firstData, ...ctx.pending.keys()])
  const groups = new Map<number, ManifestFile[]>()
  for (const m of kept) if (m.content === 0) groups.set(m.partitionSpecId, [...(groups.get(m.partitionSpecId) ?? []), m])

  const replaced = new Map<ManifestFile, ManifestFile | null>() // first input → merged; other inputs → null
  let read = 0
  let deferred = 0
  for (const [specId, group] of groups) {
    const spec = ctx.base['partition-specs'].find((s) => s['spec-id'] === specId)
    for (const bin of packEnd(group, ctx.settings.targetSizeBytes, (m) => m.manifestLength)) {
      if (bin.length === 1) continue
      if (bin.some((m) => exempt.has(m)) && bin.length < ctx.settings.minCountToMerge) continue
      const reads = bin.filter((m) => !ctx.pending.has(m)).length
      if (read > 0 && read + reads > ctx.settings.maxManifestsRead) {
        deferred += bin.length
        continue
      }
      if (!spec) {
        logger.warn('manifest merge skipped: partition spec not in table metadata', { table: ctx.base.location, specId })
        continue
      }
      const merged = await mergeBin(ctx, spec, bin)
      read += reads
      if (!merged) continue
      bin.forEach((m, i) => replaced.set(m, i === 0 ? merged : null))
    }
  }
  if (deferred > 0) logger.info('manifest merge deferred to later commits (read budget reached)', { table: ctx.base.location, read, deferred })
  const out: ManifestFile[] = []
  for (const m of kept) {
    const r = replaced.get(m)
    if (r === undefined) out.push(m)
    else if (r !== null) out.push(r)
  }
  return out
}


/** Rewrites one bin as a single manifest, or returns undefined when it cannot be done faithfully. */
async function mergeBin(ctx: MergeContext, spec: PartitionSpec, bin: ManifestFile[]): Promise<ManifestFile | undefined> {
  const { formatVersion: fv, snapshotId, sequenceNumber } = ctx
  const skip = (reason: string, manifest: string) => {
    logger.warn('manifest merge skipped for one bin', { table: ctx.base.location, reason, manifest, bin: bin.length })
    return undefined
  }
  if (fv >= 3) {
    const unassigned = bin.find((m) => !ctx.pending.has(m) && (m.firstRowId === undefined || m.firstRowId === null))
    if (unassigned) return skip('v3 data manifest without first_row_id (its files have no row ids yet)', unassigned.manifestPath)
  }
  const lists = await mapBounded(bin, 16, async (m) => ctx.pending.get(m) ?? (await readManifest(ctx.io, m.manifestPath, { manifest: m, spec })))
  const entries: ManifestEntry[] = []
  let minSeq = sequenceNumber
  let addedFiles = 0
  let addedRows = 0n
  let existingRows = 0n
  for (const [i, list] of lists.entries()) {
    for (const e of list) {
      if (e.status === 2) continue // deletes of earlier snapshots are suppressed (this append deletes nothing)
      const rows = BigInt(e.dataFile.recordCount)
      if (e.status === 1 && e.snapshotId === snapshotId) {
        entries.push({ status: 1, snapshotId, sequenceNumber: null, fileSequenceNumber: null, dataFile: e.dataFile })
        addedFiles++
        addedRows += rows
        continue
      }
      if (fv >= 2 && (e.sequenceNumber === null || e.sequenceNumber === undefined)) return skip(`entry ${e.dataFile.filePath} has no data sequence number`, bin[i]!.manifestPath)
      if (fv >= 3 && e.dataFile.content === 0 && e.dataFile.firstRowId === undefined) return skip(`data file ${e.dataFile.filePath} has no first_row_id`, bin[i]!.manifestPath)
      const seq = fv >= 2 ? e.sequenceNumber! : 0n
      if (seq < minSeq) minSeq = seq
      entries.push({ status: 0, snapshotId: e.snapshotId, sequenceNumber: seq, fileSequenceNumber: fv >= 2 ? (e.fileSequenceNumber ?? null) : null, dataFile: e.dataFile })
      existingRows += rows
    }
  }
  let bytes: Uint8Array
  let partitions: ManifestFile['partitions']
  try {
    bytes = encodeManifest({ formatVersion: fv, spec, schema: ctx.schema, content: 0 }, entries)
    partitions = summarizePartitions(spec, ctx.schema, entries.map((e) => e.dataFile.partition), boundBytes)
  } catch (err) {
    if (!(err instanceof IcebergError)) throw err
    return skip(err.message, bin[0]!.manifestPath)
  }
  const path = ctx.newPath()
  await ctx.io.write(path, bytes, { contentType: 'application/octet-stream' })
  return {
    manifestPath: path,
    manifestLength: bytes.length,
    partitionSpecId: spec['spec-id'],
    content: 0,
    sequenceNumber: fv >= 2 ? sequenceNumber : 0n,
    minSequenceNumber: fv >= 2 ? minSeq : 0n,
    addedSnapshotId: snapshotId,
    addedFilesCount: addedFiles,
    existingFilesCount: entries.length - addedFiles,
    deletedFilesCount: 0,
    addedRowsCount: addedRows,
    existingRowsCount: existingRows,
    deletedRowsCount: 0n,
    partitions,
    keyMetadata: null,
    ...(fv >= 3 ? { firstRowId: null } : {}),
  }
}
