/**
 * Shared Iceberg value types. Metadata keeps the spec's JSON field names; every 64-bit id
 * (snapshot ids, sequence numbers, row ids) is a `bigint`, never a JS number.
 */
import type { Schema } from '../schema/index.js'

export interface PartitionField {
  'source-id': number
  'field-id': number
  name: string
  /** identity, bucket[N], truncate[W], year, month, day, hour, void */
  transform: string
  [extra: string]: unknown
}

export interface PartitionSpec {
  'spec-id': number
  fields: PartitionField[]
}

export interface SortOrder {
  'order-id': number
  fields: { transform: string; 'source-id': number; direction: 'asc' | 'desc'; 'null-order': 'nulls-first' | 'nulls-last' }[]
}

export interface Snapshot {
  'snapshot-id': bigint
  'parent-snapshot-id'?: bigint
  'sequence-number'?: bigint
  'timestamp-ms': number
  'manifest-list'?: string
  /** v1 only: manifests embedded without a manifest list. */
  manifests?: string[]
  summary: Record<string, string> & { operation: string }
  'schema-id'?: number
  'first-row-id'?: bigint
  'added-rows'?: bigint
  [extra: string]: unknown
}

export interface SnapshotRef {
  'snapshot-id': bigint
  type: 'branch' | 'tag'
  [extra: string]: unknown
}

/** Table metadata (v1, v2 and v3 read; v2 written). Unknown keys are kept as they were read. */
export interface TableMetadata {
  'format-version': 1 | 2 | 3
  'table-uuid': string
  location: string
  'last-sequence-number'?: bigint
  'last-updated-ms': number
  'last-column-id': number
  schemas: Schema[]
  'current-schema-id': number
  'partition-specs': PartitionSpec[]
  'default-spec-id': number
  'last-partition-id': number
  properties: Record<string, string>
  'current-snapshot-id'?: bigint | null
  snapshots: Snapshot[]
  'snapshot-log': { 'timestamp-ms': number; 'snapshot-id': bigint }[]
  'metadata-log': { 'timestamp-ms': number; 'metadata-file': string }[]
  'sort-orders': SortOrder[]
  'default-sort-order-id': number
  refs: Record<string, SnapshotRef>
  'next-row-id'?: bigint
  [extra: string]: unknown
}

/** A partition tuple, one value per field of its spec, in spec order (Iceberg partition representation:
 * int for date/day/month/year/hour/bucket/int identity, bigint for long identity, string, boolean,
 * number for float/double, Uint8Array for binary/fixed/uuid, decimal as unscaled bigint, null). */
export type PartitionValue = null | boolean | number | bigint | string | Uint8Array
export type PartitionTuple = PartitionValue[]

/** One data file, as it goes into a manifest entry's `data_file`. Metric maps are keyed by field id. */
export interface DataFile {
  content: 0 | 1 | 2
  filePath: string
  fileFormat: 'PARQUET' | 'AVRO' | 'ORC' | 'PUFFIN'
  specId: number
  partition: PartitionTuple
  recordCount: number
  fileSizeInBytes: number
  columnSizes?: Map<number, number>
  valueCounts?: Map<number, number>
  nullValueCounts?: Map<number, number>
  nanValueCounts?: Map<number, number>
  lowerBounds?: Map<number, Uint8Array>
  upperBounds?: Map<number, Uint8Array>
  splitOffsets?: number[]
  sortOrderId?: number
  equalityIds?: number[]
  /** v3 row lineage */
  firstRowId?: bigint
  referencedDataFile?: string
  contentOffset?: number
  contentSizeInBytes?: number
  keyMetadata?: Uint8Array
}

/** A manifest-list entry. */
export interface ManifestFile {
  manifestPath: string
  manifestLength: number
  partitionSpecId: number
  content: 0 | 1
  sequenceNumber: bigint
  minSequenceNumber: bigint
  addedSnapshotId: bigint
  addedFilesCount: number
  existingFilesCount: number
  deletedFilesCount: number
  addedRowsCount: bigint
  existingRowsCount: bigint
  deletedRowsCount: bigint
  partitions?: { containsNull: boolean; containsNan?: boolean | null; lowerBound?: Uint8Array | null; upperBound?: Uint8Array | null }[]
  keyMetadata?: Uint8Array | null
  firstRowId?: bigint | null
  /** Set when the writer left the (v1-optional) file or row counts out; they then read as 0. */
  countsMissing?: boolean
}

/** A manifest entry: status 0 EXISTING, 1 ADDED, 2 DELETED. */
export interface ManifestEntry {
  status: 0 | 1 | 2
  snapshotId?: bigint | null
  sequenceNumber?: bigint | null
  fileSequenceNumber?: bigint | null
  dataFile: DataFile
}
