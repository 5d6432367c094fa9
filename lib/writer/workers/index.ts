/**
 * The writer's two-worker split (FLOE_WRITER_WORKERS; docs/benchmarks.md "Two workers"). The
 * main thread decodes, routes and coerces, and builds each file's Arrow table; the worker
 * threads turn the Arrow IPC stream into Parquet (parquet-wasm: dictionary, pages, zstd), so
 * encoding overlaps with the main thread's Arrow building and with the other files' encoding.
 * A buffer big enough to be worth it is written as one file per worker (`pieces`): the main
 * thread builds the second piece's Arrow table while a worker encodes the first. Registration
 * stays on the main thread, in the same one fenced transaction.
 */
import type { Table } from 'apache-arrow'
import { tableToStream, type ParquetSettings } from '../columnar/index.js'
import { encodePool, type EncodePool } from './pool.js'

export { EncodePool, encodePool, WORKER_SCRIPT } from './pool.js'

/** Rows a piece needs at least before a buffer is split over the workers (smaller: one file, one worker). */
export const MIN_PIECE_ROWS = 2_000

/** The `writer` of EncodeOptions that encodes on `pool`'s threads. */
export function poolWriter(pool: EncodePool): (table: Table, settings: ParquetSettings) => Promise<Uint8Array> {
  return (table, settings) => pool.encode(tableToStream(table), settings)
}

/** What the sink needs from the split: the pool's writer and how to cut a buffer (undefined: workers off). */
export interface Split {
  writer: (table: Table, settings: ParquetSettings) => Promise<Uint8Array>
  /**
   * Waits until fewer than 2 × workers buffers are being encoded, then holds a place until
   * `release`: the end-of-batch flush runs 8 buffers at once, and without this every one of
   * their Arrow tables and IPC streams (not charged to the budget) would be alive together.
   */
  acquire(): Promise<() => void>
  /** A buffer's rows as the pieces to write as separate files (one piece when too small to split). */
  pieces<Row>(rows: Row[]): Row[][]
}

export function writerSplit(workers: number): Split | undefined {
  const pool = encodePool(workers)
  if (!pool) return undefined
  const waiting: (() => void)[] = []
  let busy = 0
  const release = () => {
    busy--
    waiting.shift()?.()
  }
  return {
    writer: poolWriter(pool),
    async acquire() {
      while (busy >= 2 * pool.size) await new Promise<void>((resolve) => waiting.push(resolve))
      busy++
      return release
    },
    pieces<Row>(rows: Row[]): Row[][] {
      const n = Math.max(1, Math.min(pool.size, Math.floor(rows.length / MIN_PIECE_ROWS)))
      if (n === 1) return [rows]
      const size = Math.ceil(rows.length / n)
      return Array.from({ length: n }, (_, i) => rows.slice(i * size, (i + 1) * size))
    },
  }
}
