/**
 * Back pressure's input: how many batches of a table are pending (uncommitted). The committer
 * notes the count after each run (`noteBacklog`); a writer trusts a note fresher than
 * FLOE_BACKLOG_FRESH_SECONDS and counts for itself otherwise. A writer whose tables are known
 * before its records are decoded reads their notes with its checkpoints (checkpoints.ts
 * `readCheckpoints`), one request instead of one more per table.
 */
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb'
import { mapBounded } from '../concurrency.js'
import { wrapDynamoError } from './errors.js'
import { backlogKey, batchPartition, PENDING_PREFIX, shardRange } from './keys.js'
import { pages } from './paging.js'
import type { ControlContext } from './types.js'

/** A backlog note as read ahead (checkpoints.ts): `pending` undefined when there was none or it was stale. */
export interface BacklogRead {
  pending: number | undefined
}

/**
 * Pending (uncommitted) batches of a table, for back pressure: the count the committer last
 * wrote (one small GetItem, docs/scale.md, unless `read` has it already) while it is fresher
 * than FLOE_BACKLOG_FRESH_SECONDS, else a consistent count over every shard that stops once it
 * passes FLOE_MAX_PENDING_BATCHES (so the answer is exact up to the limit and "more than the
 * limit" beyond it).
 */
export async function countPendingBatches(ctx: ControlContext, pipeline: string, table: string, read?: BacklogRead): Promise<number> {
  const noted = read ? read.pending : await readBacklog(ctx, pipeline, table)
  if (noted !== undefined) return noted
  return countPendingExactly(ctx, pipeline, table, ctx.config.maxPendingBatches + 1)
}

async function readBacklog(ctx: ControlContext, pipeline: string, table: string): Promise<number | undefined> {
  let out
  try {
    out = await ctx.doc.send(new GetCommand({ TableName: ctx.table, Key: backlogKey(pipeline, table), ProjectionExpression: 'pending, updatedAt' }))
  } catch (err) {
    throw wrapDynamoError(`reading the backlog of ${table} from ${ctx.table}`, err)
  }
  return out.Item === undefined ? undefined : freshBacklog(ctx, out.Item)
}

/** The count a backlog item holds, if it is fresher than FLOE_BACKLOG_FRESH_SECONDS. */
export function freshBacklog(ctx: ControlContext, item: Record<string, unknown>): number | undefined {
  if (typeof item.pending !== 'number' || typeof item.updatedAt !== 'number') return undefined
  return Date.now() - item.updatedAt <= ctx.config.backlogFreshMs ? item.pending : undefined
}

/** Consistent count of a table's pending batches over every shard, stopping at `limit`. */
export async function countPendingExactly(ctx: ControlContext, pipeline: string, table: string, limit = Number.MAX_SAFE_INTEGER): Promise<number> {
  const counts = await mapBounded(shardRange(ctx.config.pendingShards), ctx.config.shardConcurrency, async (shard) => {
    let count = 0
    const query = (start: Record<string, unknown> | undefined) =>
      new QueryCommand({
        TableName: ctx.table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': batchPartition(pipeline, table, shard), ':p': PENDING_PREFIX },
        Select: 'COUNT',
        ConsistentRead: true,
        ExclusiveStartKey: start,
        Limit: limit === Number.MAX_SAFE_INTEGER ? undefined : limit,
      })
    for await (const page of pages(ctx, `counting pending batches of ${table} in ${ctx.table}`, query)) {
      count += page.Count ?? 0
      if (count >= limit) break
    }
    return count
  })
  return counts.reduce((a, b) => a + b, 0)
}

/**
 * The committer notes how many batches a table still has pending after its run, so writers
 * check back pressure with one small read instead of counting thousands of items per invocation.
 */
export async function noteBacklog(ctx: ControlContext, pipeline: string, table: string, pending: number, nowMs = Date.now()): Promise<void> {
  try {
    await ctx.doc.send(
      new PutCommand({
        TableName: ctx.table,
        Item: { ...backlogKey(pipeline, table), kind: 'backlog', pipeline, table, pending, updatedAt: nowMs, ttl: Math.floor(nowMs / 1000) + ctx.config.batchTtlSeconds },
      }),
    )
  } catch (err) {
    throw wrapDynamoError(`noting the backlog of ${table} in ${ctx.table}`, err)
  }
}
