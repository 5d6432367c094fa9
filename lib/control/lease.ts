/**
 * Committer leases, one per (pipeline, table), with a fencing epoch that grows on every
 * acquisition (DESIGN.md invariant 3: only the holder of the current epoch changes batch status).
 * A lease item is never deleted, so its epoch never goes back; every fenced write checks both
 * the epoch and the owner id.
 */
import { randomUUID } from 'node:crypto'
import { ScanCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb'
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb'
import { FencedError, ThrottledError } from '../errors.js'
import { logger } from '../log.js'
import { cancellationCodes, sleep, wrapDynamoError } from './errors.js'
import { pages } from './paging.js'
import { committedBatchKey, leaseKey, pendingBatchKey } from './keys.js'
import type { ControlContext, PendingBatch } from './types.js'

export interface Lease {
  pipeline: string
  table: string
  owner: string
  epoch: number
  /** Epoch ms after which another committer may take the lease. */
  expiresAt: number
}

const isConditionFailure = (err: unknown) =>
  err instanceof ConditionalCheckFailedException || (err as { name?: string })?.name === 'ConditionalCheckFailedException'

/** Take the table's lease if it is free, released or expired; `undefined` when someone holds it. */
export async function acquireLease(
  ctx: ControlContext,
  pipeline: string,
  table: string,
  opts: { owner?: string; nowMs?: number } = {},
): Promise<Lease | undefined> {
  const owner = opts.owner ?? randomUUID()
  const now = opts.nowMs ?? Date.now()
  const expiresAt = now + ctx.config.leaseTtlMs
  try {
    const out = await ctx.doc.send(
      new UpdateCommand({
        TableName: ctx.table,
        Key: leaseKey(pipeline, table),
        UpdateExpression: 'SET #owner = :owner, expiresAt = :exp, released = :false, acquiredAt = :now, kind = :kind, #table = :table ADD epoch :one',
        ConditionExpression: 'attribute_not_exists(pk) OR released = :true OR expiresAt < :now',
        ExpressionAttributeNames: { '#owner': 'owner', '#table': 'table' },
        ExpressionAttributeValues: {
          ':owner': owner,
          ':exp': expiresAt,
          ':false': false,
          ':true': true,
          ':now': now,
          ':one': 1,
          ':kind': 'lease',
          ':table': table,
        },
        ReturnValues: 'ALL_NEW',
      }),
    )
    return { pipeline, table, owner, epoch: out.Attributes!.epoch as number, expiresAt }
  } catch (err) {
    if (isConditionFailure(err)) return undefined
    throw wrapDynamoError(`acquiring the commit lease of ${table}`, err)
  }
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
const BATCHES_PER_TRANSACTION = 49

/**
 * Move batches from pending to committed, every transaction conditioned on the lease still
 * being ours. Throws FencedError when the lease was taken over (the new holder will see the
 * batches covered by the snapshot summary and mark them itself).
 */
export async function markCommitted(ctx: ControlContext, lease: Lease, marks: CommittedMark[], nowMs = Date.now()): Promise<void> {
  const ttl = Math.floor(nowMs / 1000) + ctx.config.batchTtlSeconds
  for (let i = 0; i < marks.length; i += BATCHES_PER_TRANSACTION) {
    const chunk = marks.slice(i, i + BATCHES_PER_TRANSACTION)
    const items: Record<string, unknown>[] = [
      {
        ConditionCheck: {
          TableName: ctx.table,
          Key: leaseKey(lease.pipeline, lease.table),
          ConditionExpression: FENCE,
          ExpressionAttributeNames: { '#owner': 'owner' },
          ExpressionAttributeValues: fenceValues(lease),
        },
      },
    ]
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
    await transactFenced(ctx, lease, items)
  }
}

async function transactFenced(ctx: ControlContext, lease: Lease, items: Record<string, unknown>[]): Promise<void> {
  const token = randomUUID()
  for (let attempt = 0; ; attempt++) {
    try {
      await ctx.doc.send(new TransactWriteCommand({ TransactItems: items as never, ClientRequestToken: token }))
      return
    } catch (err) {
      const codes = cancellationCodes(err)
      if (codes === undefined) throw wrapDynamoError(`marking batches of ${lease.table} committed`, err)
      if (codes[0] === 'ConditionalCheckFailed') {
        throw new FencedError(`table ${lease.table}: commit lease epoch ${lease.epoch} of ${lease.owner} was taken over; batches not marked`)
      }
      if (attempt >= 5) throw new ThrottledError(`marking batches of ${lease.table} committed: transaction cancelled (${codes.join(', ')})`, { cause: err })
      await sleep(50 * 2 ** attempt * Math.random())
    }
  }
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
