/**
 * DynamoDB caps one TransactWriteItems request at 4 MB, not just each item at 400 KB. A batch
 * fanned out to many tables with wide schemas (50 tables × 24 files × 200 columns of metrics ≈
 * 85 KB per pending-batch item) passes 4 MB while every item stays under the spill threshold,
 * and the registration then fails every retry (found by the memory benchmark,
 * docs/benchmarks.md). lib/control spills an item's file list to S3 when the item is larger
 * than `config.spillThresholdBytes`; this lowers that threshold for one registration just
 * enough that the largest lists spill and the request fits in TX_PAYLOAD_BUDGET.
 */
import { filesJsonStringBytes } from './file-list.js'
import type { ControlContext, PendingBatchInput } from './types.js'

/** Below DynamoDB's 4 MB: leaves room for the checkpoint updates and DynamoDB's type descriptors. */
export const TX_PAYLOAD_BUDGET = 3_500_000
/** What a spilled item still weighs (keys, ranges, counts, the spill path). */
const ITEM_OVERHEAD = 2_048
const RANGE_BYTES = 256

/** Size of each batch's file list as lib/control stores it (JSON text inside the item, escaped once more on the wire). */
const listSizes = (batches: readonly PendingBatchInput[]): number[] => batches.map((b) => filesJsonStringBytes(b.files))

/** Estimated size of each batch's item as lib/control writes it (an upper bound). */
export function itemSizes(batches: readonly PendingBatchInput[], lists = listSizes(batches)): number[] {
  return batches.map((b, i) => lists[i]! + ITEM_OVERHEAD + RANGE_BYTES * b.ranges.length)
}

/** `control`, or a copy whose spill threshold makes the largest file lists spill so the transaction fits. */
export function withTransactionBudget(control: ControlContext, batches: readonly PendingBatchInput[], budget = TX_PAYLOAD_BUDGET): ControlContext {
  const lists = listSizes(batches)
  const sizes = itemSizes(batches, lists)
  let total = sizes.reduce((n, s) => n + s, 0)
  if (total <= budget) return control
  let threshold = control.config.spillThresholdBytes
  // Largest lists first. An item is larger than its list, so `list - 1` makes it spill for sure
  // (and maybe a few slightly smaller ones too: more spilling than needed, never less).
  for (const i of sizes.map((_, k) => k).sort((a, b) => sizes[b]! - sizes[a]!)) {
    if (total <= budget) break
    if (lists[i]! <= 1_024) break // nothing left worth spilling
    total -= sizes[i]! - ITEM_OVERHEAD
    threshold = Math.min(threshold, lists[i]! - 1)
  }
  return threshold === control.config.spillThresholdBytes ? control : { ...control, config: { ...control.config, spillThresholdBytes: threshold } }
}
