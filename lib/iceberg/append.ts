/**
 * Append (https://iceberg.apache.org/spec/#snapshots): one new manifest per partition spec for
 * the new files, a manifest list that carries the parent's manifests forward, a snapshot with the
 * spec's standard summary totals, the snapshot log and the `main` ref. Like Iceberg-Java's default
 * append (MergeAppend), small data manifests are merged once enough accumulate (merge.ts,
 * `commit.manifest-merge.enabled` / `commit.manifest.min-count-to-merge` /
 * `commit.manifest.target-size-bytes`); with merging disabled it is a fast append that carries
 * every manifest forward unchanged. Work is proportional to the new files plus one read of the
 * parent manifest list, plus the manifests of a bin when one is merged — never to history.
 * v1 tables get v1 manifests and no sequence numbers; v3 tables get row lineage.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { IcebergError } from '../errors.js'
import type { FileIO } from '../io/index.js'
import { encodeManifest, readManifest, summarizePartitions } from './manifest.js'
import { encodeManifestList } from './manifest-list.js'
import { boundBytes, mergeManifests, mergeSettings } from './merge.js'
import { metadataDir } from './metadata-io.js'
import { currentSchema, currentSnapshot, schemaById, specById, withNewMainSnapshot } from './metadata.js'
import { snapshotManifests } from './scan.js'
import type { DataFile, ManifestEntry, ManifestFile, Snapshot, TableMetadata } from './types.js'

export interface AppendOptions {
  /** Extra snapshot summary properties (e.g. `floe.offsets.<pipeline>`); standard keys win. */
  summary?: Record<string, string>
  snapshotId?: bigint
  nowMs?: number
  /** Schema the files were written with (default: the current schema). */
  schemaId?: number
  /** Manifests a merge may read in this commit beyond its first merged bin (default MAX_MANIFESTS_READ_PER_COMMIT, see merge.ts). */
  maxManifestsMergeRead?: number
}

/** A random positive 63-bit snapshot id not yet used by the table. */
export function newSnapshotId(md?: TableMetadata): bigint {
  for (;;) {
    const id = randomBytes(8).readBigUInt64BE() & 0x7fff_ffff_ffff_ffffn
    if (id !== 0n && !md?.snapshots.some((s) => s['snapshot-id'] === id)) return id
  }
}

const partitionKey = (f: DataFile) =>
  `${f.specId}:${JSON.stringify(f.partition, (_, v) => (typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v))}`

/** Standard summary totals: parent total + added, omitted when the parent did not track it. */
function summarize(parent: Snapshot | undefined, files: DataFile[], extra: Record<string, string>): Snapshot['summary'] {
  const addedRecords = files.reduce((a, f) => a + BigInt(f.recordCount), 0n)
  const addedSize = files.reduce((a, f) => a + BigInt(f.fileSizeInBytes), 0n)
  const summary: Record<string, string> = { ...extra }
  const std: Record<string, string> = { operation: 'append' }
  if (files.length > 0) {
    std['added-data-files'] = String(files.length)
    std['added-records'] = addedRecords.toString()
    std['added-files-size'] = addedSize.toString()
  }
  std['changed-partition-count'] = String(new Set(files.map(partitionKey)).size)
  const totals: [string, bigint][] = [
    ['total-records', addedRecords],
    ['total-files-size', addedSize],
    ['total-data-files', BigInt(files.length)],
    ['total-delete-files', 0n],
    ['total-position-deletes', 0n],
    ['total-equality-deletes', 0n],
  ]
  for (const [key, added] of totals) {
    const prev = parent === undefined ? '0' : parent.summary[key]
    if (prev !== undefined && /^-?\d+$/.test(prev)) std[key] = (BigInt(prev) + added).toString()
  }
  return Object.assign(summary, std) as Snapshot['summary']
}

/** Fills in counts a v1 writer left out, by reading that manifest (old tables only). */
async function withCounts(io: FileIO, m: ManifestFile): Promise<ManifestFile> {
  if (!m.countsMissing) return m
  const entries = await readManifest(io, m.manifestPath, { manifest: m })
  const n = (s: number) => entries.filter((e) => e.status === s)
  const rows = (s: number) => n(s).reduce((a, e) => a + BigInt(e.dataFile.recordCount), 0n)
  const { countsMissing: _, ...rest } = m
  return {
    ...rest,
    addedFilesCount: n(1).length,
    existingFilesCount: n(0).length,
    deletedFilesCount: n(2).length,
    addedRowsCount: rows(1),
    existingRowsCount: rows(0),
    deletedRowsCount: rows(2),
  }
}

/**
 * Appends data files as a new snapshot and returns the new metadata (not written: the catalog
 * writes it and swaps the pointer). Manifests and the manifest list are written through `io`.
 */
export async function appendFiles(io: FileIO, base: TableMetadata, files: DataFile[], opts: AppendOptions = {}): Promise<TableMetadata> {
  const fv = base['format-version']
  const keys = base['encryption-keys']
  if ((Array.isArray(keys) && keys.length > 0) || base.snapshots.some((s) => s['key-id'] !== undefined))
    throw new IcebergError(`table ${base.location} is encrypted (encryption-keys); Floe does not write encrypted manifests`)
  const parent = currentSnapshot(base)
  const snapshotId = opts.snapshotId ?? newSnapshotId(base)
  if (base.snapshots.some((s) => s['snapshot-id'] === snapshotId)) throw new IcebergError(`table ${base.location}: snapshot id ${snapshotId} already exists`)
  const now = opts.nowMs ?? Date.now()
  const schema = opts.schemaId === undefined ? currentSchema(base) : schemaById(base, opts.schemaId)
  const sequenceNumber = fv >= 2 ? (base['last-sequence-number'] ?? 0n) + 1n : 0n
  const dir = metadataDir(base)
  const commitUuid = randomUUID()

  for (const f of files) {
    if (f.content !== 0) throw new IcebergError(`appendFiles takes data files only; ${f.filePath} has content ${f.content}`)
    if (f.fileFormat !== 'PARQUET' && f.fileFormat !== 'AVRO' && f.fileFormat !== 'ORC')
      throw new IcebergError(`${f.filePath}: file format ${f.fileFormat} is not a data file format`)
  }
  const bySpec = new Map<number, DataFile[]>()
  for (const f of files) {
    const group = bySpec.get(f.specId)
    if (group) group.push(f)
    else bySpec.set(f.specId, [f])
  }

  const settings = { ...mergeSettings(base), ...(opts.maxManifestsMergeRead === undefined ? {} : { maxManifestsRead: opts.maxManifestsMergeRead }) }
  const newManifests: ManifestFile[] = []
  const pending = new Map<ManifestFile, ManifestEntry[]>()
  const bytesOf = new Map<ManifestFile, Uint8Array>()
  let i = 0
  const newPath = () => `${dir}/${commitUuid}-m${i++}.avro`
  for (const [specId, group] of bySpec) {
    const spec = specById(base, specId)
    const entries: ManifestEntry[] = group.map((dataFile) => ({ status: 1, snapshotId, sequenceNumber: null, fileSequenceNumber: null, dataFile }))
    const bytes = encodeManifest({ formatVersion: fv, spec, schema, content: 0 }, entries)
    const m: ManifestFile = {
      manifestPath: newPath(),
      manifestLength: bytes.length,
      partitionSpecId: specId,
      content: 0,
      sequenceNumber,
      minSequenceNumber: sequenceNumber,
      addedSnapshotId: snapshotId,
      addedFilesCount: group.length,
      existingFilesCount: 0,
      deletedFilesCount: 0,
      addedRowsCount: group.reduce((a, f) => a + BigInt(f.recordCount), 0n),
      existingRowsCount: 0n,
      deletedRowsCount: 0n,
      partitions: summarizePartitions(spec, schema, group.map((f) => f.partition), boundBytes),
      keyMetadata: null,
    }
    newManifests.push(m)
    pending.set(m, entries)
    bytesOf.set(m, bytes)
  }

  let carried = parent ? await snapshotManifests(io, parent) : []
  if (fv >= 2 && carried.some((m) => m.countsMissing)) carried = await Promise.all(carried.map((m) => withCounts(io, m)))
  let manifests = [...newManifests, ...carried]
  if (settings.enabled) {
    manifests = await mergeManifests({ io, base, formatVersion: fv, schema: currentSchema(base), snapshotId, sequenceNumber, settings, pending, newPath }, manifests)
  }
  // New manifests not merged away are written as they are (a merged one was never written).
  await Promise.all(
    manifests.filter((m) => bytesOf.has(m)).map((m) => io.write(m.manifestPath, bytesOf.get(m)!, { contentType: 'application/octet-stream' })),
  )

  // v3 row lineage: data manifests without a first_row_id get the next block of row ids.
  let firstRowId: bigint | undefined
  let addedRows: bigint | undefined
  if (fv >= 3) {
    firstRowId = base['next-row-id'] ?? 0n
    let next = firstRowId
    for (const m of manifests) {
      if (m.content === 0 && (m.firstRowId === undefined || m.firstRowId === null)) {
        m.firstRowId = next
        next += m.addedRowsCount + m.existingRowsCount
      }
    }
    addedRows = next - firstRowId
  }

  const listPath = `${dir}/snap-${snapshotId}-1-${commitUuid}.avro`
  const list = encodeManifestList(fv, { snapshotId, parentSnapshotId: parent?.['snapshot-id'], sequenceNumber, firstRowId }, manifests)
  await io.write(listPath, list, { contentType: 'application/octet-stream' })

  const snapshot: Snapshot = {
    'snapshot-id': snapshotId,
    ...(parent ? { 'parent-snapshot-id': parent['snapshot-id'] } : {}),
    ...(fv >= 2 ? { 'sequence-number': sequenceNumber } : {}),
    'timestamp-ms': now,
    summary: summarize(parent, files, opts.summary ?? {}),
    'manifest-list': listPath,
    'schema-id': schema['schema-id'],
    ...(fv >= 3 ? { 'first-row-id': firstRowId, 'added-rows': addedRows } : {}),
  }
  const md = withNewMainSnapshot(base, snapshot)
  if (fv >= 3) md['next-row-id'] = firstRowId! + addedRows!
  return md
}

/**
 * The files an appendFiles call wrote for the current snapshot of `md` (its manifest list and the
 * manifests it added), so a caller whose commit definitely failed can delete them.
 */
export async function filesWrittenBy(io: FileIO, md: TableMetadata): Promise<string[]> {
  const snap = currentSnapshot(md)
  if (!snap?.['manifest-list']) return []
  const manifests = await snapshotManifests(io, snap)
  return [snap['manifest-list'], ...manifests.filter((m) => m.addedSnapshotId === snap['snapshot-id']).map((m) => m.manifestPath)]
}
