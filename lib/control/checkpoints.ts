/**
 * Offset checkpoints: per (pipeline, topic, partition), the next offset a writer expects
 * (DESIGN.md invariant 2). Written only by registerBatches, inside its fenced transaction.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb'
import { batchGetAll } from './batch-get.js'
import { pages } from './paging.js'
import { partitionKey } from '../kafka/index.js'
import { backlogKey, checkpointKey, checkpointPrefix } from './keys.js'
import { freshBacklog, type BacklogRead } from './backlog.js'
import type { ControlContext } from './types.js'

/** BatchGetItem takes at most 100 keys. */
const MAX_BATCH_GET = 100

/**
 * Read the checkpoints of the given partitions with consistent reads. The map has one entry per
 * partition (`"topic-partition"`), `undefined` where no writer has registered anything yet.
 */
export async function readCheckpoints(
  ctx: ControlContext,
  pipeline: string,
  partitions: { topic: string; partition: number }[],
): Promise<Map<string, bigint | undefined>> {
  return (await readCheckpointsWithBacklog(ctx, pipeline, partitions, [])).checkpoints
}

/**
 * The checkpoints (as readCheckpoints) and, in the same BatchGetItem requests, the backlog notes
 * of `tables` (backlog.ts: `countPendingBatches`' `read`, one entry per table): a writer whose
 * tables are known up front makes one request where it made one per table more.
 */
export async function readCheckpointsWithBacklog(
  ctx: ControlContext,
  pipeline: string,
  partitions: { topic: string; partition: number }[],
  tables: readonly string[],
): Promise<{ checkpoints: Map<string, bigint | undefined>; backlog: Map<string, BacklogRead> }> {
  const checkpoints = new Map<string, bigint | undefined>()
  for (const p of partitions) checkpoints.set(partitionKey(p.topic, p.partition), undefined)
  const names = [...new Set(tables)]
  const backlog = new Map<string, BacklogRead>(names.map((t) => [t, { pending: undefined }]))
  const tableOf = new Map(names.map((t) => [backlogKey(pipeline, t).pk, t]))
  const keys = [...new Map(partitions.map((p) => [partitionKey(p.topic, p.partition), checkpointKey(pipeline, p.topic, p.partition)])).values(), ...names.map((t) => backlogKey(pipeline, t))]
  for (let i = 0; i < keys.length; i += MAX_BATCH_GET) {
    await batchGetAll(ctx, keys.slice(i, i + MAX_BATCH_GET), { what: 'checkpoint keys', reading: 'reading checkpoints' }, (item) => {
      const table = tableOf.get(item.pk as string)
      if (table !== undefined) backlog.set(table, { pending: freshBacklog(ctx, item) })
      else checkpoints.set(partitionKey(item.topic as string, item.partition as number), BigInt(item.next as string))
    })
  }
  return { checkpoints, backlog }
}

export interface CheckpointItem {
  topic: string
  partition: number
  next: bigint
  writerId?: string
  updatedAt?: number
}

/** Every checkpoint of a pipeline (a Scan: for `floe status` and tests, not the hot path). */
export async function listCheckpoints(ctx: ControlContext, pipeline: string): Promise<CheckpointItem[]> {
  const out: CheckpointItem[] = []
  const scan = (start: Record<string, unknown> | undefined) =>
    new ScanCommand({
      TableName: ctx.table,
      FilterExpression: 'begins_with(pk, :p) AND sk = :sk',
      ExpressionAttributeValues: { ':p': checkpointPrefix(pipeline), ':sk': 'ckpt' },
      ConsistentRead: true,
      ExclusiveStartKey: start,
    })
  for await (const page of pages(ctx, `listing checkpoints in ${ctx.table}`, scan)) {
    for (const item of page.Items ?? []) {
      out.push({
        topic: item.topic as string,
        partition: item.partition as number,
        next: BigInt(item.next as string),
        writerId: item.writerId as string | undefined,
        updatedAt: item.updatedAt as number | undefined,
      })
    }
  }
  return out.sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition)
}
