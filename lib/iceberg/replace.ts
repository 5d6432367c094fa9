/**
 * Replace (https://iceberg.apache.org/spec/#snapshots, operation `replace`): data files are
 * rewritten into others holding the same rows — compaction. Followed from Iceberg Java's
 * BaseRewriteFiles / MergingSnapshotProducer:
 *
 * - Validation: every file to remove must be live in the base's current snapshot; otherwise
 *   ReplacedFileGoneError names the missing ones (someone rewrote or deleted them meanwhile: the
 *   caller drops the groups that used them and retries with the rest).
 * - A manifest holding a removed file is rewritten: removed entries become DELETED (status 2,
 *   this snapshot's id, their sequence numbers written out), other live entries EXISTING with
 *   their original snapshot id and sequence numbers, earlier DELETED entries dropped. Manifests
 *   without removed files are carried forward unchanged, delete manifests too.
 * - Added files get ADDED entries whose DATA sequence number is given explicitly — the max data
 *   sequence number of the files they replace (RewriteFiles#dataSequenceNumber) — so a delete
 *   file committed after any input still applies to the rewritten rows and none committed in
 *   between can be skipped; their file sequence number is inherited (this snapshot's).
 * - Summary: Java's keys and totals (total = parent + added − deleted); extra keys (Floe's
 *   `floe.*`) are the caller's.
 *
 * Format v2 only: v1 has no sequence numbers to preserve, v3's row lineage is not yet written.
 */
import { randomUUID } from 'node:crypto'
import { IcebergError, ReplacedFileGoneError } from '../errors.js'
import type { FileIO } from '../io/index.js'
import { mapBounded } from '../concurrency.js'
import { encodeManifest, readManifest, summarizePartitions } from './manifest.js'
import { encodeManifestList } from './manifest-list.js'
import { boundBytes } from './merge.js'
import { metadataDir } from './metadata-io.js'
import { currentSchema, currentSnapshot, specById, withNewMainSnapshot } from './metadata.js'
import { newSnapshotId } from './append.js'
import { snapshotManifests } from './scan.js'
import type { DataFile, ManifestEntry, ManifestFile, Snapshot, TableMetadata } from './types.js'

const READ_CONCURRENCY = 16

export interface AddedFile {
  file: DataFile
  /** Data sequence number of the new file: the max of the files it replaces. */
  dataSequenceNumber: bigint
}

export interface ReplaceOptions {
  /** Paths of live data files to remove. */
  remove: string[]
  add: AddedFile[]
  /** Extra summary properties (standard keys win). */
  summary?: Record<string, string>
  snapshotId?: bigint
  nowMs?: number
}

/** A manifest's entries, read with inheritance applied. */
async function entriesOf(io: FileIO, md: TableMetadata, m: ManifestFile): Promise<ManifestEntry[]> {
  return readManifest(io, m.manifestPath, { manifest: m, spec: specById(md, m.partitionSpecId) })
}

const partitionKey = (f: DataFile) =>
  `${f.specId}:${JSON.stringify(f.partition, (_, v) => (typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v))}`

/** Commits a `replace` snapshot on top of `base` and returns the new metadata (not yet swapped in). */
export async function replaceDataFiles(io: FileIO, base: TableMetadata, opts: ReplaceOptions): Promise<TableMetadata> {
  if (base['format-version'] !== 2) throw new IcebergError(`table ${base.location}: replace is written for format v2 only (table is v${base['format-version']})`)
  const parent = currentSnapshot(base)
  if (!parent) throw new IcebergError(`table ${base.location}: nothing to replace in an empty table`)
  const snapshotId = opts.snapshotId ?? newSnapshotId(base)
  const now = opts.nowMs ?? Date.now()
  const sequenceNumber = (base['last-sequence-number'] ?? 0n) + 1n
  const schema = currentSchema(base)
  const dir = metadataDir(base)
  const uuid = randomUUID()
  let n = 0
  const newPath = () => `${dir}/${uuid}-m${n++}.avro`

  const remove = new Set(opts.remove)
  const found = new Map<string, ManifestEntry>()
  const carried = await snapshotManifests(io, parent)
  const rewritten = await mapBounded(carried, READ_CONCURRENCY, async (m): Promise<ManifestFile | null> => {
    if (m.content !== 0) return m
    if (!m.countsMissing && m.addedFilesCount === 0 && m.existingFilesCount === 0) return null // only DELETED entries: no live file
    const entries = await entriesOf(io, base, m)
    if (!entries.some((e) => e.status !== 2 && remove.has(e.dataFile.filePath))) return m
    const out: ManifestEntry[] = []
    for (const e of entries) {
      if (e.status === 2) continue
      if (e.sequenceNumber === null || e.sequenceNumber === undefined) throw new IcebergError(`manifest ${m.manifestPath}: entry ${e.dataFile.filePath} has no data sequence number`)
      const gone = remove.has(e.dataFile.filePath)
      if (gone) found.set(e.dataFile.filePath, e)
      out.push({ status: gone ? 2 : 0, snapshotId: gone ? snapshotId : e.snapshotId, sequenceNumber: e.sequenceNumber, fileSequenceNumber: e.fileSequenceNumber ?? null, dataFile: e.dataFile })
    }
    return writeManifest(io, base, m.partitionSpecId, out, { path: newPath(), snapshotId, sequenceNumber })
  })
  const missing = [...remove].filter((p) => !found.has(p))
  if (missing.length > 0) throw new ReplacedFileGoneError(`table ${base.location}: ${missing.length} file(s) to replace are no longer live: ${missing.slice(0, 5).join(', ')}`, missing)

  const bySpec = new Map<number, AddedFile[]>()
  for (const a of opts.add) bySpec.set(a.file.specId, [...(bySpec.get(a.file.specId) ?? []), a])
  const added: ManifestFile[] = []
  for (const [specId, group] of bySpec) {
    const entries = group.map((a): ManifestEntry => ({ status: 1, snapshotId, sequenceNumber: a.dataSequenceNumber, fileSequenceNumber: null, dataFile: a.file }))
    added.push(await writeManifest(io, base, specId, entries, { path: newPath(), snapshotId, sequenceNumber }))
  }
  const manifests = [...added, ...rewritten.filter((m): m is ManifestFile => m !== null)]
  const listPath = `${dir}/snap-${snapshotId}-1-${uuid}.avro`
  await io.write(listPath, encodeManifestList(2, { snapshotId, parentSnapshotId: parent['snapshot-id'], sequenceNumber }, manifests), { contentType: 'application/octet-stream' })

  const snapshot: Snapshot = {
    'snapshot-id': snapshotId,
    'parent-snapshot-id': parent['snapshot-id'],
    'sequence-number': sequenceNumber,
    'timestamp-ms': now,
    summary: replaceSummary(parent, opts.add.map((a) => a.file), [...found.values()].map((e) => e.dataFile), opts.summary ?? {}),
    'manifest-list': listPath,
    'schema-id': schema['schema-id'],
  }
  return withNewMainSnapshot(base, snapshot)
}

/** Writes one data manifest of `entries` and returns its manifest-list entry. */
export async function writeManifest(
  io: FileIO,
  md: TableMetadata,
  specId: number,
  entries: ManifestEntry[],
  at: { path: string; snapshotId: bigint; sequenceNumber: bigint },
): Promise<ManifestFile> {
  const spec = specById(md, specId)
  const schema = currentSchema(md)
  const bytes = encodeManifest({ formatVersion: 2, spec, schema, content: 0 }, entries)
  await io.write(at.path, bytes, { contentType: 'application/octet-stream' })
  const rows = (s: number) => entries.filter((e) => e.status === s).reduce((a, e) => a + BigInt(e.dataFile.recordCount), 0n)
  const count = (s: number) => entries.filter((e) => e.status === s).length
  const seqs = entries.map((e) => e.sequenceNumber ?? at.sequenceNumber)
  return {
    manifestPath: at.path,
    manifestLength: bytes.length,
    partitionSpecId: specId,
    content: 0,
    sequenceNumber: at.sequenceNumber,
    minSequenceNumber: seqs.reduce((a, b) => (b < a ? b : a), at.sequenceNumber),
    addedSnapshotId: at.snapshotId,
    addedFilesCount: count(1),
    existingFilesCount: count(0),
    deletedFilesCount: count(2),
    addedRowsCount: rows(1),
    existingRowsCount: rows(0),
    deletedRowsCount: rows(2),
    partitions: summarizePartitions(spec, schema, entries.map((e) => e.dataFile.partition), boundBytes),
    keyMetadata: null,
  }
}

/** Java's SnapshotSummary keys for a rewrite; totals only where the parent tracked them. */
function replaceSummary(parent: Snapshot, added: DataFile[], deleted: DataFile[], extra: Record<string, string>): Snapshot['summary'] {
  const sum = (fs: DataFile[], f: (d: DataFile) => number) => fs.reduce((a, d) => a + BigInt(f(d)), 0n)
  const addedRecords = sum(added, (d) => d.recordCount)
  const deletedRecords = sum(deleted, (d) => d.recordCount)
  const addedSize = sum(added, (d) => d.fileSizeInBytes)
  const removedSize = sum(deleted, (d) => d.fileSizeInBytes)
  const std: Record<string, string> = {
    operation: 'replace',
    'added-data-files': String(added.length),
    'deleted-data-files': String(deleted.length),
    'added-records': addedRecords.toString(),
    'deleted-records': deletedRecords.toString(),
    'added-files-size': addedSize.toString(),
    'removed-files-size': removedSize.toString(),
    'changed-partition-count': String(new Set([...added, ...deleted].map(partitionKey)).size),
  }
  const delta: [string, bigint][] = [
    ['total-records', addedRecords - deletedRecords],
    ['total-files-size', addedSize - removedSize],
    ['total-data-files', BigInt(added.length - deleted.length)],
    ['total-delete-files', 0n],
    ['total-position-deletes', 0n],
    ['total-equality-deletes', 0n],
  ]
  for (const [key, d] of delta) {
    const prev = parent.summary[key]
    if (prev !== undefined && /^-?\d+$/.test(prev)) std[key] = (BigInt(prev) + d).toString()
  }
  return { ...extra, ...std } as Snapshot['summary']
}
