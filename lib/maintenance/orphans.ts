/**
 * Orphan cleanup (DESIGN.md invariant 7): files under a table's location that nothing references
 * — a writer that crashed or lost its fencing race after writing Parquet, a committer that wrote
 * manifests and metadata but lost the catalog swap — are deleted once older than a horizon.
 *
 * Safety, in order:
 * 1. Pending batches are read FIRST (consistent Query), then the table: a batch committed in
 *    between is then in the snapshot read, so its files are referenced either way. Files of a
 *    batch registered after the read were written moments ago and are younger than the horizon.
 * 2. Referenced = everything reachable from the table metadata (lib/maintenance/references.ts)
 *    ∪ every file of every pending batch. An unreadable manifest or batch aborts the table.
 * 3. Only files under the table location are considered: `<location>/data/`, the data path
 *    (`write.data.path`) when it lies under the location, and the metadata folder. Tables
 *    written by other engines may have data files elsewhere; those are never touched.
 * 4. In the metadata folder only Iceberg's own kinds (`*.metadata.json`, `*.avro`, `*.puffin`,
 *    `*.stats`) are candidates; version-hint.text and anything unknown stay.
 * 5. Only files last modified longer ago than the horizon go (FLOE_ORPHAN_HORIZON_HOURS, 24 h:
 *    far beyond a Lambda's 15 minutes, so an in-flight writer's or committer's files are safe).
 */
import { parseTableId } from '../catalog/index.js'
import { listPendingTables, loadBatchFiles, readPendingBatches } from '../control/index.js'
import { dataFileFromJSON, metadataDir, type TableMetadata } from '../iceberg/index.js'
import { emitMetrics, logger } from '../log.js'
import { immediately, retry } from '../retry/index.js'
import { normalizePath, referencedFiles } from './references.js'
import type { MaintenanceDeps, OrphanOptions, OrphanResult } from './types.js'

const METADATA_KINDS = /\.(metadata\.json|avro|puffin|stats)$/
const DELETE_CHUNK = 1_000

const trim = (s: string) => s.replace(/\/+$/, '')

/** Delete the orphan files of one table (`ns.name`). */
export async function removeOrphanFiles(deps: MaintenanceDeps, table: string, opts: OrphanOptions = {}): Promise<OrphanResult> {
  const now = deps.now?.() ?? Date.now()
  const olderThanMs = opts.olderThanMs ?? deps.config.orphanHorizonMs
  const pipelines = opts.pipelines ?? [deps.config.pipeline]

  // 1. pending batches first, then the table.
  const pending = new Set<string>()
  for (const pipeline of pipelines) for (const path of await pendingFilesOf(deps, pipeline, table)) pending.add(normalizePath(path))
  const { metadata, metadataLocation } = await deps.catalog.loadTable(parseTableId(table))
  const refs = await referencedFiles(deps.io, metadata, metadataLocation)
  const referenced = new Set([...refs.files, ...pending])

  const prefixes = scanPrefixes(metadata)
  const metaPrefix = `${trim(metadataDir(metadata))}/`
  const result: OrphanResult = { table, scanned: 0, referenced: 0, young: 0, skipped: 0, orphans: [], deleted: 0, dryRun: opts.dryRun === true, prefixes }
  for (const prefix of prefixes) {
    for await (const file of deps.io.list(prefix)) {
      result.scanned++
      if (referenced.has(normalizePath(file.path))) result.referenced++
      else if (file.path.startsWith(metaPrefix) && !METADATA_KINDS.test(file.path)) result.skipped++
      else if (!(file.lastModified.getTime() <= now - olderThanMs)) result.young++
      else result.orphans.push(file.path)
    }
  }
  await deleteOrphans(deps, result)
  logger.info('orphan cleanup', { table, ...summary(result), snapshots: refs.snapshots, manifests: refs.manifests, pendingFiles: pending.size })
  return result
}

/**
 * Delete spilled file lists (`<spill prefix>/<batchId>-<attemptId>.json`) that no pending batch
 * names: left by a registration whose transaction was cancelled or a committer whose cleanup
 * failed. Spill objects are shared by all tables of the warehouse, so this runs once per run.
 */
export async function removeOrphanSpills(deps: MaintenanceDeps, opts: OrphanOptions & { tables?: string[] } = {}): Promise<OrphanResult> {
  const now = deps.now?.() ?? Date.now()
  const olderThanMs = opts.olderThanMs ?? deps.config.orphanHorizonMs
  const prefix = `${trim(deps.control.spillPrefix)}/`
  const referenced = new Set<string>()
  for (const pipeline of opts.pipelines ?? [deps.config.pipeline]) {
    // The pending index is eventually consistent: add the tables the caller knows of.
    const tables = new Set([...(await listPendingTables(deps.control, pipeline)), ...(opts.tables ?? [])])
    for (const table of tables) {
      for (const b of await readPendingBatches(deps.control, pipeline, table)) if (b.spillPath) referenced.add(normalizePath(b.spillPath))
    }
  }
  const result: OrphanResult = { table: '_spill', scanned: 0, referenced: 0, young: 0, skipped: 0, orphans: [], deleted: 0, dryRun: opts.dryRun === true, prefixes: [prefix] }
  for await (const file of deps.io.list(prefix)) {
    result.scanned++
    if (referenced.has(normalizePath(file.path))) result.referenced++
    else if (!file.path.endsWith('.json')) result.skipped++
    else if (!(file.lastModified.getTime() <= now - olderThanMs)) result.young++
    else result.orphans.push(file.path)
  }
  await deleteOrphans(deps, result)
  logger.info('orphan spill cleanup', { ...summary(result) })
  return result
}

/** The prefixes to list: data and metadata folders that lie under the table location, outermost only. */
export function scanPrefixes(md: Pick<TableMetadata, 'location' | 'properties'>): string[] {
  const location = `${trim(md.location)}/`
  const data = md.properties['write.data.path'] ?? md.properties['write.folder-storage.path']
  const candidates = [`${location}data/`, data && `${trim(data)}/`, `${trim(metadataDir(md as TableMetadata))}/`]
    .filter((p): p is string => typeof p === 'string' && p.startsWith(location) && p !== location)
  const unique = [...new Set(candidates)]
  return unique.filter((p) => !unique.some((q) => q !== p && p.startsWith(q)))
}

/** Every file of the table's pending batches of `pipeline`, re-read when a batch is committed mid-read. */
export async function pendingFilesOf(deps: MaintenanceDeps, pipeline: string, table: string): Promise<string[]> {
  let step: 'batches' | 'files' = 'batches'
  return await retry(
    async () => {
      step = 'batches'
      const batches = await readPendingBatches(deps.control, pipeline, table)
      step = 'files'
      const files = await loadBatchFiles(deps.control, pipeline, batches, dataFileFromJSON)
      return [...files.values()].flat().map((f) => f.filePath)
    },
    immediately(deps.config.orphanPendingReadAttempts),
    // A batch committed (and its item deleted) between the two reads: read both again.
    { when: () => step === 'files' },
  )
}

async function deleteOrphans(deps: MaintenanceDeps, result: OrphanResult): Promise<void> {
  if (!result.dryRun) {
    for (let i = 0; i < result.orphans.length; i += DELETE_CHUNK) {
      const chunk = result.orphans.slice(i, i + DELETE_CHUNK)
      await deps.io.deleteMany(chunk)
      result.deleted += chunk.length
    }
  }
  emitMetrics({ [result.dryRun ? 'OrphanFilesFound' : 'OrphanFilesDeleted']: result.dryRun ? result.orphans.length : result.deleted })
}

function summary(r: OrphanResult) {
  return { scanned: r.scanned, referenced: r.referenced, young: r.young, skipped: r.skipped, orphans: r.orphans.length, deleted: r.deleted, dryRun: r.dryRun, sample: r.orphans.slice(0, 20) }
}
