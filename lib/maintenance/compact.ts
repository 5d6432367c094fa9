/**
 * Compaction (DESIGN.md invariant 10): small data files of a partition are rewritten into files
 * near the target size and swapped in with one `replace` snapshot per run (lib/iceberg/replace.ts).
 *
 * - Planned from the current snapshot (compact-plan.ts), at most FLOE_COMPACT_MAX_MB of input per
 *   table per run, no new group started after the caller's deadline: a unit always finishes well
 *   inside one Lambda run, and the next run continues with what is left.
 * - Streaming, in bounded memory (FLOE_COMPACT_MEMORY_MB, budget.ts): each input file is read by
 *   byte ranges, one row group's column chunks at a time, decoded in windows of about
 *   FLOE_COMPACT_CHUNK_MB of rows (stream-rows.ts), written through the writer's columnar path with
 *   parquet-wasm's streaming writer, row groups closing at the chunk size, and uploaded part by
 *   part (write-rows.ts, FileIO.openWrite). Neither an input file nor the output is ever whole in
 *   memory; a group whose input row group alone would pass the budget is skipped.
 * - Exact: the rewritten file must hold exactly the inputs' record count; a value that cannot be
 *   read back exactly stops the table (CompactionUnsupportedError), it is never approximated.
 * - Commit: under the committer's lease; on a conflict with an outside writer the table is
 *   reloaded and each group re-validated: a group whose inputs are no longer all live, or whose
 *   partition gained a delete file, is dropped (its output deleted after the commit), the others
 *   are rebased. The rewritten file keeps the max data sequence number of its inputs. The
 *   snapshot carries the newest `floe.*` summary values of its ancestry, so the committer's
 *   covered check (docs/commit-protocol.md) still finds its offsets however old the append is.
 */
import { randomUUID } from 'node:crypto'
import { parseTableId } from '../catalog/index.js'
import { replaceDataFiles, liveEntries } from '../iceberg/manifests.js'
import { currentSchema, currentSnapshot, type DataFile, type TableMetadata } from '../iceberg/index.js'
import { emitMetrics, logger, MetricUnit } from '../log.js'
import { parquetMetadataAsync } from 'hyparquet'
import { IcebergError } from '../errors.js'
import { commitUnderLease, type LeaseHolder } from './commit.js'
import { partitionKeyOf, planCompaction, tableHealth, targetFileBytes, type CompactionGroup, type TableHealth } from './compact-plan.js'
import { CompactionBudget, CompactionMemoryError } from './budget.js'
import { CompactionUnsupportedError, rangedFile } from './read-rows.js'
import { streamRows } from './stream-rows.js'
import { encodeStreamed } from './write-rows.js'
import type { MaintenanceDeps } from './types.js'

export interface CompactOptions {
  dryRun?: boolean
  /** Epoch ms after which no new group is started. */
  deadline?: number
  /** The run's memory ledger (tests read its peak); default one of FLOE_COMPACT_MEMORY_MB. */
  budget?: CompactionBudget
  /** Test seam: runs after the groups are written, before the commit (a racing writer commits here). */
  beforeCommit?: () => Promise<void> | void
}

export interface CompactResult {
  table: string
  health: TableHealth
  targetBytes: number
  groupsPlanned: number
  groupsCommitted: number
  /** Groups dropped because an outside writer changed their files or partition meanwhile. */
  groupsDropped: number
  /** Groups not rewritten because one of their input row groups needs more than FLOE_COMPACT_MEMORY_MB. */
  groupsOverBudget: number
  filesRewritten: number
  filesWritten: number
  bytesRewritten: number
  bytesWritten: number
  snapshotId?: bigint
  /** Why the table was not compacted at all. */
  skipped?: string
  dryRun: boolean
}

interface Written {
  group: CompactionGroup
  file: DataFile
}

/** Compact one table (the caller holds its lease). */
export async function compactTable(deps: MaintenanceDeps, table: string, holder: LeaseHolder, opts: CompactOptions = {}): Promise<CompactResult> {
  const { metadata } = await deps.catalog.loadTable(parseTableId(table))
  const target = targetFileBytes(metadata, deps.config.targetFileBytes)
  const entries = currentSnapshot(metadata) ? await liveEntries(deps.io, metadata, { content: 'all' }) : []
  const health = tableHealth(entries, target)
  const result: CompactResult = { table, health, targetBytes: target, groupsPlanned: 0, groupsCommitted: 0, groupsDropped: 0, groupsOverBudget: 0, filesRewritten: 0, filesWritten: 0, bytesRewritten: 0, bytesWritten: 0, dryRun: opts.dryRun === true }
  emitMetrics({ TableDataFiles: health.dataFiles, SmallFileRatio: { value: Math.round(health.smallFileRatio * 100), unit: MetricUnit.Percent } })
  if (metadata['format-version'] !== 2) return skip(result, `format v${metadata['format-version']} (compaction writes v2 replace snapshots only)`)
  const groups = planCompaction(entries, target, deps.config.compactMaxBytes)
  result.groupsPlanned = groups.length
  if (groups.length === 0 || opts.dryRun) {
    result.filesRewritten = groups.reduce((a, g) => a + g.inputs.length, 0)
    result.bytesRewritten = groups.reduce((a, g) => a + g.inputBytes, 0)
    return result
  }

  const written: Written[] = []
  // One ledger for the run: parquet-wasm's memory, once grown, stays grown for the next group.
  const budget = opts.budget ?? new CompactionBudget(deps.config.compactMemoryBytes)
  try {
    for (const group of groups) {
      if (opts.deadline !== undefined && Date.now() >= opts.deadline) break
      try {
        written.push({ group, file: await rewriteGroup(deps, metadata, group, budget) })
      } catch (err) {
        if (!(err instanceof CompactionMemoryError)) throw err
        // One input row group larger than the budget allows: this group is left as it is.
        result.groupsOverBudget++
        logger.warn('compaction group over the memory budget, skipped', { table, partition: group.key, files: group.inputs.length, error: err.message })
      }
      await holder.renew()
    }
  } catch (err) {
    await deps.io.deleteMany(written.map((w) => w.file.filePath)).catch(() => undefined)
    if (err instanceof CompactionUnsupportedError) return skip(result, err.message)
    throw err
  }
  await opts.beforeCommit?.()

  let kept: Written[] = []
  let landed: Written[] = []
  const outcome = await commitUnderLease(deps, table, holder, async (base) => {
    const live = await liveEntries(deps.io, base.metadata, { content: 'all' })
    const livePaths = new Set(live.filter((e) => e.dataFile.content === 0).map((e) => e.dataFile.filePath))
    const withDeletes = new Set(live.filter((e) => e.dataFile.content !== 0).map((e) => partitionKeyOf(e.dataFile)))
    // An earlier attempt whose outcome was unknown may have landed: its outputs are then live.
    landed = written.filter((w) => livePaths.has(w.file.filePath))
    kept = written.filter((w) => !livePaths.has(w.file.filePath) && !withDeletes.has(w.group.key) && w.group.inputs.every((e) => livePaths.has(e.dataFile.filePath)))
    if (kept.length === 0) return { plan: undefined, metadata: undefined }
    const md = await replaceDataFiles(deps.io, base.metadata, {
      remove: kept.flatMap((w) => w.group.inputs.map((e) => e.dataFile.filePath)),
      add: kept.map((w) => ({ file: w.file, dataSequenceNumber: w.group.dataSequenceNumber })),
      summary: { ...floeSummary(base.metadata), 'floe.maintenance': 'compaction' },
    })
    return { plan: undefined, metadata: md }
  })
  if (outcome.committed) result.snapshotId = currentSnapshot(outcome.committed.metadata)?.['snapshot-id']
  const done = [...(outcome.committed ? kept : []), ...landed]
  const dropped = written.filter((w) => !done.includes(w))
  // Nothing references a dropped group's output: the swap that would have named it did not happen.
  if (dropped.length > 0) await deps.io.deleteMany(dropped.map((w) => w.file.filePath))
  result.groupsCommitted = done.length
  result.groupsDropped = dropped.length
  result.filesRewritten = done.reduce((a, w) => a + w.group.inputs.length, 0)
  result.filesWritten = done.length
  result.bytesRewritten = done.reduce((a, w) => a + w.group.inputBytes, 0)
  result.bytesWritten = done.reduce((a, w) => a + w.file.fileSizeInBytes, 0)
  emitMetrics({
    CompactedFiles: result.filesRewritten,
    CompactedBytes: { value: result.bytesRewritten, unit: MetricUnit.Bytes },
    ...(result.groupsDropped > 0 ? { CompactionGroupsDropped: result.groupsDropped } : {}),
  })
  logger.info('table compacted', { ...result, health, snapshotId: result.snapshotId?.toString() })
  return result
}

function skip(result: CompactResult, reason: string): CompactResult {
  result.skipped = reason
  logger.warn('compaction skipped', { table: result.table, reason })
  return result
}

/** The newest value of every `floe.*` summary key along the current snapshot's ancestry. */
export function floeSummary(md: TableMetadata): Record<string, string> {
  const byId = new Map(md.snapshots.map((s) => [s['snapshot-id'], s]))
  const out: Record<string, string> = {}
  const seen = new Set<bigint>()
  for (let s = currentSnapshot(md); s && !seen.has(s['snapshot-id']); s = s['parent-snapshot-id'] === undefined ? undefined : byId.get(s['parent-snapshot-id'])) {
    seen.add(s['snapshot-id'])
    for (const [k, v] of Object.entries(s.summary ?? {})) if (k.startsWith('floe.') && k !== 'floe.maintenance' && !(k in out)) out[k] = v
  }
  return out
}

/** Rewrites one group as one file beside its inputs, within `budget`. */
export async function rewriteGroup(deps: Pick<MaintenanceDeps, 'io' | 'config'>, md: TableMetadata, group: CompactionGroup, budget: CompactionBudget): Promise<DataFile> {
  const schema = currentSchema(md)
  const chunk = deps.config.compactChunkBytes
  const expected = group.inputs.reduce((a, e) => a + e.dataFile.recordCount, 0)
  const first = group.inputs[0]!.dataFile
  const dir = first.filePath.slice(0, first.filePath.lastIndexOf('/'))
  const path = `${dir}/compacted-${randomUUID()}.parquet`
  const sink = await deps.io.openWrite(path, { contentType: 'application/vnd.apache.parquet', partBytes: chunk })
  try {
    const rows = streamRows(deps.io, schema, group.inputs.map((e) => e.dataFile), chunk, budget)
    const out = await encodeStreamed(schema, rows, {
      properties: md.properties,
      compression: deps.config.parquetCompression,
      integerEncoding: deps.config.parquetIntegerEncoding,
      rowGroupBytes: chunk,
      sink,
      budget,
      footer: (size) => parquetMetadataAsync(rangedFile(deps.io, path, size)),
    })
    if (out.recordCount !== expected) throw new IcebergError(`compaction of ${group.inputs.length} files read ${out.recordCount} rows, expected ${expected}`)
    return { content: 0, filePath: path, fileFormat: 'PARQUET', specId: first.specId, partition: first.partition, recordCount: out.recordCount, fileSizeInBytes: out.size, ...out.metrics }
  } catch (err) {
    await sink.abort()
    await deps.io.delete(path).catch(() => undefined)
    throw err
  }
}
