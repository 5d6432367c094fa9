/**
 * Committer leases, one per (pipeline, table), with a fencing epoch that grows on every
 * acquisition (DESIGN.md invariant 3: only the holder of the current epoch changes batch status).
 * A lease item is never deleted, so its epoch never goes back; every fenced write checks both
 * the epoch and the owner id.
 */
import { randomUUID } from 'node:crypto'
import { GetCommand, ScanCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb'
import { mapBounded } from '../concurrency.js'
import { FencedError, ThrottledError } from '../errors.js'
import { logger } from '../log.js'
import { isConditionFailed, markPolicy, retry } from '../retry/index.js'
import { cancellationCodes, wrapDynamoError } from './errors.js'
import { pages } from './paging.js'
import { committedBatchKey, fenceKey, leaseKey, pendingBatchKey } from './keys.js'
import type { ControlContext, PendingBatch } from './types.js'

export interface Lease {
  pipeline: string
  table: string
  owner: string
  epoch: number
  /** Fresh per acquisition; the fence copies carry it (FENCE_COPIES). */
  token: string
  /** Epoch ms after which another committer may take the lease. */
  expiresAt: number
}

const isConditionFailure = isConditionFailed

/**
 * Copies of the lease's fencing token (`fence#<k>` items beside the lease item), rewritten by
 * every acquisition in the same transaction that takes the lease. Marking thousands of batches
 * one fenced transaction after another is the committer's slowest step (docs/scale.md), and
 * transactions that all name the lease item cannot run at once: DynamoDB cancels a transaction
 * on an item another transaction is using (TransactionConflict), a ConditionCheck included. Each
 * parallel mark transaction checks its own copy instead: a copy holds the token of the latest
 * acquisition, so a taken-over holder fails on every copy exactly as it fails on the lease item.
 * A protocol constant, not a setting: an acquirer must overwrite every copy any holder may check,
 * so it may grow in a later version but never shrink.
 */
export const FENCE_COPIES = 16

/** Take the table's lease if it is free, released or expired; `undefined` when someone holds it. */
export async function acquireLease(
  ctx: ControlContext,
  pipeline: string,
  table: string,
  opts: { owner?: string; nowMs?: number } = {},
): Promise<Lease | undefined> {
  const owner = opts.owner ?? randomUUID()
  const token = randomUUID()
  const now = opts.nowMs ?? Date.now()
  const expiresAt = now + ctx.config.leaseTtlMs
  const take = {
    Update: {
      TableName: ctx.table,
      Key: leaseKey(pipeline, table),
      UpdateExpression: 'SET #owner = :owner, #token = :token, expiresAt = :exp, released = :false, acquiredAt = :now, kind = :kind, #table = :table ADD epoch :one',
      ConditionExpression: 'attribute_not_exists(pk) OR released = :true OR expiresAt < :now',
      ExpressionAttributeNames: { '#owner': 'owner', '#token': 'token', '#table': 'table' },
      ExpressionAttributeValues: { ':owner': owner, ':token': token, ':exp': expiresAt, ':false': false, ':true': true, ':now': now, ':one': 1, ':kind': 'lease', ':table': table },
    },
  }
  const copies = Array.from({ length: FENCE_COPIES }, (_, k) => ({
    Put: { TableName: ctx.table, Item: { ...fenceKey(pipeline, table, k), kind: 'fence', table, owner, token, acquiredAt: now } },
  }))
  try {
    // The token makes the SDK's own retry after a lost response succeed instead of finding the lease held.
    await ctx.doc.send(new TransactWriteCommand({ TransactItems: [take, ...copies] as never, ClientRequestToken: token }))
  } catch (err) {
    const codes = cancellationCodes(err)
    if (codes === undefined) throw wrapDynamoError(`acquiring the commit lease of ${table}`, err)
    // Held, or another acquirer (or a holder's parallel mark) is on these items right now: busy.
    if (codes[0] === 'ConditionalCheckFailed' || codes.includes('TransactionConflict')) return undefined
    throw new ThrottledError(`acquiring the commit lease of ${table}: transaction cancelled (${codes.join(', ')})`, { cause: err })
  }
  let item
  try {
    item = (await ctx.doc.send(new GetCommand({ TableName: ctx.table, Key: leaseKey(pipeline, table), ConsistentRead: true, ProjectionExpression: 'epoch, #token', ExpressionAttributeNames: { '#token': 'token' } }))).Item
  } catch (err) {
    throw wrapDynamoError(`reading the commit lease of ${table}`, err)
  }
  // Taken over between the two calls (only with a TTL shorter than a round trip): not ours.
  if (item?.token !== token) return undefined
  return { pipeline, table, owner, token, epoch: item.epoch as number, expiresAt }
}

const FENCE = 'epoch = :epoch AND #owner = :owner AND released = :false'
const fenceValues = (lease: Lease) => ({ ':epoch': lease.epoch, ':owner': lease.owner, ':false': false })

/** Extend the lease; FencedError when it is no longer ours (expired and taken over). */
export async function renewLease(ctx: ControlContext, lease: Lease, nowMs = Date.now()): Promise<Lease> {
  const expiresAt = nowMs + ctx.config.leaseTtlMs
  try {
    await ctx.doc.send(
      new UpdateCommand({
        TableName: ctx.table,
        Key: leaseKey(lease.pipeline, lease.table),
        UpdateExpression: 'SET expiresAt = :exp',
        ConditionExpression: FENCE,
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ...fenceValues(lease), ':exp': expiresAt },
      }),
    )
    return { ...lease, expiresAt }
  } catch (err) {
    if (isConditionFailure(err)) throw new FencedError(`table ${lease.table}: commit lease epoch ${lease.epoch} of ${lease.owner} was taken over`)
    throw wrapDynamoError(`renewing the commit lease of ${lease.table}`, err)
  }
}

/** Give the lease back (best effort: a lease we lost is not ours to release). */
export async function releaseLease(ctx: ControlContext, lease: Lease): Promise<void> {
  try {
    await ctx.doc.send(
      new UpdateCommand({
        TableName: ctx.table,
        Key: leaseKey(lease.pipeline, lease.table),
        UpdateExpression: 'SET released = :true, releasedAt = :now',
        ConditionExpression: FENCE,
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ...fenceValues(lease), ':true': true, ':now': Date.now() },
      }),
    )
  } catch (err) {
    if (isConditionFailure(err)) {
      logger.warn('commit lease was taken over before release', { table: lease.table, epoch: lease.epoch })
      return
    }
    throw wrapDynamoError(`releasing the commit lease of ${lease.table}`, err)
  }
}

export interface CommittedMark {
  batch: PendingBatch
  /** The snapshot that holds (or already held) the batch's files. */
  snapshotId: bigint
  commitId: string
}

/** 1 lease check + 2 items per batch (delete pending, put committed) ≤ 100 per transaction. */
export const BATCHES_PER_TRANSACTION = 49

/**
 * Move batches from pending to committed, every transaction conditioned on the lease still
 * being ours. Throws FencedError when the lease was taken over (the new holder will see the
 * batches covered by the snapshot summary and mark them itself). One transaction checks the
 * lease item; more run in up to FLOE_COMMIT_MARK_CONCURRENCY lanes, lane k checking fence copy
 * k (one transaction per copy at a time, so the lanes never conflict with each other).
 */
export async function markCommitted(ctx: ControlContext, lease: Lease, marks: CommittedMark[], nowMs = Date.now()): Promise<void> {
  const chunks: CommittedMark[][] = []
  for (let i = 0; i < marks.length; i += BATCHES_PER_TRANSACTION) chunks.push(marks.slice(i, i + BATCHES_PER_TRANSACTION))
  if (chunks.length <= 1) {
    for (const chunk of chunks) await transactFenced(ctx, lease, [leaseCheck(ctx, lease), ...markItems(ctx, lease, chunk, nowMs)])
    return
  }
  const lanes = Math.min(chunks.length, ctx.config.markConcurrency, FENCE_COPIES)
  const failures: unknown[] = []
  // Every lane runs to its end or its first failure before this returns: the caller releases the
  // lease next, and no mark of ours may still be in flight then.
  await mapBounded(Array.from({ length: lanes }, (_, k) => k), lanes, async (k) => {
    try {
      for (let c = k; c < chunks.length && failures.length === 0; c += lanes) {
        await transactFenced(ctx, lease, [fenceCheck(ctx, lease, k), ...markItems(ctx, lease, chunks[c]!, nowMs)])
      }
    } catch (err) {
      failures.push(err)
    }
  })
  if (failures.length > 0) throw failures.find((e) => e instanceof FencedError) ?? failures[0]
}

const leaseCheck = (ctx: ControlContext, lease: Lease) => ({
  ConditionCheck: {
    TableName: ctx.table,
    Key: leaseKey(lease.pipeline, lease.table),
    ConditionExpression: FENCE,
    ExpressionAttributeNames: { '#owner': 'owner' },
    ExpressionAttributeValues: fenceValues(lease),
  },
})

const fenceCheck = (ctx: ControlContext, lease: Lease, k: number) => ({
  ConditionCheck: {
    TableName: ctx.table,
    Key: fenceKey(lease.pipeline, lease.table, k),
    ConditionExpression: '#token = :token',
    ExpressionAttributeNames: { '#token': 'token' },
    ExpressionAttributeValues: { ':token': lease.token },
  },
})

function markItems(ctx: ControlContext, lease: Lease, chunk: CommittedMark[], nowMs: number): Record<string, unknown>[] {
  const ttl = Math.floor(nowMs / 1000) + ctx.config.batchTtlSeconds
  const items: Record<string, unknown>[] = []
  for (const { batch, snapshotId, commitId } of chunk) {
    items.push({ Delete: { TableName: ctx.table, Key: pendingBatchKey(lease.pipeline, batch.table, batch.batchId, batch.shard) } })
    items.push({
      Put: {
        TableName: ctx.table,
        Item: {
          ...committedBatchKey(lease.pipeline, batch.table, batch.batchId, batch.shard),
          kind: 'batch',
          status: 'committed',
          pipeline: lease.pipeline,
          table: batch.table,
          batchId: batch.batchId,
          writerId: batch.writerId,
          attemptId: batch.attemptId,
          createdAt: batch.createdAt,
          recordCount: batch.recordCount,
          bytes: batch.bytes,
          fileCount: batch.fileCount,
          spillPath: batch.spillPath,
          replayId: batch.replayId,
          ranges: batch.ranges.map((r) => ({ ...r, firstOffset: r.firstOffset.toString(), nextOffset: r.nextOffset.toString() })),
          snapshotId: snapshotId.toString(),
          commitId,
          committedAt: nowMs,
          committerEpoch: lease.epoch,
          ttl,
        },
      },
    })
  }
  return items
}

/** A cancellation other than the fence (throttling, a conflicting transaction): retried under FLOE_MARK_RETRIES. */
class MarkCancelled extends ThrottledError {}

async function transactFenced(ctx: ControlContext, lease: Lease, items: Record<string, unknown>[]): Promise<void> {
  const token = randomUUID()
  await retry(
    async () => {
      try {
        await ctx.doc.send(new TransactWriteCommand({ TransactItems: items as never, ClientRequestToken: token }))
      } catch (err) {
        const codes = cancellationCodes(err)
        if (codes === undefined) throw wrapDynamoError(`marking batches of ${lease.table} committed`, err)
        if (codes[0] === 'ConditionalCheckFailed') {
          throw new FencedError(`table ${lease.table}: commit lease epoch ${lease.epoch} of ${lease.owner} was taken over; batches not marked`)
        }
        throw new MarkCancelled(`marking batches of ${lease.table} committed: transaction cancelled (${codes.join(', ')})`, { cause: err })
      }
    },
    markPolicy(ctx.config),
    // Only cancellations are this loop's: a throttled request already had the SDK's retries.
    { when: (err) => err instanceof MarkCancelled, exhausted: (err) => new ThrottledError(err.message, { cause: err.cause }) },
  )
}

/** Tables that ever had a commit lease in this pipeline (a Scan: for `floe status`, not the hot path). */
export async function listLeasedTables(ctx: ControlContext, pipeline: string): Promise<string[]> {
  const prefix = leaseKey(pipeline, '').pk
  const tables: string[] = []
  const scan = (start: Record<string, unknown> | undefined) =>
    new ScanCommand({
      TableName: ctx.table,
      FilterExpression: 'begins_with(pk, :p) AND sk = :sk',
      ExpressionAttributeValues: { ':p': prefix, ':sk': 'lease' },
      ProjectionExpression: 'pk',
      ExclusiveStartKey: start,
    })
  for await (const page of pages(ctx, `listing commit leases in ${ctx.table}`, scan)) {
    for (const item of page.Items ?? []) tables.push((item.pk as string).slice(prefix.length))
  }
  return tables.sort()
}
