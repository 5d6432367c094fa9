/**
 * The tables stage of writeBatch (pipeline.ts), before any file is written: back pressure per
 * routed table, then every table loaded, created or evolved once from all of its records in the
 * batch (tables.ts), then the keys decoded for tables whose `_kafka.key` is a string column.
 */
import { mapBounded } from '../concurrency.js'
import { BackpressureError } from '../errors.js'
import { countPendingBatches, type BacklogRead } from '../control/index.js'
import type { Item } from './decode.js'
import type { Sample, TableSet } from './tables.js'
import type { HeapGuard } from './heap.js'
import type { ScanLane } from './scan-lane.js'
import type { WriterDeps } from './types.js'

/**
 * Throws a retryable BackpressureError when a table has more pending batches than
 * FLOE_MAX_PENDING_BATCHES. A table without a fresh backlog note is counted over every shard,
 * FLOE_SHARD_CONCURRENCY queries at a time, and FLOE_BACKPRESSURE_TABLES tables at once: all 50
 * tables of the 1,200-file event at once were 400 requests in flight (400 live ClientRequests,
 * sockets and parsers; docs/benchmarks.md "Writer memory: what the peak is made of"). `read`:
 * notes read with the checkpoints (the lane's tables), not read again.
 */
export async function checkBackpressure(deps: WriterDeps, tables: Set<string>, heap?: HeapGuard, read?: ReadonlyMap<string, BacklogRead>): Promise<void> {
  const { config, control } = deps
  const counts = await mapBounded([...tables], config.backpressureTables, async (t) => {
    const n = await countPendingBatches(control, config.pipeline, t, read?.get(t))
    // Each count is up to a request per shard: their garbage (SDK requests, responses) is collected as it piles up.
    heap?.collect()
    return [t, n] as const
  })
  const over = counts.filter(([, n]) => n > config.maxPendingBatches)
  if (over.length > 0) {
    throw new BackpressureError(
      `back pressure: ${over.map(([t, n]) => `table ${t} has ${n} pending batches`).join(', ')}, more than FLOE_MAX_PENDING_BATCHES=${config.maxPendingBatches}; the committer is behind, the records wait in Kafka`,
    )
  }
}

/**
 * Load, create or evolve every routed table once, from all of its records in the batch. A run of
 * records the scanner lane read (scan-lane.ts) shapes nothing (they fit the table as it is; a
 * table the lane probed is created first, from its first records), and a table that evolves or
 * fails gives its scanned records back to the present path (`settle`). Returns `items` with the
 * runs given back expanded into their records.
 */
export async function prepareTables(tables: TableSet, items: Item[], heap?: HeapGuard, lane?: ScanLane): Promise<Item[]> {
  if (lane) items = await lane.create(items)
  const values = new Map<string, Sample[]>()
  for (const item of items) {
    for (const t of item.tables) {
      let list = values.get(t)
      if (!list) values.set(t, (list = []))
      // The item itself (a routed item has its value): no copy per record and table; evolution keeps its coerced row on it.
      if (item.run === undefined) list.push(item as Sample)
    }
  }
  // A few at a time: each is a catalog round trip or three (load, maybe create, maybe evolve).
  const queue = [...values]
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      await tables.prepare(next[0], next[1])
      heap?.collect()
    }
  }
  await Promise.all(Array.from({ length: Math.min(8, queue.length) }, worker))
  lane?.settle(tables)
  return lane?.expand(items) ?? items
}

/**
 * Keys of topics with a key format, decoded for the records routed to a table whose `_kafka.key`
 * is a string column (a binary column takes the raw bytes: nothing to decode). A key that cannot
 * be decoded makes the record a dead letter (`key: <reason>`); a registry outage throws
 * (retryable), before any file is written.
 */
export async function decodeKeys(deps: WriterDeps, tables: TableSet, items: Item[]): Promise<void> {
  const decoders = deps.decoders
  if (decoders.decodeKey === undefined || decoders.keyFormat === undefined) return
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!
    const { record } = item
    if (item.dead || record.key === null || decoders.keyFormat(record.topic) === undefined) continue
    if (!item.tables.some((t) => tables.wantsKeyText(t))) continue
    const decoded = await decoders.decodeKey(record)
    if (decoded.ok) {
      tables.setKey(record, decoded.value)
    } else {
      item.dead = { record, reason: `key: ${decoded.reason}`, stage: 'decode' }
      item.tables = []
    }
  }
}
