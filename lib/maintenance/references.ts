/**
 * Every file a table's metadata reaches, for orphan cleanup: the current metadata file, the
 * metadata files of its metadata log (followed back through older logs, as Iceberg Java's
 * `ReachableFileUtil.metadataFileLocations(table, true)` does), version-hint.text, statistics and
 * partition-statistics files, and for EVERY snapshot still in the metadata its manifest list,
 * its manifests and every file those manifests list as ADDED or EXISTING (a DELETED entry is a
 * tombstone: while the file's snapshot is kept, that snapshot's manifests list it as live).
 *
 * Paths are compared in a normal form (`normalizePath`): `s3a://` and `s3n://` are `s3://`,
 * local paths are absolute `file://` paths. A file that cannot be read (a missing manifest) is an
 * error: when in doubt, nothing is deleted.
 */
import { IcebergError } from '../errors.js'
import { readTableMetadata, metadataDir, type ManifestFile, type TableMetadata } from '../iceberg/index.js'
import { snapshotManifests, readManifest } from '../iceberg/manifests.js'
import { parsePath, type FileIO } from '../io/index.js'

/** Manifests read at once: enough to hide S3 latency, few enough not to exhaust sockets. */
const READ_CONCURRENCY = 16
/** Older metadata files read while following metadata logs back (each log holds up to 100 entries). */
const MAX_LOG_HOPS = 1_000

/** One spelling per file: `s3://bucket/key` for every S3 scheme, `file:///abs` for local paths. */
export function normalizePath(path: string): string {
  const p = parsePath(path)
  return p.kind === 's3' ? `s3://${p.bucket}/${p.key}` : `file://${p.path}`
}

export interface TableReferences {
  /** Normalized paths of every reachable file. */
  files: Set<string>
  snapshots: number
  manifests: number
}

/**
 * The files reachable from `md` (read from `metadataLocation`). Reading a manifest list or
 * manifest fails loudly (IcebergError naming the file) instead of under-counting.
 */
export async function referencedFiles(io: FileIO, md: TableMetadata, metadataLocation: string): Promise<TableReferences> {
  const files = new Set<string>()
  const add = (path: string | undefined) => {
    if (typeof path === 'string' && path !== '') files.add(normalizePath(path))
  }
  add(metadataLocation)
  add(`${metadataDir(md)}/version-hint.text`)
  await addMetadataLog(io, md, add)
  for (const key of ['statistics', 'partition-statistics']) {
    const stats = md[key]
    if (Array.isArray(stats)) for (const s of stats) add((s as Record<string, unknown>)['statistics-path'] as string | undefined)
  }

  const manifests = new Map<string, ManifestFile>()
  for (const snapshot of md.snapshots) {
    add(snapshot['manifest-list'])
    let list: ManifestFile[]
    try {
      list = await snapshotManifests(io, snapshot)
    } catch (err) {
      throw new IcebergError(`table ${md.location}: cannot read the manifests of snapshot ${snapshot['snapshot-id']} (${(err as Error).message}); no orphan is deleted`, { cause: err })
    }
    for (const m of list) {
      const key = normalizePath(m.manifestPath)
      if (!manifests.has(key)) manifests.set(key, m)
    }
  }
  const specs = new Map(md['partition-specs'].map((s) => [s['spec-id'], s]))
  const queue = [...manifests.values()]
  const worker = async () => {
    for (let m = queue.pop(); m !== undefined; m = queue.pop()) {
      add(m.manifestPath)
      let entries
      try {
        entries = await readManifest(io, m.manifestPath, { manifest: m, spec: specs.get(m.partitionSpecId) })
      } catch (err) {
        throw new IcebergError(`table ${md.location}: cannot read manifest ${m.manifestPath} (${(err as Error).message}); no orphan is deleted`, { cause: err })
      }
      // A DELETED entry is a tombstone: the file is live in the parent snapshot, whose own
      // manifests list it as ADDED or EXISTING while that snapshot is kept. Counting tombstones
      // would keep, forever, a file whose parent expiry removed but could not delete (killed).
      for (const e of entries) if (e.status !== 2) add(e.dataFile.filePath)
    }
  }
  await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, queue.length) }, worker))
  return { files, snapshots: md.snapshots.length, manifests: manifests.size }
}

/**
 * The metadata log of `md`, then the log of its oldest entry, and so on while older files
 * exist (a file dropped from the log by `write.metadata.previous-versions-max` is still
 * reachable through an older file's log). A logged file that no longer exists ends the walk.
 */
async function addMetadataLog(io: FileIO, md: TableMetadata, add: (path: string) => void): Promise<void> {
  const seen = new Set<string>()
  let log = md['metadata-log'] ?? []
  for (let hop = 0; hop < MAX_LOG_HOPS && log.length > 0; hop++) {
    for (const entry of log) add(entry['metadata-file'])
    const oldest = log.reduce((a, b) => (b['timestamp-ms'] < a['timestamp-ms'] ? b : a))['metadata-file']
    const key = normalizePath(oldest)
    if (seen.has(key)) return
    seen.add(key)
    if (!(await io.exists(oldest))) return
    log = (await readTableMetadata(io, oldest))['metadata-log'] ?? []
  }
}
