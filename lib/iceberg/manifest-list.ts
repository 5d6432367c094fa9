/**
 * Manifest lists (https://iceberg.apache.org/spec/#manifest-lists): read any writer's by field id,
 * write the spec's v1/v2/v3 schema with the header keys Iceberg-Java writes.
 */
import { IcebergError } from '../errors.js'
import type { FileIO } from '../io/index.js'
import { readAvroFile, writeAvroFile } from './avro.js'
import { asBigInt, asBytes, asNumber, get, recordShape } from './avro-fields.js'
import { manifestListSchema } from './manifest-schema.js'
import type { ManifestFile } from './types.js'

type Raw = Record<string, unknown>

/** Decodes manifest-list bytes (any writer). `what` names the file in errors. */
export function decodeManifestList(bytes: Uint8Array, what: string): ManifestFile[] {
  const file = readAvroFile(bytes, what)
  const s = recordShape(file.schema)
  if (!s.name(500, 'manifest_path')) throw new IcebergError(`${what}: not a manifest list (no manifest_path field)`)
  const summaryShape = recordShape((s.schema(507, 'partitions') as Raw | undefined)?.items)
  return (file.records as Raw[]).map((r) => {
    const count = (id: number, ...names: string[]) => asNumber(get(r, s, id, ...names))
    const rows = (id: number, name: string) => asBigInt(get(r, s, id, name))
    const added = count(504, 'added_files_count', 'added_data_files_count')
    const existing = count(505, 'existing_files_count', 'existing_data_files_count')
    const deleted = count(506, 'deleted_files_count', 'deleted_data_files_count')
    const addedRows = rows(512, 'added_rows_count')
    const existingRows = rows(513, 'existing_rows_count')
    const deletedRows = rows(514, 'deleted_rows_count')
    const partitions = get(r, s, 507, 'partitions') as Raw[] | null | undefined
    const sequenceNumber = asBigInt(get(r, s, 515, 'sequence_number')) ?? 0n
    const mf: ManifestFile = {
      manifestPath: get(r, s, 500, 'manifest_path') as string,
      manifestLength: asNumber(get(r, s, 501, 'manifest_length')) ?? 0,
      partitionSpecId: asNumber(get(r, s, 502, 'partition_spec_id')) ?? 0,
      content: (asNumber(get(r, s, 517, 'content')) ?? 0) as 0 | 1,
      sequenceNumber,
      minSequenceNumber: asBigInt(get(r, s, 516, 'min_sequence_number')) ?? sequenceNumber,
      addedSnapshotId: asBigInt(get(r, s, 503, 'added_snapshot_id')) ?? 0n,
      addedFilesCount: added ?? 0,
      existingFilesCount: existing ?? 0,
      deletedFilesCount: deleted ?? 0,
      addedRowsCount: addedRows ?? 0n,
      existingRowsCount: existingRows ?? 0n,
      deletedRowsCount: deletedRows ?? 0n,
      partitions: partitions?.map((p) => ({
        containsNull: get(p, summaryShape, 509, 'contains_null') as boolean,
        containsNan: (get(p, summaryShape, 518, 'contains_nan') as boolean | null | undefined) ?? null,
        lowerBound: asBytes(get(p, summaryShape, 510, 'lower_bound')) ?? null,
        upperBound: asBytes(get(p, summaryShape, 511, 'upper_bound')) ?? null,
      })),
      keyMetadata: asBytes(get(r, s, 519, 'key_metadata')) ?? null,
      firstRowId: asBigInt(get(r, s, 520, 'first_row_id')) ?? null,
    }
    if ([added, existing, deleted, addedRows, existingRows, deletedRows].some((v) => v === undefined)) mf.countsMissing = true
    return mf
  })
}

export async function readManifestList(io: FileIO, path: string): Promise<ManifestFile[]> {
  return decodeManifestList(await io.read(path), `manifest list ${path}`)
}

const buf = (b: Uint8Array | null | undefined) => (b == null ? null : Buffer.from(b))

function toRecord(fv: 1 | 2 | 3, m: ManifestFile): Raw {
  const rec: Raw = {
    manifest_path: m.manifestPath,
    manifest_length: BigInt(m.manifestLength),
    partition_spec_id: m.partitionSpecId,
    added_snapshot_id: m.addedSnapshotId,
    added_rows_count: m.addedRowsCount,
    existing_rows_count: m.existingRowsCount,
    deleted_rows_count: m.deletedRowsCount,
    partitions:
      m.partitions?.map((p) => ({
        contains_null: p.containsNull,
        contains_nan: p.containsNan ?? null,
        lower_bound: buf(p.lowerBound),
        upper_bound: buf(p.upperBound),
      })) ?? null,
    key_metadata: buf(m.keyMetadata),
  }
  if (fv === 1) {
    if (m.content !== 0) throw new IcebergError(`format v1 has no delete manifests (${m.manifestPath})`)
    Object.assign(rec, {
      added_data_files_count: m.addedFilesCount,
      existing_data_files_count: m.existingFilesCount,
      deleted_data_files_count: m.deletedFilesCount,
    })
  } else {
    Object.assign(rec, {
      content: m.content,
      sequence_number: m.sequenceNumber,
      min_sequence_number: m.minSequenceNumber,
      added_files_count: m.addedFilesCount,
      existing_files_count: m.existingFilesCount,
      deleted_files_count: m.deletedFilesCount,
    })
  }
  if (fv >= 3) rec.first_row_id = m.firstRowId ?? null
  return rec
}

export interface ManifestListHeader {
  snapshotId: bigint
  parentSnapshotId?: bigint
  sequenceNumber: bigint
  firstRowId?: bigint
}

/** Encodes a manifest list (deflate) in the given format version's schema. */
export function encodeManifestList(fv: 1 | 2 | 3, header: ManifestListHeader, manifests: ManifestFile[]): Uint8Array {
  const meta: Record<string, string> = {
    'snapshot-id': header.snapshotId.toString(),
    'parent-snapshot-id': header.parentSnapshotId === undefined ? 'null' : header.parentSnapshotId.toString(),
    'format-version': String(fv),
  }
  if (fv >= 2) meta['sequence-number'] = header.sequenceNumber.toString()
  if (fv >= 3 && header.firstRowId !== undefined) meta['first-row-id'] = header.firstRowId.toString()
  return writeAvroFile(manifestListSchema(fv), manifests.map((m) => toRecord(fv, m)), meta)
}
