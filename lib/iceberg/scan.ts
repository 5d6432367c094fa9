/**
 * Reading a snapshot's files: its manifests (from the manifest list, or v1's embedded
 * `manifests`), then the entries of each manifest with inheritance applied.
 */
import type { FileIO } from '../io/index.js'
import { IcebergError } from '../errors.js'
import { currentSnapshot, snapshotById } from './metadata.js'
import { decodeManifest } from './manifest.js'
import { readManifestList } from './manifest-list.js'
import type { ManifestEntry, ManifestFile, PartitionSpec, Snapshot, TableMetadata } from './types.js'
import { mapBounded } from '../concurrency.js'

export { readManifestList } from './manifest-list.js'
export { readManifest } from './manifest.js'

/** Manifests read at once: enough to hide S3 latency, few enough not to exhaust sockets or memory. */
const READ_CONCURRENCY = 16


const specOf = (md: TableMetadata, id: number): PartitionSpec | undefined => md['partition-specs'].find((s) => s['spec-id'] === id)

/**
 * A v1 snapshot's embedded manifest paths as manifest-list entries: each manifest is read once
 * to learn its spec and counts (such tables are old and small).
 */
async function embeddedManifests(io: FileIO, snapshot: Snapshot): Promise<ManifestFile[]> {
  const out: ManifestFile[] = []
  for (const path of snapshot.manifests ?? []) {
    const bytes = await io.read(path)
    const { meta, entries } = decodeManifest(bytes, `manifest ${path}`)
    const count = (s: number) => entries.filter((e) => e.status === s)
    const rows = (s: number) => count(s).reduce((a, e) => a + BigInt(e.dataFile.recordCount), 0n)
    const added = count(1)
    out.push({
      manifestPath: path,
      manifestLength: bytes.length,
      partitionSpecId: Number(meta['partition-spec-id'] ?? 0),
      content: 0,
      sequenceNumber: 0n,
      minSequenceNumber: 0n,
      addedSnapshotId: added[0]?.snapshotId ?? snapshot['snapshot-id'],
      addedFilesCount: added.length,
      existingFilesCount: count(0).length,
      deletedFilesCount: count(2).length,
      addedRowsCount: rows(1),
      existingRowsCount: rows(0),
      deletedRowsCount: rows(2),
    })
  }
  return out
}

/** The manifests of a snapshot. */
export async function snapshotManifests(io: FileIO, snapshot: Snapshot): Promise<ManifestFile[]> {
  if (snapshot['manifest-list'] !== undefined) return readManifestList(io, snapshot['manifest-list'])
  if (Array.isArray(snapshot.manifests)) return embeddedManifests(io, snapshot)
  throw new IcebergError(`snapshot ${snapshot['snapshot-id']} has neither manifest-list nor manifests`)
}

function pickSnapshot(md: TableMetadata, snapshotId?: bigint): Snapshot | undefined {
  return snapshotId === undefined ? currentSnapshot(md) : snapshotById(md, snapshotId)
}

/** Live (ADDED or EXISTING) entries of a snapshot: data files, delete files, or both. */
export async function liveEntries(
  io: FileIO,
  md: TableMetadata,
  opts: { snapshotId?: bigint; content?: 'data' | 'deletes' | 'all' } = {},
): Promise<ManifestEntry[]> {
  const snapshot = pickSnapshot(md, opts.snapshotId)
  if (!snapshot) return []
  const want = opts.content ?? 'all'
  const manifests = (await snapshotManifests(io, snapshot)).filter(
    (m) => want === 'all' || (want === 'data' ? m.content === 0 : m.content === 1),
  )
  const lists = await mapBounded(manifests, READ_CONCURRENCY, async (m) => {
    const { entries } = decodeManifest(await io.read(m.manifestPath), `manifest ${m.manifestPath}`, { manifest: m, spec: specOf(md, m.partitionSpecId) })
    return entries.filter((e) => e.status !== 2)
  })
  return lists.flat()
}

/** Live data files (content 0) of the current snapshot or of `snapshotId`. */
export async function liveDataFiles(io: FileIO, md: TableMetadata, snapshotId?: bigint): Promise<ManifestEntry[]> {
  const entries = await liveEntries(io, md, { snapshotId, content: 'data' })
  return entries.filter((e) => e.dataFile.content === 0)
}
