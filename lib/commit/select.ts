/**
 * Which pending batches one commit takes. Per Kafka partition the batches must go in offset
 * order with no gap — a later batch committed before an earlier one would raise the summary
 * offset past the earlier one, which would then look covered and be dropped.
 */
import { partitionKey } from '../kafka/index.js'
import type { PendingBatch } from '../control/index.js'

export interface SelectLimits {
  maxBatches: number
  maxBytes: number
}

/**
 * A prefix, per partition, of the pending batches: a batch is taken only once every batch before
 * it on each of its partitions is taken. Stops at the limits (but always takes at least one).
 * With `eligible`, only those batch ids may be taken; another one blocks the batches after it on
 * its partitions (see commitTable: batches read in two passes).
 */
export function selectBatches(pending: PendingBatch[], limits: SelectLimits, eligible?: ReadonlySet<string>): PendingBatch[] {
  const queues = new Map<string, PendingBatch[]>()
  for (const b of pending) {
    // A replayed batch is below every live batch's offsets and fenced on its own: no queue.
    if (b.replayId !== undefined) continue
    for (const r of b.ranges) {
      const k = partitionKey(r.topic, r.partition)
      const q = queues.get(k) ?? []
      q.push(b)
      queues.set(k, q)
    }
  }
  for (const [k, q] of queues) q.sort((a, b) => cmp(firstOffsetOn(a, k), firstOffsetOn(b, k)))
  const position = new Map<string, number>([...queues.keys()].map((k) => [k, 0]))
  let remaining = [...pending].sort((a, b) => a.createdAt - b.createdAt || (a.batchId < b.batchId ? -1 : 1))
  const selected: PendingBatch[] = []
  let bytes = 0
  // Each pass takes every batch that is ready, in order, and keeps the rest for the next pass
  // (no splicing: at tens of thousands pending that was quadratic).
  for (let progress = true; progress && remaining.length > 0; ) {
    progress = false
    const left: PendingBatch[] = []
    for (const b of remaining) {
      const ready =
        (eligible === undefined || eligible.has(b.batchId)) &&
        (b.replayId !== undefined ||
          b.ranges.every((r) => {
            const k = partitionKey(r.topic, r.partition)
            return queues.get(k)![position.get(k)!] === b
          }))
      if (!ready) {
        left.push(b)
        continue
      }
      if (selected.length >= limits.maxBatches || (selected.length > 0 && bytes + b.bytes > limits.maxBytes)) return selected
      selected.push(b)
      bytes += b.bytes
      progress = true
      if (b.replayId !== undefined) continue
      for (const r of b.ranges) {
        const k = partitionKey(r.topic, r.partition)
        position.set(k, position.get(k)! + 1)
      }
    }
    remaining = left
  }
  return selected
}

function firstOffsetOn(b: PendingBatch, k: string): bigint {
  return b.ranges.find((r) => partitionKey(r.topic, r.partition) === k)!.firstOffset
}

const cmp = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0)
