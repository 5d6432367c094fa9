/**
 * The encode → write stage of one group attempt (register.ts): coerced rows in, Parquet files on
 * S3 out, each in its registration form (lib/control file-list.ts) as soon as it is written.
 *
 * Rows wait in a BufferPool (buffers.ts) bounded by FLOE_MEMORY_BUDGET_MB. What a written file
 * still holds until the registration — its file entry, serialised once: ~7 KB of one-byte string
 * for 200 columns instead of ~60 KB of metric Maps and Uint8Array bounds — is charged to that
 * budget, and so is the growth of parquet-wasm's linear memory since the invocation began (it
 * grows to ~2.4× the largest Arrow table encoded and never shrinks). The rows get the rest.
 */
import { wasmMemory } from 'parquet-wasm/node'
import { encodeFile, type EncodedFile } from '../control/index.js'
import type { PartitionTuple } from '../iceberg/types.js'
import { BufferPool, partitionKeyOf, type BufferStats, type RowBuffer } from './buffers.js'
import { dataFilePath, writeDataFile } from './files.js'
import type { TableSet } from './tables.js'
import type { WriterDeps } from './types.js'

/** What a registration holds per written file besides its JSON text (keys, lengths, the array slot). */
const FILE_OVERHEAD = 256

/** parquet-wasm's linear memory, in bytes. */
export const wasmBytes = (): number => wasmMemory().buffer.byteLength

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
  /** parquet-wasm's memory when the invocation began: its growth since is charged. */
  wasmBase: number
}

export class FileSink {
  readonly #opts: SinkOptions
  readonly #pool: BufferPool<Record<string, unknown>>
  readonly #paths: string[] = []
  readonly #files = new Map<string, EncodedFile[]>()
  /** The wasm growth charged so far. */
  #wasmCharged = 0
  #seq = 0

  constructor(opts: SinkOptions) {
    this.#opts = opts
    const { config } = opts.deps
    this.#pool = new BufferPool({ budgetBytes: config.memoryBudgetBytes, targetFileBytes: config.targetFileBytes, flush: (b) => this.#write(b) })
  }

  add(table: string, partition: PartitionTuple, row: Record<string, unknown>): Promise<void> {
    return this.#pool.add(table, partition, partitionKeyOf(partition), row)
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

  /** Encode and write one buffer; returns the bytes it leaves held (see the module comment). */
  async #write(buffer: RowBuffer<Record<string, unknown>>): Promise<number> {
    const { deps, tables, writerId, wasmBase } = this.#opts
    const state = tables.get(buffer.table)!
    const chunk = await tables.encode(state, buffer.rows)
    const path = dataFilePath(state.metadata, state.partitionPath(buffer.partition), writerId, this.#seq++, deps.config.objectStorageLayout)
    const file = encodeFile(await writeDataFile(deps.io, path, chunk, state.spec['spec-id'], buffer.partition))
    this.#paths.push(path)
    let list = this.#files.get(buffer.table)
    if (!list) this.#files.set(buffer.table, (list = []))
    list.push(file)
    const growth = Math.max(0, wasmBytes() - wasmBase - this.#wasmCharged)
    this.#wasmCharged += growth
    return file.json.length + FILE_OVERHEAD + growth
  }
}
