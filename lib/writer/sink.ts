/**
 * The encode → write stage of one group attempt (register.ts): coerced rows in, Parquet files on
 * S3 out, each in its registration form (lib/control file-list.ts) as soon as it is written.
 *
 * Rows wait in a BufferPool (buffers.ts) bounded by FLOE_MEMORY_BUDGET_MB. What a written file
 * still holds until the registration — its file entry, serialised once: ~7 KB of one-byte string
 * for 200 columns instead of ~60 KB of metric Maps and Uint8Array bounds — is charged to that
 * budget; the rows get the rest. parquet-wasm's linear memory is not: it is a working set of its
 * own (~0.1 MB per zstd column: ~20 MB for a 200-column file however few its rows, never
 * shrinking), part of the ~100 MB the function needs beyond the budget (docs/benchmarks.md,
 * "Writer memory and structure").
 */
import type { EncodedFile } from '../control/index.js'
import { encodeDataFile, type PartitionTuple } from '../iceberg/index.js'
import { BufferPool, partitionKeyOf, type BufferStats, type RowBuffer } from './buffers.js'
import { dataFilePath, writeDataFile, type EncodedChunk } from './files.js'
import { HeapGuard } from './heap.js'
import type { TableSet } from './tables.js'
import type { ArrowBuild } from './columnar/arrow-build.js'
import type { WriterDeps } from './types.js'
// The two-worker split's seam (lib/writer/workers): where a buffer's Parquet bytes are made.
import { writerSplit, type Split } from './workers/index.js'

/** What a registration holds per written file besides its JSON text (keys, lengths, the array slot). */
const FILE_OVERHEAD = 256
/** Rows buffered between two heap checks (heap.ts) while rows come in. */
const ROWS_PER_HEAP_CHECK = 256

/** What one group attempt wrote: every path (to delete on a stale attempt) and the files by table. */
export interface Written {
  paths: string[]
  files: Map<string, EncodedFile[]>
  stats: BufferStats
}

export interface SinkOptions {
  deps: WriterDeps
  tables: TableSet
  writerId: string
  /** The invocation's heap guard (pipeline.ts), so the stages before the sink count toward the same headroom; default: the sink's own. */
  heap?: HeapGuard
  /** Bytes of FLOE_MEMORY_BUDGET_MB the scanner lane holds (scan-lane.ts): the rows get the rest. */
  reserved?: number
}

export class FileSink {
  readonly #opts: SinkOptions
  readonly #pool: BufferPool<Record<string, unknown>>
  readonly #paths: string[] = []
  readonly #files = new Map<string, EncodedFile[]>()
  #seq = 0
  /** FLOE_WRITER_WORKERS: the container's encode threads (lib/writer/workers), undefined when off. */
  readonly #split: Split | undefined
  /** FLOE_GC_HEADROOM_MB: collects the garbage of decoding and of every written file (heap.ts). */
  readonly #heap: HeapGuard
  #rows = 0

  constructor(opts: SinkOptions) {
    this.#opts = opts
    const { config } = opts.deps
    this.#split = writerSplit(config.writerWorkers)
    this.#heap = opts.heap ?? new HeapGuard(config.gcHeadroomBytes)
    this.#pool = new BufferPool({ budgetBytes: config.memoryBudgetBytes - (opts.reserved ?? 0), targetFileBytes: config.targetFileBytes, flush: (b) => this.#write(b) })
  }

  /** Buffer a row of `bytes` (the coercer's estimate); a Promise only when a flush runs. */
  add(table: string, partition: PartitionTuple, row: Record<string, unknown>, bytes: number): Promise<void> | undefined {
    if (++this.#rows % ROWS_PER_HEAP_CHECK === 0) this.#heap.collect()
    return this.#pool.add(table, partition, partitionKeyOf(partition), row, bytes)
  }

  /** The scanner lane's rows of `table` (scan-lane.ts), all of `partition`, as one file of the table, encoded on this thread. */
  async writeBuilt(table: string, built: ArrowBuild, partition: PartitionTuple): Promise<void> {
    const { tables } = this.#opts
    await this.#writeFile({ table, partition, partitionKey: partitionKeyOf(partition), rows: [], bytes: 0 }, tables.encodeBuilt(tables.get(table)!, built))
  }

  /** Write what is still buffered; the paths are known even when this throws (see `paths`). */
  async close(): Promise<Written> {
    await this.#pool.flushAll()
    return { paths: this.#paths, files: this.#files, stats: this.#pool.stats }
  }

  /** Every file written so far (a failed attempt deletes them). */
  get paths(): readonly string[] {
    return this.#paths
  }

  /**
   * Encode and write one buffer; returns the bytes it leaves held (see the module comment).
   * Workers on (FLOE_WRITER_WORKERS): the buffer may be written as one file per worker; every
   * piece's Arrow table is built here while the workers encode the pieces before it.
   */
  async #write(buffer: RowBuffer<Record<string, unknown>>): Promise<number> {
    const split = this.#split
    if (!split) return this.#writeFile(buffer, this.#encode(buffer.table, buffer.rows))
    const release = await split.acquire()
    try {
      const encoding = split.pieces(buffer.rows).map((rows) => this.#encode(buffer.table, rows, split.writer))
      // Keep every encoding observed: one that fails while another is awaited is not unhandled.
      for (const e of encoding) e.catch(() => undefined)
      let held = 0
      for (const chunk of encoding) held += await this.#writeFile(buffer, chunk)
      return held
    } finally {
      release()
    }
  }

  #encode(table: string, rows: Record<string, unknown>[], writer?: Split['writer']): Promise<EncodedChunk> {
    const { tables } = this.#opts
    return tables.encode(tables.get(table)!, rows, writer)
  }

  async #writeFile(buffer: RowBuffer<Record<string, unknown>>, encoding: Promise<EncodedChunk>): Promise<number> {
    const { deps, tables, writerId } = this.#opts
    const state = tables.get(buffer.table)!
    const chunk = await encoding
    const path = dataFilePath(state.metadata, state.partitionPath(buffer.partition), writerId, this.#seq++, deps.config.objectStorageLayout)
    const file = encodeDataFile(await writeDataFile(deps.io, path, chunk, state.spec['spec-id'], buffer.partition))
    this.#paths.push(path)
    let list = this.#files.get(buffer.table)
    if (!list) this.#files.set(buffer.table, (list = []))
    list.push(file)
    this.#heap.collect()
    return file.json.length + FILE_OVERHEAD
  }
}
