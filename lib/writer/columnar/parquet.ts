/**
 * Parquet encoding: coerced rows → Arrow (typed arrays) → Arrow IPC → parquet-wasm, with the
 * table's codec (`write.parquet.compression-codec`, default zstd) and Iceberg field ids on every
 * column (Arrow field metadata `PARQUET:field_id`, which the Rust writer turns into Parquet
 * field ids), and Parquet's UUID logical type on uuid columns (uuid-footer.ts). Column metrics come from the arrays and the footer (metrics.ts).
 */
import * as arrow from 'apache-arrow'
import { Compression, Encoding, Table as WasmTable, writeParquet, WriterPropertiesBuilder } from 'parquet-wasm/node'
import { ConfigError } from '../../errors.js'
import { isList, isMap, isStruct, type IcebergType, type NestedField, type StructType } from '../../schema/index.js'
import { compileArrowBuilder, type ArrowBuild } from './arrow-build.js'
import { footerLayout } from './footer.js'
import type { Row } from './coerce.js'
import { columnMetrics, metricsModes, tracksBounds, type ColumnMetrics } from './metrics.js'
import { fieldsKey, SharedCompiled } from './shared.js'
import { tableToStream } from './ipc.js'
import { tagUuidColumns, uuidFieldIds } from './uuid-footer.js'

export interface EncodeOptions {
  /** Iceberg codec name: zstd (default), snappy, gzip, lz4, brotli, uncompressed (case-insensitive). */
  compression?: string
  /** Table properties: metrics modes, `write.parquet.row-group-size-bytes`. */
  properties?: Record<string, string>
  /** Most rows per row group (default: the Rust writer's, 1M). */
  rowGroupSize?: number
  /** How top-level integer columns are encoded (FLOE_PARQUET_INTEGER_ENCODING; default plain): see integerColumns. */
  integerEncoding?: IntegerEncoding
  /**
   * Writes the Arrow table as Parquet with these settings (default: parquet-wasm on this thread;
   * lib/writer/workers: on a worker thread). The seam of the two-worker split.
   */
  writer?: (table: arrow.Table, settings: ParquetSettings) => Uint8Array | Promise<Uint8Array>
}

/** parquet-wasm writer settings as plain values (they cross to a worker thread as they are). */
export interface ParquetSettings {
  compression: Compression
  createdBy: string
  /** Top-level columns written with dictionary encoding; every other column is not. */
  dictionary: string[]
  /** Top-level columns written DELTA_BINARY_PACKED (integerColumns); every other column PLAIN or dictionary. */
  delta: string[]
  rowGroupSize?: number
  rowGroupBytes?: number
}

export interface EncodedParquet {
  bytes: Uint8Array
  recordCount: number
  metrics: ColumnMetrics
}

const CODECS: Record<string, Compression> = {
  zstd: Compression.ZSTD,
  snappy: Compression.SNAPPY,
  gzip: Compression.GZIP,
  // Parquet's LZ4 (Hadoop framing) is deprecated; LZ4_RAW is what current writers and readers agree on.
  lz4: Compression.LZ4_RAW,
  lz4_raw: Compression.LZ4_RAW,
  brotli: Compression.BROTLI,
  uncompressed: Compression.UNCOMPRESSED,
  none: Compression.UNCOMPRESSED,
}

export type IntegerEncoding = 'plain' | 'delta'

/** Iceberg types stored as INT32 or INT64 (decimals of precision ≤ 18 are too, but stay PLAIN: not measured or engine-checked). */
const INTEGER_TYPES = new Set(['int', 'date', 'long', 'time', 'timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns'])

/**
 * The top-level columns written DELTA_BINARY_PACKED under `delta`: integers, dates, times and
 * timestamps. Measured on one event of the bench's narrow and wide data (docs/benchmarks.md
 * "Delta-encoded integers"): files 0.61× and 0.67× the bytes of PLAIN; encoding as fast for
 * narrow records, ~35 % slower for 200-column ones. Off by default because Iceberg's own
 * vectorized Parquet reader (Spark's default read path for tables of primitive columns) has the
 * encoding only from Iceberg 1.10 on (its reader class is absent from iceberg-arrow 1.9.2).
 * Nested columns stay PLAIN.
 */
export function integerColumns(schema: StructType, encoding: IntegerEncoding | undefined): string[] {
  return encoding === 'delta' ? schema.fields.filter((f) => typeof f.type === 'string' && INTEGER_TYPES.has(f.type)).map((f) => f.name) : []
}

export function compressionOf(name: string | undefined): Compression {
  const codec = CODECS[(name ?? 'zstd').toLowerCase()]
  if (codec === undefined)
    throw new ConfigError('write.parquet.compression-codec', `unsupported Parquet codec '${name}' (expected one of ${Object.keys(CODECS).join(', ')})`)
  return codec
}

/** What encoding a table's rows needs besides the rows, compiled once per (schema, properties). */
interface Compiled {
  schema: StructType
  modes: ReturnType<typeof metricsModes>
  build: ReturnType<typeof compileArrowBuilder>
  /** integerColumns(schema, 'delta'), chosen once. */
  integers: string[]
}

const NO_PROPERTIES: Record<string, string> = {}
/**
 * Compiled builders by the table's schema and properties objects (a table state keeps both for
 * its life, an evolution makes new ones). Compiling per file made a fresh generated function,
 * Arrow schema and metrics-mode map for every file: ~1,200 of each for a 1,200-file event, the
 * bulk of its garbage (docs/benchmarks.md, "Writer memory").
 */
const compiled = new WeakMap<StructType, WeakMap<Record<string, string>, Compiled>>()

/** The same per (fields, metrics modes) for every table that has them (shared.ts). */
const shared = new SharedCompiled<Compiled>()

function compiledFor(tableSchema: StructType, properties: Record<string, string>): Compiled {
  let byProps = compiled.get(tableSchema)
  if (!byProps) compiled.set(tableSchema, (byProps = new WeakMap()))
  let c = byProps.get(properties)
  if (!c) {
    const schema = writableSchema(tableSchema)
    const modes = metricsModes(schema, properties)
    c = shared.get(fieldsKey(schema.fields, [...modes]), () => ({ schema, modes, build: compileArrowBuilder(schema, { bounds: tracksBounds(modes), dictionary: fewDistinct }), integers: integerColumns(schema, 'delta') }))
    byProps.set(properties, c)
  }
  return c
}

/** Encode rows that already match `schema` (coerce.ts output) as one Parquet file. */
export async function encodeParquet(tableSchema: StructType, rows: Row[], opts: EncodeOptions = {}): Promise<EncodedParquet> {
  return encodeBuilt(tableSchema, compiledFor(tableSchema, opts.properties ?? NO_PROPERTIES).build(rows), opts)
}

/**
 * Encode Arrow data built for `tableSchema` — by compileArrowBuilder from coerced rows, or by a
 * scanner (scan.ts) from records' bytes — as one Parquet file with its metrics.
 */
export async function encodeBuilt(tableSchema: StructType, built: ArrowBuild, opts: EncodeOptions = {}): Promise<EncodedParquet> {
  const properties = opts.properties ?? NO_PROPERTIES
  const { schema, modes, integers } = compiledFor(tableSchema, properties)
  const { table, stats, dictionary } = built
  const compression = opts.compression ?? properties['write.parquet.compression-codec']
  const settings = parquetSettings(table, { ...opts, compression }, dictionary, opts.integerEncoding === 'delta' ? integers : [])
  const written = opts.writer ? await opts.writer(table, settings) : writeWithSettings(table, settings)
  const bytes = tagUuidColumns(written, uuidFieldIds(schema))
  const footer = footerLayout(bytes)
  return { bytes, recordCount: table.numRows, metrics: columnMetrics(stats, footer, modes) }
}

/**
 * The schema without columns Parquet cannot hold: a struct with no fields (at any depth, also as
 * a list element or map value; Parquet has no empty groups). Such a column carries nothing but
 * null-ness; Iceberg readers read a column a file lacks as null (it is optional: evolution and
 * creation never leave an empty struct required), and once the struct gains fields the files
 * written from then on have it.
 */
export function writableSchema(schema: StructType): StructType {
  const fields = writableFields(schema.fields)
  return fields === schema.fields ? schema : { ...schema, fields }
}

/** The fields with a type Parquet can hold (the same array when all can). */
function writableFields(fields: NestedField[]): NestedField[] {
  const out = fields.flatMap((f) => {
    const type = writableType(f.type)
    return type === undefined ? [] : [type === f.type ? f : { ...f, type }]
  })
  return out.length === fields.length && out.every((f, i) => f === fields[i]) ? fields : out
}

function writableType(t: IcebergType): IcebergType | undefined {
  if (isStruct(t)) {
    const fields = writableFields(t.fields)
    return fields.length === 0 ? undefined : fields === t.fields ? t : { ...t, fields }
  }
  if (isList(t)) {
    const element = writableType(t.element)
    return element === undefined ? undefined : element === t.element ? t : { ...t, element }
  }
  if (isMap(t)) {
    const value = writableType(t.value)
    return value === undefined ? undefined : value === t.value ? t : { ...t, value }
  }
  return t
}

/** Values sampled per string column to judge its cardinality. */
export const DICTIONARY_SAMPLE = 2_000
/** A string column keeps dictionary encoding when fewer than this share of sampled values are distinct. */
const DICTIONARY_MAX_DISTINCT = 0.5

/**
 * Whether a string column is worth dictionary encoding: few distinct values among its first
 * DICTIONARY_SAMPLE. The Rust writer dictionary-encodes every column by default; for ids,
 * timestamps and measures that writes a dictionary page plus bit-packed indices zstd cannot
 * shrink, then falls back to PLAIN — measured 1.9× larger files and 1.5–3.8× slower encoding
 * (docs/benchmarks.md).
 */
export function fewDistinct(values: readonly unknown[]): boolean {
  const n = Math.min(values.length, DICTIONARY_SAMPLE)
  if (n === 0) return false
  const seen = new Set<unknown>()
  // Once half the sample is distinct the answer is no: an id-like column is read half way.
  const most = n * DICTIONARY_MAX_DISTINCT
  for (let i = 0; i < n; i++) if (seen.add(values[i]).size >= most) return false
  return true
}

/** Top-level string columns of an Arrow table that fewDistinct chooses. */
function dictionaryColumns(table: arrow.Table): string[] {
  const out: string[] = []
  const n = Math.min(table.numRows, DICTIONARY_SAMPLE)
  for (const field of table.schema.fields) {
    if (!arrow.DataType.isUtf8(field.type) && !arrow.DataType.isLargeUtf8(field.type)) continue
    const column = table.getChild(field.name)
    if (column && fewDistinct(Array.from({ length: n }, (_, i) => column.get(i)))) out.push(field.name)
  }
  return out
}

/** The writer settings for `table` (codec, dictionary columns — default dictionaryColumns' choice —, delta-encoded columns, row-group bounds). */
export function parquetSettings(table: arrow.Table, opts: EncodeOptions = {}, dictionary = dictionaryColumns(table), delta: string[] = []): ParquetSettings {
  const settings: ParquetSettings = { compression: compressionOf(opts.compression), createdBy: 'floe (parquet-wasm)', dictionary, delta }
  if (opts.rowGroupSize !== undefined) settings.rowGroupSize = opts.rowGroupSize
  const rgBytes = Number(opts.properties?.['write.parquet.row-group-size-bytes'])
  if (Number.isInteger(rgBytes) && rgBytes > 0) settings.rowGroupBytes = rgBytes
  return settings
}

/** `table` as one Parquet file with `s` applied (parquet-wasm; the encode worker applies them the same way). */
export function writeWithSettings(table: arrow.Table, s: ParquetSettings): Uint8Array {
  let builder = new WriterPropertiesBuilder().setCompression(s.compression).setCreatedBy(s.createdBy).setDictionaryEnabled(false)
  for (const name of s.dictionary) builder = builder.setColumnDictionaryEnabled(name, true)
  for (const name of s.delta) builder = builder.setColumnEncoding(name, Encoding.DELTA_BINARY_PACKED)
  if (s.rowGroupSize !== undefined) builder = builder.setMaxRowGroupSize(s.rowGroupSize)
  if (s.rowGroupBytes !== undefined) builder = builder.setMaxRowGroupBytes(s.rowGroupBytes)
  // writeParquet takes ownership of (and frees) both wasm objects.
  return writeParquet(WasmTable.fromIPCStream(tableToStream(table)), builder.build())
}
