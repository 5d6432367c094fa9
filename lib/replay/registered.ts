/**
 * Which offsets of a partition a live writer already registered, from the control table's
 * batch items (pending ones, then the commit journal). A registration's batch range
 * `[firstOffset, nextOffset)` covers every record that registration delivered on the partition
 * (rows, dead letters and drops alike), so an offset inside any range is in the pipeline.
 *
 * Replay batches are left out: their ranges only bound the offsets they replayed.
 * Used for failed batches: a batch the mapping gave up on may still have been registered in
 * part (a registration split into groups, or a zombie invocation whose transaction landed).
 * Reading pending items first and committed ones second sees every batch: one that moves from
 * pending to committed between the two scans is in the second.
 * The journal keeps committed items for FLOE_BATCH_TTL_HOURS: replay refuses records below the
 * checkpoint from failed-batch objects older than that (see failed-batches.ts).
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb'
import { batchPartitionPrefixes, pages, type ControlContext } from '../control/index.js'

export type RegisteredRanges = Map<string, { first: bigint; next: bigint }[]>

export async function registeredRanges(ctx: ControlContext, pipeline: string, partitions: Set<string>): Promise<RegisteredRanges> {
  const out: RegisteredRanges = new Map()
  if (partitions.size === 0) return out
  // Every shard of every table (keys.ts: `batch#…` is shard 0, `bshard#…` the others).
  const [unsharded, sharded] = batchPartitionPrefixes(pipeline)
  for (const prefix of ['p#', 'c#']) {
    const scan = (start: Record<string, unknown> | undefined) =>
      new ScanCommand({
        TableName: ctx.table,
        FilterExpression: '(begins_with(pk, :pk) OR begins_with(pk, :shard)) AND begins_with(sk, :sk)',
        ExpressionAttributeValues: { ':pk': unsharded, ':shard': sharded, ':sk': prefix },
        ProjectionExpression: 'ranges, replayId',
        ConsistentRead: true,
        ExclusiveStartKey: start,
      })
    for await (const page of pages(ctx, `reading registered batch ranges from ${ctx.table}`, scan)) {
      for (const item of page.Items ?? []) {
        // A replay batch's range spans the replayed records' offsets, not every offset in it.
        if (item.replayId) continue
        for (const r of (item.ranges as { topic: string; partition: number; firstOffset: string; nextOffset: string }[] | undefined) ?? []) {
          const k = `${r.topic}-${r.partition}`
          if (!partitions.has(k)) continue
          let list = out.get(k)
          if (!list) out.set(k, (list = []))
          list.push({ first: BigInt(r.firstOffset), next: BigInt(r.nextOffset) })
        }
      }
    }
  }
  return out
}

export function isRegistered(ranges: RegisteredRanges, pkey: string, offset: bigint): boolean {
  return (ranges.get(pkey) ?? []).some((r) => offset >= r.first && offset < r.next)
}
