/**
 * Writing one Parquet file from a stream of row chunks, for compaction, through the writer's own
 * columnar path (lib/writer/columnar: the Arrow builder, its leaf statistics and `columnMetrics`),
 * so a compacted file has the same encoding, field ids and column metrics a writer's file has.
 * The difference: rows arrive in chunks and parquet-wasm's streaming writer
 * (`transformParquetStream`) turns each chunk into row groups as it comes and hands the encoded
 * bytes to a FileSink (S3 multipart upload) part by part, so memory holds one chunk of rows and
 * one part of output, never the file's rows or the whole file. Leaf statistics are merged
 * across chunks (counts add up, min/max compare in Iceberg's order) before metrics are computed.
 */
import * as arrow from 'apache-arrow'
import type { FileMetaData } from 'hyparquet'
import { Encoding, Table as WasmTable, transformParquetStream, WriterPropertiesBuilder } from 'parquet-wasm/node'
import type { StructType } from '../schema/index.js'
import type { FileSink } from '../io/index.js'
import type { CompactionBudget } from './budget.js'
import { columnMetrics, compileArrowBuilder, compressionOf, integerColumns, metricsModes, type IntegerEncoding, type ColumnMetrics, type LeafStats, type Row } from '../writer/index.js'

function compare(a: unknown, b: unknown): number {
  if (typeof a === 'string' && typeof b === 'string') return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(a, b)
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b)
  return (a as number | bigint) < (b as number | bigint) ? -1 : (a as number | bigint) > (b as number | bigint) ? 1 : 0
}

/** Folds one chunk's leaf statistics into the running totals. */
export function mergeStats(into: Map<number, LeafStats>, chunk: Map<number, LeafStats>): void {
  for (const [id, s] of chunk) {
    const t = into.get(id)
    if (!t) {
      into.set(id, { ...s })
      continue
    }
    t.valueCount += s.valueCount
    t.nullCount += s.nullCount
    if (s.nanCount !== undefined) t.nanCount = (t.nanCount ?? 0) + s.nanCount
    if (s.min !== undefined && (t.min === undefined || compare(s.min, t.min) < 0)) t.min = s.min
    if (s.max !== undefined && (t.max === undefined || compare(s.max, t.max) > 0)) t.max = s.max
  }
}

export interface StreamWriteOptions {
  /** Table properties: codec, metrics modes. */
  properties: Record<string, string>
  /** Codec when the table sets none (FLOE_PARQUET_COMPRESSION). */
  compression?: string
  /** Row groups close at about this many bytes (compaction: FLOE_COMPACT_CHUNK_MB). */
  rowGroupBytes?: number
  /** FLOE_PARQUET_INTEGER_ENCODING, as the writer encodes (default plain). */
  integerEncoding?: IntegerEncoding
  /** Where the file's bytes go, part by part as parquet-wasm emits them. */
  sink: FileSink
  budget: CompactionBudget
  /** Reads the written file's footer back (ranged), for the column sizes in its metrics. */
  footer: (size: number) => Promise<FileMetaData>
}

export interface StreamedFile {
  recordCount: number
  size: number
  metrics: ColumnMetrics
}

/** Encodes the rows of `chunks` as one Parquet file into `opts.sink` (not closed on failure: the caller aborts it). */
export async function encodeStreamed(schema: StructType, chunks: AsyncIterable<Row[]>, opts: StreamWriteOptions): Promise<StreamedFile> {
  const { budget, sink } = opts
  const modes = metricsModes(schema, opts.properties)
  const bounds = (id: number) => {
    const kind = modes.get(id)?.kind ?? 'truncate'
    return kind === 'truncate' || kind === 'full'
  }
  const build = compileArrowBuilder(schema, { bounds })
  const stats = new Map<number, LeafStats>()
  let recordCount = 0
  // parquet-wasm ends its output stream quietly when the input stream fails: keep the failure.
  let failed: { error: unknown } | undefined
  async function* batches() {
    try {
      yield* encode()
    } catch (error) {
      failed = { error }
    }
  }
  async function* encode() {
    for await (const rows of chunks) {
      if (rows.length === 0) continue
      const { table, stats: chunkStats } = build(rows)
      mergeStats(stats, chunkStats)
      recordCount += rows.length
      const ipc = arrow.tableToIPC(table, 'stream')
      // The Arrow table and its IPC bytes, until the batch is inside wasm memory.
      budget.set('arrow', ipc.byteLength * 2, 'Arrow copy of a chunk')
      const wasmTable = WasmTable.fromIPCStream(ipc)
      budget.set('arrow', 0)
      budget.observe()
      const wasmBatches = wasmTable.recordBatches()
      // A wasm-bindgen object holds its wasm memory until freed (or finalized, long after): without
      // this, parquet-wasm's memory grew by a chunk per chunk. The batches move into the writer.
      wasmTable.free()
      yield* wasmBatches
    }
  }
  let builder = new WriterPropertiesBuilder()
    .setCompression(compressionOf(opts.properties['write.parquet.compression-codec'] ?? opts.compression))
    .setCreatedBy('floe (parquet-wasm, compaction)')
    .setDictionaryEnabled(false)
    // Row groups close at about a chunk's bytes, so the writer never buffers a whole file's columns.
    .setMaxRowGroupBytes(opts.rowGroupBytes ?? 128 * 1024 * 1024)
  for (const name of integerColumns(schema, opts.integerEncoding)) builder = builder.setColumnEncoding(name, Encoding.DELTA_BINARY_PACKED)
  const props = builder.build()
  try {
    const output = await transformParquetStream(ReadableStream.from(batches()), props)
    for await (const part of output as unknown as AsyncIterable<Uint8Array>) {
      await sink.write(part)
      budget.set('output', sink.buffered, 'output not uploaded yet')
      budget.observe()
    }
  } catch (err) {
    // An input that failed before its first batch leaves parquet-wasm without a schema ("Dyn casting error").
    throw failed ? failed.error : err
  }
  if (failed) throw failed.error
  const size = await sink.close()
  budget.set('output', 0)
  const footer = await opts.footer(size)
  return { recordCount, size, metrics: columnMetrics(stats, footer, modes) }
}
