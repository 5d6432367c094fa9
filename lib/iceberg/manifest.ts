/**
 * Manifests (https://iceberg.apache.org/spec/#manifests): decode any writer's entries by field id
 * with sequence-number / snapshot-id / first-row-id inheritance, and encode new ones in the spec's
 * schema with Iceberg-Java's header keys.
 */
import { IcebergError } from '../errors.js'
import type { FileIO } from '../io/index.js'
import type { Schema } from '../schema/index.js'
import { readAvroFile, writeAvroFile, avroName } from './avro.js'
import { asBigInt, asBytes, asNumber, get, recordShape, type RecordShape } from './avro-fields.js'
import { stringifyJson } from './json.js'
import { decimalBytes, manifestEntrySchema, partitionStruct, partitionTypes } from './manifest-schema.js'
import { minBytesToBigInt, bigIntToMinBytes } from './conversions.js'
import type { DataFile, ManifestEntry, ManifestFile, PartitionSpec, PartitionTuple, PartitionValue } from './types.js'

type Raw = Record<string, unknown>

function mapOf<V>(v: unknown, value: (x: unknown) => V): Map<number, V> | undefined {
  if (v === undefined || v === null) return undefined
  const out = new Map<number, V>()
  if (Array.isArray(v)) for (const kv of v as Raw[]) out.set(Number(kv.key), value(kv.value))
  else for (const [k, x] of Object.entries(v as Raw)) out.set(Number(k), value(x))
  return out
}

function partitionValue(schema: unknown, v: unknown): PartitionValue {
  if (v === undefined || v === null) return null
  const s = schema as Raw
  if (typeof s === 'object' && s !== null && s.logicalType === 'decimal' && v instanceof Uint8Array) return minBytesToBigInt(v)
  if (v instanceof Uint8Array) return new Uint8Array(v)
  return v as PartitionValue
}

/** The entries of a manifest and its header metadata. */
export interface DecodedManifest {
  meta: Record<string, string>
  entries: ManifestEntry[]
}

/**
 * Decodes manifest bytes. With `manifest` (its manifest-list entry), null snapshot ids, sequence
 * numbers and first row ids are inherited as the spec says. With `spec`, partition values are
 * returned in spec order (matched by partition field id); otherwise in the writer's order.
 */
export function decodeManifest(bytes: Uint8Array, what: string, opts: { manifest?: ManifestFile; spec?: PartitionSpec } = {}): DecodedManifest {
  const file = readAvroFile(bytes, what)
  const es = recordShape(file.schema)
  const ds = recordShape(es.schema(2, 'data_file'))
  if (!ds.name(100, 'file_path')) throw new IcebergError(`${what}: not a manifest (no data_file.file_path field)`)
  const ps = recordShape(ds.schema(102, 'partition'))
  const partitionFields = opts.spec
    ? opts.spec.fields.map((f) => ({ name: ps.name(f['field-id'], f.name, avroName(f.name)), schema: ps.schema(f['field-id'], f.name, avroName(f.name)) }))
    : ps.fields.map((f) => ({ name: f.name as string, schema: recordShape({ fields: [f] }).schema(-1, f.name as string) }))
  const m = opts.manifest
  const fv = Number(file.meta['format-version'] ?? (ds.name(134, 'content') ? 2 : 1))
  let nextRowId = m?.firstRowId ?? undefined
  const entries = (file.records as Raw[]).map((r): ManifestEntry => {
    const d = get(r, es, 2, 'data_file') as Raw
    const status = asNumber(get(r, es, 0, 'status')) as 0 | 1 | 2
    const df = decodeDataFile(d, ds, ps, partitionFields, m?.partitionSpecId ?? Number(file.meta['partition-spec-id'] ?? 0))
    let snapshotId = asBigInt(get(r, es, 1, 'snapshot_id')) ?? null
    let sequenceNumber = asBigInt(get(r, es, 3, 'sequence_number')) ?? null
    let fileSequenceNumber = asBigInt(get(r, es, 4, 'file_sequence_number')) ?? null
    if (m) {
      snapshotId ??= m.addedSnapshotId
      if (fv === 1 || !es.name(3, 'sequence_number')) {
        sequenceNumber ??= 0n
        fileSequenceNumber ??= 0n
      } else if (status === 1) {
        sequenceNumber ??= m.sequenceNumber
        fileSequenceNumber ??= m.sequenceNumber
      }
      if (df.content === 0 && df.firstRowId === undefined && nextRowId !== undefined && nextRowId !== null) {
        df.firstRowId = nextRowId
        nextRowId += BigInt(df.recordCount)
      }
    }
    return { status, snapshotId, sequenceNumber, fileSequenceNumber, dataFile: df }
  })
  return { meta: file.meta, entries }
}

function decodeDataFile(d: Raw, ds: RecordShape, ps: RecordShape, fields: { name?: string; schema: unknown }[], specId: number): DataFile {
  const p = (get(d, ds, 102, 'partition') as Raw | null) ?? {}
  void ps
  const longs = (v: unknown) => mapOf(v, (x) => Number(x))
  const bytes = (v: unknown) => mapOf(v, (x) => new Uint8Array(x as Uint8Array))
  const df: DataFile = {
    content: (asNumber(get(d, ds, 134, 'content')) ?? 0) as 0 | 1 | 2,
    filePath: get(d, ds, 100, 'file_path') as string,
    fileFormat: String(get(d, ds, 101, 'file_format')).toUpperCase() as DataFile['fileFormat'],
    specId,
    partition: fields.map((f) => (f.name === undefined ? null : partitionValue(f.schema, p[f.name]))),
    recordCount: asNumber(get(d, ds, 103, 'record_count')) ?? 0,
    fileSizeInBytes: asNumber(get(d, ds, 104, 'file_size_in_bytes')) ?? 0,
  }
  const opt = <K extends keyof DataFile>(k: K, v: DataFile[K] | undefined) => {
    if (v !== undefined) df[k] = v
  }
  opt('columnSizes', longs(get(d, ds, 108, 'column_sizes')))
  opt('valueCounts', longs(get(d, ds, 109, 'value_counts')))
  opt('nullValueCounts', longs(get(d, ds, 110, 'null_value_counts')))
  opt('nanValueCounts', longs(get(d, ds, 137, 'nan_value_counts')))
  opt('lowerBounds', bytes(get(d, ds, 125, 'lower_bounds')))
  opt('upperBounds', bytes(get(d, ds, 128, 'upper_bounds')))
  opt('keyMetadata', asBytes(get(d, ds, 131, 'key_metadata')))
  opt('splitOffsets', (get(d, ds, 132, 'split_offsets') as bigint[] | null | undefined)?.map(Number))
  opt('equalityIds', (get(d, ds, 135, 'equality_ids') as number[] | null | undefined) ?? undefined)
  opt('sortOrderId', asNumber(get(d, ds, 140, 'sort_order_id')))
  opt('firstRowId', asBigInt(get(d, ds, 142, 'first_row_id')))
  opt('referencedDataFile', (get(d, ds, 143, 'referenced_data_file') as string | null | undefined) ?? undefined)
  opt('contentOffset', asNumber(get(d, ds, 144, 'content_offset')))
  opt('contentSizeInBytes', asNumber(get(d, ds, 145, 'content_size_in_bytes')))
  return df
}

/** Reads a manifest's live and deleted entries (see decodeManifest for inheritance). */
export async function readManifest(io: FileIO, path: string, opts: { manifest?: ManifestFile; spec?: PartitionSpec } = {}): Promise<ManifestEntry[]> {
  return decodeManifest(await io.read(path), `manifest ${path}`, opts).entries
}

// ---- writing ----

function avroPartitionValue(type: string, v: PartitionValue): unknown {
  if (v === null) return null
  if (type === 'long' || type.startsWith('time')) return BigInt(v as number | bigint)
  if (type.startsWith('decimal')) {
    const size = decimalBytes(Number(/^decimal\(\s*(\d+)/.exec(type)?.[1] ?? 38))
    const min = bigIntToMinBytes(BigInt(v as bigint))
    const out = Buffer.alloc(size, (v as bigint) < 0n ? 0xff : 0)
    Buffer.from(min).copy(out, size - min.length)
    return out
  }
  if (v instanceof Uint8Array) return Buffer.from(v)
  return v
}

const pairs = <V>(m: Map<number, V> | undefined, f: (v: V) => unknown) => (m ? [...m].map(([key, value]) => ({ key, value: f(value) })) : null)

function entryRecord(fv: 1 | 2 | 3, spec: PartitionSpec, types: string[], e: ManifestEntry): Raw {
  const f = e.dataFile
  if (f.partition.length !== spec.fields.length)
    throw new IcebergError(`${f.filePath}: partition tuple has ${f.partition.length} values, spec ${spec['spec-id']} has ${spec.fields.length} fields`)
  const partition: Raw = {}
  spec.fields.forEach((pf, i) => (partition[avroName(pf.name)] = avroPartitionValue(types[i]!, f.partition[i]!)))
  const data: Raw = {
    file_path: f.filePath,
    file_format: f.fileFormat,
    partition,
    record_count: BigInt(f.recordCount),
    file_size_in_bytes: BigInt(f.fileSizeInBytes),
    column_sizes: pairs(f.columnSizes, BigInt),
    value_counts: pairs(f.valueCounts, BigInt),
    null_value_counts: pairs(f.nullValueCounts, BigInt),
    nan_value_counts: pairs(f.nanValueCounts, BigInt),
    lower_bounds: pairs(f.lowerBounds, (b) => Buffer.from(b)),
    upper_bounds: pairs(f.upperBounds, (b) => Buffer.from(b)),
    key_metadata: f.keyMetadata ? Buffer.from(f.keyMetadata) : null,
    split_offsets: f.splitOffsets?.map(BigInt) ?? null,
    sort_order_id: f.sortOrderId ?? null,
  }
  if (fv === 1) {
    if (f.content !== 0) throw new IcebergError(`format v1 has no delete files (${f.filePath})`)
    data.block_size_in_bytes = 64n * 1024n * 1024n
  } else {
    data.content = f.content
    data.equality_ids = f.equalityIds ?? null
  }
  if (fv >= 3) {
    data.first_row_id = f.firstRowId ?? null
    data.referenced_data_file = f.referencedDataFile ?? null
    data.content_offset = f.contentOffset === undefined ? null : BigInt(f.contentOffset)
    data.content_size_in_bytes = f.contentSizeInBytes === undefined ? null : BigInt(f.contentSizeInBytes)
  }
  const rec: Raw = { status: e.status, snapshot_id: e.snapshotId ?? null, data_file: data }
  if (fv === 1 && rec.snapshot_id === null) throw new IcebergError('format v1 manifests need a snapshot id on every entry')
  if (fv >= 2) Object.assign(rec, { sequence_number: e.sequenceNumber ?? null, file_sequence_number: e.fileSequenceNumber ?? null })
  return rec
}

export interface ManifestWriteOptions {
  formatVersion: 1 | 2 | 3
  spec: PartitionSpec
  schema: Schema
  content: 0 | 1
}

/** Encodes a manifest (deflate) with the header keys Iceberg-Java writes. */
export function encodeManifest(opts: ManifestWriteOptions, entries: ManifestEntry[]): Uint8Array {
  const { formatVersion: fv, spec, schema } = opts
  const types = partitionTypes(spec, schema)
  const avroSchema = manifestEntrySchema(fv, partitionStruct(spec, schema))
  const meta: Record<string, string> = {
    schema: stringifyJson(schema),
    'schema-id': String(schema['schema-id']),
    'partition-spec': stringifyJson(spec.fields),
    'partition-spec-id': String(spec['spec-id']),
    'format-version': String(fv),
  }
  if (fv >= 2) meta.content = opts.content === 1 ? 'deletes' : 'data'
  const records = entries.map((e) => entryRecord(fv, spec, types, e))
  try {
    return writeAvroFile(avroSchema, records, meta)
  } catch (err) {
    const i = Number(/record (\d+)/.exec((err as Error).message)?.[1])
    const what = Number.isInteger(i) ? ` for ${entries[i]?.dataFile.filePath} (partition types ${types.join(', ')})` : ''
    throw new IcebergError(`cannot write manifest${what}: ${(err as Error).message}`, { cause: err })
  }
}

/** Partition field summaries (manifest list field 507) for a set of tuples. */
export function summarizePartitions(spec: PartitionSpec, schema: Schema, tuples: PartitionTuple[], toBytes: (type: string, v: PartitionValue) => Uint8Array | null) {
  const types = partitionTypes(spec, schema)
  return spec.fields.map((_, i) => {
    const type = types[i]!
    let containsNull = false
    let containsNan = false
    let lo: PartitionValue = null
    let hi: PartitionValue = null
    for (const t of tuples) {
      const v = t[i] ?? null
      if (v === null) containsNull = true
      else if (typeof v === 'number' && Number.isNaN(v)) containsNan = true
      else {
        if (lo === null || compare(v, lo) < 0) lo = v
        if (hi === null || compare(v, hi) > 0) hi = v
      }
    }
    const isFloat = type === 'float' || type === 'double'
    return {
      containsNull,
      containsNan: isFloat ? containsNan : false,
      lowerBound: lo === null ? null : toBytes(type, lo),
      upperBound: hi === null ? null : toBytes(type, hi),
    }
  })
}

function compare(a: Exclude<PartitionValue, null>, b: Exclude<PartitionValue, null>): number {
  if (typeof a === 'string' && typeof b === 'string') return Buffer.compare(Buffer.from(a), Buffer.from(b))
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(a, b)
  if (typeof a === 'boolean') return Number(a) - Number(b)
  return a < b ? -1 : a > b ? 1 : 0
}
