/**
 * Bounded buffers (DESIGN.md invariants 4 and 6). One buffer per (table, Iceberg partition
 * value); all buffers of one invocation share one byte budget. Before a row is added, if the
 * buffered total plus the row would pass the budget, the LARGEST buffer is flushed as a
 * Parquet chunk (repeatedly, until the row fits). A buffer that reaches the target file size is
 * flushed on its own (the file "rolls"). At the end of the batch every buffer is flushed once,
 * so an invocation writes one file per (table, partition value) unless the budget or the target
 * size forced more — never one per Kafka partition.
 *
 * The accounting is exact over estimates: each row is charged `estimateRowBytes(row)`
 * (columnar/sizes.ts; the coercer returns the same figure, so callers pass it) when it is added
 * and released when its buffer is flushed, so `bufferedBytes` is the sum of the charges of
 * the rows held, and `peakBufferedBytes` the highest it has been. The estimate is conservative
 * for V8: strings at 2 bytes per character plus a header, 8-16 bytes per number, and a per-key
 * and per-object overhead (measured V8 objects run ~1.5-3× their JSON size; this charges more).
 *
 * What a flush leaves behind is charged too, for as long as the pool lives: the flush callback
 * returns the bytes it keeps (a written file's registration form until the registration:
 * sink.ts). Rows then get what is
 * left of the budget; once the held bytes alone leave no room for a row, each row is written
 * alone. So `bufferedBytes` (rows + held) never passes the budget.
 */
import type { PartitionTuple } from '../iceberg/index.js'
import { estimateRowBytes } from './columnar/sizes.js'

export { estimateRowBytes }

export type FlushReason = 'budget' | 'target-size' | 'end' | 'oversize-row'

export interface RowBuffer<Row> {
  table: string
  partition: PartitionTuple
  /** Stable text form of the partition tuple (map key, file naming). */
  partitionKey: string
  rows: Row[]
  bytes: number
}

export interface BufferStats {
  bufferedBytes: number
  peakBufferedBytes: number
  rows: number
  flushes: Record<FlushReason, number>
}

export interface BufferPoolOptions<Row> {
  budgetBytes: number
  targetFileBytes: number
  /**
   * Writes the buffer's rows as one Parquet file. The rows are released after it resolves; the
   * bytes it resolves to stay charged (what the written file still holds in memory).
   */
  flush: (buffer: RowBuffer<Row>, reason: FlushReason) => Promise<number | void>
}

export class BufferPool<Row> {
  readonly #buffers = new Map<string, RowBuffer<Row>>()
  readonly #opts: BufferPoolOptions<Row>
  /** The buffer the last row went to, while it is open. */
  #last: RowBuffer<Row> | undefined
  /** Bytes charged by flushes (held until the pool is dropped). */
  #held = 0
  readonly stats: BufferStats = {
    bufferedBytes: 0,
    peakBufferedBytes: 0,
    rows: 0,
    flushes: { budget: 0, 'target-size': 0, end: 0, 'oversize-row': 0 },
  }

  constructor(opts: BufferPoolOptions<Row>) {
    if (!(opts.budgetBytes > 0)) throw new RangeError(`budgetBytes must be positive, got ${opts.budgetBytes}`)
    this.#opts = opts
  }

  /** Buffers currently open (for tests and metrics). */
  get openBuffers(): number {
    return this.#buffers.size
  }

  /**
   * Buffer a row. Synchronous (undefined) when nothing has to be flushed, which is almost every
   * row: no Promise per row; a Promise when a flush (budget, target size, oversize row) runs.
   */
  add(table: string, partition: PartitionTuple, partitionKey: string, row: Row, bytes = estimateRowBytes(row)): Promise<void> | undefined {
    if (this.stats.bufferedBytes + bytes > this.#opts.budgetBytes) return this.#addOverBudget(table, partition, partitionKey, row, bytes)
    const buffer = this.#append(table, partition, partitionKey, row, bytes)
    return buffer.bytes >= this.#opts.targetFileBytes ? this.#flush(buffer, 'target-size') : undefined
  }

  async #addOverBudget(table: string, partition: PartitionTuple, partitionKey: string, row: Row, bytes: number): Promise<void> {
    const { budgetBytes, targetFileBytes } = this.#opts
    while (this.stats.bufferedBytes + bytes > budgetBytes && this.#buffers.size > 0) {
      await this.#flush(this.#largest()!, 'budget')
    }
    if (this.#held + bytes > budgetBytes) {
      // A single row larger than what the budget leaves: written alone, never held in a buffer.
      const alone: RowBuffer<Row> = { table, partition, partitionKey, rows: [row], bytes }
      this.stats.flushes['oversize-row']++
      this.#charge((await this.#opts.flush(alone, 'oversize-row')) ?? 0)
      return
    }
    const buffer = this.#append(table, partition, partitionKey, row, bytes)
    if (buffer.bytes >= targetFileBytes) await this.#flush(buffer, 'target-size')
  }

  #append(table: string, partition: PartitionTuple, partitionKey: string, row: Row, bytes: number): RowBuffer<Row> {
    // Consecutive rows mostly go to the same buffer: no key string nor Map lookup for them.
    let buffer = this.#last
    if (buffer === undefined || buffer.table !== table || buffer.partitionKey !== partitionKey) {
      const key = bufferKey(table, partitionKey)
      buffer = this.#buffers.get(key)
      if (buffer === undefined) {
        buffer = { table, partition, partitionKey, rows: [], bytes: 0 }
        this.#buffers.set(key, buffer)
      }
      this.#last = buffer
    }
    buffer.rows.push(row)
    buffer.bytes += bytes
    this.stats.rows++
    this.stats.bufferedBytes += bytes
    if (this.stats.bufferedBytes > this.stats.peakBufferedBytes) this.stats.peakBufferedBytes = this.stats.bufferedBytes
    return buffer
  }

  /**
   * Flush every open buffer (end of the batch), `concurrency` at a time: nothing is added while
   * this runs, so the buffered bytes only go down, and S3 latency overlaps with encoding.
   */
  async flushAll(concurrency = 8): Promise<void> {
    const queue = [...this.#buffers.values()]
    const worker = async () => {
      for (let b = queue.shift(); b !== undefined; b = queue.shift()) await this.#flush(b, 'end')
    }
    await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, queue.length)) }, worker))
  }

  /** Drop every buffer without writing (the batch failed). */
  discard(): void {
    this.#buffers.clear()
    this.#last = undefined
    this.stats.bufferedBytes = this.#held
    this.stats.rows = 0
  }

  #largest(): RowBuffer<Row> | undefined {
    let best: RowBuffer<Row> | undefined
    for (const b of this.#buffers.values()) if (best === undefined || b.bytes > best.bytes) best = b
    return best
  }

  async #flush(buffer: RowBuffer<Row>, reason: FlushReason): Promise<void> {
    this.stats.flushes[reason]++
    const held = (await this.#opts.flush(buffer, reason)) ?? 0
    this.#buffers.delete(bufferKey(buffer.table, buffer.partitionKey))
    if (this.#last === buffer) this.#last = undefined
    this.stats.bufferedBytes -= buffer.bytes
    this.stats.rows -= buffer.rows.length
    this.#charge(held)
  }

  #charge(bytes: number): void {
    this.#held += bytes
    this.stats.bufferedBytes += bytes
    if (this.stats.bufferedBytes > this.stats.peakBufferedBytes) this.stats.peakBufferedBytes = this.stats.bufferedBytes
  }
}

const bufferKey = (table: string, partitionKey: string) => `${table}\u0000${partitionKey}`

/** Stable text key of a partition tuple (bigint and bytes included). */
export function partitionKeyOf(tuple: PartitionTuple): string {
  // Unpartitioned tables (the common case) need no serialization per row.
  if (tuple.length === 0) return '[]'
  return JSON.stringify(tuple, (_k, v) =>
    typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? `b64:${Buffer.from(v).toString('base64')}` : v,
  )
}
