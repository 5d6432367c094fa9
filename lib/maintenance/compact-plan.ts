/**
 * Compaction planning: which data files of a table's current snapshot to rewrite together.
 *
 * - Files are grouped by partition spec and partition value; a partition with any live delete
 *   file is left alone (rewriting would have to apply the deletes, and a position delete names
 *   the old file's path).
 * - A file is small below 75 % of the target size (Iceberg Java's rewrite default
 *   `min-file-size-bytes` ratio). The target is the table's `write.target-file-size-bytes`,
 *   else FLOE_TARGET_FILE_MB.
 * - Small files of a partition are bin-packed first-fit-decreasing into groups of at most the
 *   target size; a group of one file gains nothing and is skipped. Each group becomes one file.
 * - Groups are taken oldest data first until FLOE_COMPACT_MAX_MB of input is planned: one
 *   maintenance run does that much per table and the next run continues.
 */
import type { DataFile, ManifestEntry, TableMetadata } from '../iceberg/index.js'

export const SMALL_RATIO = 0.75
export const TARGET_FILE_SIZE = 'write.target-file-size-bytes'

export interface CompactionGroup {
  /** spec id + partition value. */
  key: string
  inputs: ManifestEntry[]
  inputBytes: number
  /** Max data sequence number of the inputs: the rewritten file's (see lib/iceberg/replace.ts). */
  dataSequenceNumber: bigint
}

export interface TableHealth {
  dataFiles: number
  dataBytes: number
  smallFiles: number
  smallBytes: number
  /** Share of data files below the small threshold (0 when the table has none). */
  smallFileRatio: number
  partitions: number
}

export const partitionKeyOf = (f: DataFile): string =>
  `${f.specId}:${JSON.stringify(f.partition, (_, v) => (typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v))}`

/** The table's target file size in bytes. */
export function targetFileBytes(md: TableMetadata, fallback: number): number {
  const raw = md.properties[TARGET_FILE_SIZE]
  const n = raw === undefined ? NaN : Number(raw)
  return Number.isSafeInteger(n) && n > 0 ? n : fallback
}

export function tableHealth(entries: ManifestEntry[], target: number): TableHealth {
  const data = entries.filter((e) => e.dataFile.content === 0)
  const small = data.filter((e) => e.dataFile.fileSizeInBytes < target * SMALL_RATIO)
  const bytes = (es: ManifestEntry[]) => es.reduce((a, e) => a + e.dataFile.fileSizeInBytes, 0)
  return {
    dataFiles: data.length,
    dataBytes: bytes(data),
    smallFiles: small.length,
    smallBytes: bytes(small),
    smallFileRatio: data.length === 0 ? 0 : small.length / data.length,
    partitions: new Set(data.map((e) => partitionKeyOf(e.dataFile))).size,
  }
}

/** Plans groups from the live entries (data and delete files) of the current snapshot. */
export function planCompaction(entries: ManifestEntry[], target: number, maxInputBytes: number): CompactionGroup[] {
  const withDeletes = new Set(entries.filter((e) => e.dataFile.content !== 0).map((e) => partitionKeyOf(e.dataFile)))
  const byPartition = new Map<string, ManifestEntry[]>()
  for (const e of entries) {
    if (e.dataFile.content !== 0 || e.dataFile.fileSizeInBytes >= target * SMALL_RATIO) continue
    const key = partitionKeyOf(e.dataFile)
    if (withDeletes.has(key)) continue
    byPartition.set(key, [...(byPartition.get(key) ?? []), e])
  }
  const groups: CompactionGroup[] = []
  for (const [key, files] of byPartition) {
    if (files.length < 2) continue
    const bins: { inputs: ManifestEntry[]; bytes: number }[] = []
    for (const e of [...files].sort((a, b) => b.dataFile.fileSizeInBytes - a.dataFile.fileSizeInBytes)) {
      const size = e.dataFile.fileSizeInBytes
      const bin = bins.find((b) => b.bytes + size <= target)
      if (bin) {
        bin.inputs.push(e)
        bin.bytes += size
      } else bins.push({ inputs: [e], bytes: size })
    }
    for (const bin of bins) {
      if (bin.inputs.length < 2) continue
      const seq = bin.inputs.reduce((a, e) => (e.sequenceNumber! > a ? e.sequenceNumber! : a), 0n)
      groups.push({ key, inputs: bin.inputs, inputBytes: bin.bytes, dataSequenceNumber: seq })
    }
  }
  // Oldest data first (lowest max sequence number): partitions that stopped receiving data settle first.
  groups.sort((a, b) => (a.dataSequenceNumber < b.dataSequenceNumber ? -1 : a.dataSequenceNumber > b.dataSequenceNumber ? 1 : 0))
  const out: CompactionGroup[] = []
  let planned = 0
  for (const g of groups) {
    if (out.length > 0 && planned + g.inputBytes > maxInputBytes) break
    out.push(g)
    planned += g.inputBytes
  }
  return out
}
