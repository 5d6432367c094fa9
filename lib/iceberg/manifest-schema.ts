/**
 * The spec's Avro schemas for manifest lists (`manifest_file`) and manifests (`manifest_entry`)
 * with field ids, per format version (https://iceberg.apache.org/spec/#manifests), plus the
 * partition struct (field 102) built from a partition spec and its table schema.
 */
import { IcebergError } from '../errors.js'
import type { NestedField, Schema } from '../schema/index.js'
import { avroName } from './avro.js'
import { transformResultType } from './transforms.js'
import type { PartitionSpec } from './types.js'

type AvroSchema = string | Record<string, unknown> | AvroSchema[]
type FV = 1 | 2 | 3

const opt = (type: AvroSchema): AvroSchema[] => ['null', type]
const field = (id: number, name: string, type: AvroSchema, doc?: string, optional = false) => ({
  name,
  type: optional ? opt(type) : type,
  ...(doc ? { doc } : {}),
  ...(optional ? { default: null } : {}),
  'field-id': id,
})
const map = (id: number, keyId: number, valueId: number, valueType: string, doc: string) =>
  field(
    id,
    '',
    { type: 'array', items: { type: 'record', name: `k${keyId}_v${valueId}`, fields: [field(keyId, 'key', 'int'), field(valueId, 'value', valueType)] }, logicalType: 'map' },
    doc,
    true,
  )

/** Avro schema for one primitive Iceberg type (as the partition struct needs). */
export function avroPrimitive(type: string): AvroSchema {
  switch (type) {
    case 'boolean':
    case 'int':
    case 'long':
    case 'float':
    case 'double':
    case 'string':
      return type
    case 'binary':
      return 'bytes'
    case 'date':
      return { type: 'int', logicalType: 'date' }
    case 'time':
      return { type: 'long', logicalType: 'time-micros' }
    case 'timestamp':
      return { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': false }
    case 'timestamptz':
      return { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': true }
    case 'timestamp_ns':
      return { type: 'long', logicalType: 'timestamp-nanos', 'adjust-to-utc': false }
    case 'timestamptz_ns':
      return { type: 'long', logicalType: 'timestamp-nanos', 'adjust-to-utc': true }
    case 'uuid':
      return { type: 'fixed', name: 'uuid_fixed', size: 16, logicalType: 'uuid' }
  }
  const fixed = /^fixed\[(\d+)\]$/.exec(type)
  if (fixed) return { type: 'fixed', name: `fixed_${fixed[1]}`, size: Number(fixed[1]) }
  const dec = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(type)
  if (dec) {
    const precision = Number(dec[1])
    const scale = Number(dec[2])
    return { type: 'fixed', name: `decimal_${precision}_${scale}`, size: decimalBytes(precision), logicalType: 'decimal', precision, scale }
  }
  throw new IcebergError(`type '${type}' cannot be a partition value in a manifest`)
}

/** Minimum bytes to hold a decimal of this precision (two's complement). */
export function decimalBytes(precision: number): number {
  let bytes = 1
  while (Math.floor(Math.log10(2 ** (8 * bytes - 1) - 1)) < precision) bytes++
  return bytes
}

function findField(schema: Schema, id: number): NestedField | undefined {
  const walk = (fields: NestedField[]): NestedField | undefined => {
    for (const f of fields) {
      if (f.id === id) return f
      if (typeof f.type === 'object' && f.type.type === 'struct') {
        const inner = walk(f.type.fields)
        if (inner) return inner
      }
    }
    return undefined
  }
  return walk(schema.fields)
}

/** Result type of each partition field (from its transform and source column type). */
export function partitionTypes(spec: PartitionSpec, schema: Schema): string[] {
  return spec.fields.map((pf) => {
    const source = findField(schema, pf['source-id'])
    if (!source) {
      // A dropped source column is only legal behind a void transform; its values are all null.
      if (pf.transform === 'void') return 'int'
      throw new IcebergError(`partition field '${pf.name}': source column id ${pf['source-id']} is not in schema ${schema['schema-id']}`)
    }
    if (typeof source.type !== 'string') throw new IcebergError(`partition field '${pf.name}': source column '${source.name}' is not a primitive`)
    return transformResultType(pf.transform, source.type)
  })
}

export function partitionStruct(spec: PartitionSpec, schema: Schema): Record<string, unknown> {
  const types = partitionTypes(spec, schema)
  return {
    type: 'record',
    name: 'r102',
    fields: spec.fields.map((pf, i) => ({ name: avroName(pf.name), type: opt(avroPrimitive(types[i]!)), default: null, 'field-id': pf['field-id'] })),
  }
}

export function manifestEntrySchema(fv: FV, partition: Record<string, unknown>): Record<string, unknown> {
  const m = (id: number, k: number, v: number, vt: string, name: string, doc: string) => ({ ...map(id, k, v, vt, doc), name })
  const dataFile = [
    ...(fv >= 2 ? [field(134, 'content', 'int', 'Contents of the file: 0=data, 1=position deletes, 2=equality deletes')] : []),
    field(100, 'file_path', 'string', 'Location URI with FS scheme'),
    field(101, 'file_format', 'string', 'File format name: avro, orc, or parquet'),
    field(102, 'partition', partition, 'Partition data tuple, schema based on the partition spec'),
    field(103, 'record_count', 'long', 'Number of records in the file'),
    field(104, 'file_size_in_bytes', 'long', 'Total file size in bytes'),
    ...(fv === 1 ? [field(105, 'block_size_in_bytes', 'long', 'Deprecated. Always write a default in v1.')] : []),
    m(108, 117, 118, 'long', 'column_sizes', 'Map of column id to total size on disk'),
    m(109, 119, 120, 'long', 'value_counts', 'Map of column id to total count, including null and NaN'),
    m(110, 121, 122, 'long', 'null_value_counts', 'Map of column id to null value count'),
    m(137, 138, 139, 'long', 'nan_value_counts', 'Map of column id to number of NaN values in the column'),
    m(125, 126, 127, 'bytes', 'lower_bounds', 'Map of column id to lower bound'),
    m(128, 129, 130, 'bytes', 'upper_bounds', 'Map of column id to upper bound'),
    field(131, 'key_metadata', 'bytes', 'Encryption key metadata blob', true),
    field(132, 'split_offsets', { type: 'array', items: 'long', 'element-id': 133 }, 'Splittable offsets', true),
    ...(fv >= 2 ? [field(135, 'equality_ids', { type: 'array', items: 'int', 'element-id': 136 }, 'Equality comparison field IDs', true)] : []),
    field(140, 'sort_order_id', 'int', 'Sort order ID', true),
    ...(fv >= 3
      ? [
          field(142, 'first_row_id', 'long', 'The _row_id for the first row in the data file', true),
          field(143, 'referenced_data_file', 'string', 'Fully qualified location (URI with FS scheme) of a data file that all deletes reference', true),
          field(144, 'content_offset', 'long', 'The offset in the file where the content starts', true),
          field(145, 'content_size_in_bytes', 'long', 'The length of referenced content stored in the file', true),
        ]
      : []),
  ]
  return {
    type: 'record',
    name: 'manifest_entry',
    fields: [
      field(0, 'status', 'int'),
      fv === 1 ? field(1, 'snapshot_id', 'long') : field(1, 'snapshot_id', 'long', undefined, true),
      ...(fv >= 2 ? [field(3, 'sequence_number', 'long', undefined, true), field(4, 'file_sequence_number', 'long', undefined, true)] : []),
      field(2, 'data_file', { type: 'record', name: 'r2', fields: dataFile }),
    ],
  }
}

const fieldSummary = {
  type: 'array',
  items: {
    type: 'record',
    name: 'r508',
    fields: [
      field(509, 'contains_null', 'boolean', 'True if any file has a null partition value'),
      field(518, 'contains_nan', 'boolean', 'True if any file has a nan partition value', true),
      field(510, 'lower_bound', 'bytes', 'Partition lower bound for all files', true),
      field(511, 'upper_bound', 'bytes', 'Partition upper bound for all files', true),
    ],
  },
  'element-id': 508,
}

export function manifestListSchema(fv: FV): Record<string, unknown> {
  const v1 = fv === 1
  const fields = [
    field(500, 'manifest_path', 'string', 'Location URI with FS scheme'),
    field(501, 'manifest_length', 'long', 'Total file size in bytes'),
    field(502, 'partition_spec_id', 'int', 'Spec ID used to write'),
    ...(v1
      ? []
      : [
          field(517, 'content', 'int', 'Contents of the manifest: 0=data, 1=deletes'),
          field(515, 'sequence_number', 'long', 'Sequence number when the manifest was added'),
          field(516, 'min_sequence_number', 'long', 'Lowest sequence number in the manifest'),
        ]),
    field(503, 'added_snapshot_id', 'long', 'Snapshot ID that added the manifest', v1),
    field(504, v1 ? 'added_data_files_count' : 'added_files_count', 'int', 'Added entry count', v1),
    field(505, v1 ? 'existing_data_files_count' : 'existing_files_count', 'int', 'Existing entry count', v1),
    field(506, v1 ? 'deleted_data_files_count' : 'deleted_files_count', 'int', 'Deleted entry count', v1),
    field(512, 'added_rows_count', 'long', 'Added rows count', v1),
    field(513, 'existing_rows_count', 'long', 'Existing rows count', v1),
    field(514, 'deleted_rows_count', 'long', 'Deleted rows count', v1),
    field(507, 'partitions', fieldSummary, 'Summary for each partition', true),
    field(519, 'key_metadata', 'bytes', 'Encryption key metadata blob', true),
    ...(fv >= 3 ? [field(520, 'first_row_id', 'long', 'Starting row ID to assign to new rows in ADDED data files', true)] : []),
  ]
  return { type: 'record', name: 'manifest_file', fields }
}
