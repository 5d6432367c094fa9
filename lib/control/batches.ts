/**
 * Fenced registration (DESIGN.md invariant 2): the pending batches of one writer invocation and
 * the new checkpoints of its partitions go into ONE TransactWriteItems, each checkpoint
 * conditioned on the value the writer read. A writer that lost the race learns it here.
 */
import { randomUUID } from 'node:crypto'
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb'
import { FencedError, FloeError, ThrottledError } from '../errors.js'
import { logger } from '../log.js'
import { filesJson as filesListJson, filesJsonStringBytes } from './file-list.js'
import { readCheckpoints } from './checkpoints.js'
import { cancellationCodes, wrapDynamoError } from './errors.js'
import { parsePartitionKey, partitionKey } from '../kafka/index.js'
import { markerPut, replayMarkerKey, type ReplayMarker } from './replay.js'
import {
  batchIdFor,
  checkpointKey,
  committedBatchKey,
  pendingBatchKey,
  pendingIndexPk,
  pendingIndexSk,
  PENDING_PREFIX,
  shardOf,
} from './keys.js'
import type { ControlContext, PendingBatchInput } from './types.js'

/** DynamoDB's limit on items per transaction. */
export const maxTransactionItems = 100

export interface RegisterRequest {
  pipeline: string
  writerId: string
  /** Checkpoints as read (readCheckpoints), for every partition in `next`. */
  expected: Map<string, bigint | undefined>
  /** New checkpoint per partition (`"topic-partition"` → next offset). */
  next: Map<string, bigint>
  /** One per table; may be empty (a batch of dead letters only still advances checkpoints). */
  batches: PendingBatchInput[]
  /**
   * Replay only (lib/replay): markers put in the same transaction, each conditioned on not
   * existing yet. If one exists the source was already replayed: nothing is written, `'stale'`.
   * Replay batches (`replayId` set) are below the checkpoints: they need no entry in `next`.
   */
  markers?: ReplayMarker[]
  /** With markers: the id every marker and batch of this registration carries. */
  replayId?: string
}

/**
 * Register the batches and advance the checkpoints, or learn that another writer already did.
 * - `'registered'`: this call's batches are pending and the checkpoints moved.
 * - `'stale'`: other writers already registered up to (at least) `next` on every partition;
 *   nothing was written — the caller deletes its files and reports success.
 * Throws FencedError (retryable) when another writer advanced a checkpoint but not as far as
 * `next` (the caller must re-read and register the rest: retrying the invocation does that),
 * ThrottledError on transaction conflicts and throttling, FloeError on invalid requests.
 */
export async function registerBatches(ctx: ControlContext, req: RegisterRequest): Promise<'registered' | 'stale'> {
  validate(req)
  const attemptId = randomUUID()
  const now = Date.now()
  const puts: Record<string, unknown>[] = []
  const spilled: string[] = []
  const batchKeys: { pk: string; sk: string }[] = []
  for (const batch of req.batches) {
    const batchId = batch.replayId ? batchIdFor(req.pipeline, `${batch.table}\nreplay ${batch.replayId}`, batch.ranges) : batchIdFor(req.pipeline, batch.table, batch.ranges)
    const shard = shardOf(batchId, ctx.config.pendingShards)
    const key = pendingBatchKey(req.pipeline, batch.table, batchId, shard)
    batchKeys.push(key)
    const filesJson = filesListJson(batch.files)
    const item: Record<string, unknown> = {
      ...key,
      gsi1pk: pendingIndexPk(req.pipeline, shard),
      gsi1sk: pendingIndexSk(batch.table, batchId),
      kind: 'batch',
      pipeline: req.pipeline,
      table: batch.table,
      batchId,
      status: 'pending',
      writerId: req.writerId,
      attemptId,
      createdAt: now,
      schemaId: batch.schemaId,
      specId: batch.specId,
      recordCount: batch.recordCount,
      bytes: batch.bytes,
      fileCount: batch.files.length,
      ranges: batch.ranges.map((r) => ({
        topic: r.topic,
        partition: r.partition,
        firstOffset: r.firstOffset.toString(),
        nextOffset: r.nextOffset.toString(),
        records: r.records,
        maxTimestamp: r.maxTimestamp,
      })),
      filesJson,
      ...(batch.replayId ? { replayId: batch.replayId } : {}),
    }
    // The item's size as JSON, its list sized without escaping it once more (file-list.ts).
    const size = Buffer.byteLength(JSON.stringify({ ...item, filesJson: '' })) - 2 + filesJsonStringBytes(batch.files)
    if (size > ctx.config.spillThresholdBytes) {
      // The attempt id keeps two writers of the same batch id from overwriting each other's list.
      const spillPath = `${ctx.spillPrefix.replace(/\/+$/, '')}/${batchId}-${attemptId}.json`
      await ctx.io.write(spillPath, filesJson, { contentType: 'application/json' })
      spilled.push(spillPath)
      delete item.filesJson
      item.spillPath = spillPath
    }
    puts.push({ Put: { TableName: ctx.table, Item: item, ConditionExpression: 'attribute_not_exists(pk)' } })
  }
  const updates: Record<string, unknown>[] = []
  for (const [pkey, next] of req.next) {
    const { topic, partition } = parsePartitionKey(pkey)
    const expected = req.expected.get(pkey)
    updates.push({
      Update: {
        TableName: ctx.table,
        Key: checkpointKey(req.pipeline, topic, partition),
        UpdateExpression: 'SET #next = :next, topic = :topic, #partition = :partition, pipeline = :pipeline, writerId = :writer, updatedAt = :now',
        ConditionExpression: expected === undefined ? 'attribute_not_exists(pk)' : '#next = :expected',
        ExpressionAttributeNames: { '#next': 'next', '#partition': 'partition' },
        ExpressionAttributeValues: {
          ':next': next.toString(),
          ':topic': topic,
          ':partition': partition,
          ':pipeline': req.pipeline,
          ':writer': req.writerId,
          ':now': now,
          ...(expected === undefined ? {} : { ':expected': expected.toString() }),
        },
      },
    })
  }
  const markers = (req.markers ?? []).map((m) => markerPut(ctx, req.pipeline, req.replayId ?? attemptId, m, now, attemptId))
  if (puts.length + updates.length + markers.length === 0) return 'registered'
  try {
    await ctx.doc.send(
      // The token makes the SDK's own retries of this request idempotent (a retry after a lost
      // response must not see our own checkpoint update as someone else's).
      new TransactWriteCommand({ TransactItems: [...puts, ...updates, ...markers] as never, ClientRequestToken: attemptId }),
    )
    return 'registered'
  } catch (err) {
    const codes = cancellationCodes(err)
    if (codes === undefined) throw wrapDynamoError(`registering batches in ${ctx.table}`, err)
    // Cancelled: nothing was written, so our spilled lists are garbage.
    await ctx.io.deleteMany(spilled).catch((e) => logger.warn('could not delete spilled file lists', { spilled, error: String(e) }))
    if (markers.length > 0 && codes.slice(puts.length + updates.length).includes('ConditionalCheckFailed')) {
      // A marker exists: this source was replayed by an earlier run — or by this very call (an SDK
      // retry after a lost response); either way its batches are registered.
      return (await markerIsOurs(ctx, req, attemptId)) ? 'registered' : 'stale'
    }
    if (codes.includes('ConditionalCheckFailed')) return await resolveConflict(ctx, req, codes, puts.length, batchKeys, attemptId)
    if (codes.some((c) => c === 'TransactionConflict' || c.includes('Throttl') || c.includes('ProvisionedThroughput'))) {
      throw new ThrottledError(`registering batches in ${ctx.table}: transaction cancelled (${codes.join(', ')})`, { cause: err })
    }
    throw new FloeError(`registering batches in ${ctx.table}: transaction cancelled (${codes.join(', ')})`, { cause: err })
  }
}

async function resolveConflict(
  ctx: ControlContext,
  req: RegisterRequest,
  codes: string[],
  putCount: number,
  batchKeys: { pk: string; sk: string }[],
  attemptId: string,
): Promise<'registered' | 'stale'> {
  // A previous SDK attempt of this very transaction may have succeeded (token expired, or a
  // server that ignores tokens): then the batch carries our attempt id.
  if (await ownAttemptLanded(ctx, req, batchKeys[0], attemptId)) return 'registered'
  const partitions = [...req.next.keys()].map(parsePartitionKey)
  const current = await readCheckpoints(ctx, req.pipeline, partitions)
  const behind = [...req.next].filter(([k, next]) => {
    const now = current.get(k)
    return now === undefined || now < next
  })
  if (behind.length === 0) {
    logger.info('registration is stale: other writers already registered these offsets', {
      pipeline: req.pipeline,
      partitions: Object.fromEntries([...req.next].map(([k, v]) => [k, { expected: String(req.expected.get(k)), next: String(v), now: String(current.get(k)) }])),
    })
    return 'stale'
  }
  const checkpointFailed = codes.slice(putCount).includes('ConditionalCheckFailed')
  const detail = behind
    .map(([k, next]) => `${k}: expected ${req.expected.get(k) ?? 'none'}, now ${current.get(k) ?? 'none'}, ours up to ${next}`)
    .join('; ')
  if (!checkpointFailed) {
    throw new FloeError(`pipeline ${req.pipeline}: a batch with the same id is already pending but the checkpoints did not move (${detail})`)
  }
  throw new FencedError(`pipeline ${req.pipeline}: another writer advanced the checkpoints part of the way (${detail}); retry registers the rest`, {
    retryable: true,
  })
}

async function ownAttemptLanded(
  ctx: ControlContext,
  req: RegisterRequest,
  key: { pk: string; sk: string } | undefined,
  attemptId: string,
): Promise<boolean> {
  if (key === undefined) return false
  const batchId = key.sk.slice(PENDING_PREFIX.length)
  const table = req.batches[0]!.table
  const committed = { pk: key.pk, sk: committedBatchKey(req.pipeline, table, batchId).sk }
  for (const k of [key, committed]) {
    let out
    try {
      out = await ctx.doc.send(new GetCommand({ TableName: ctx.table, Key: k, ConsistentRead: true, ProjectionExpression: 'attemptId' }))
    } catch (err) {
      throw wrapDynamoError(`checking whether batch ${batchId} of ${table} is ours`, err)
    }
    if (out.Item?.attemptId === attemptId) return true
  }
  return false
}

/** Whether the first marker of the request carries this attempt's id (marker and batches land together). */
async function markerIsOurs(ctx: ControlContext, req: RegisterRequest, attemptId: string): Promise<boolean> {
  const key = replayMarkerKey(req.pipeline, req.markers![0]!.sourceId)
  try {
    const out = await ctx.doc.send(new GetCommand({ TableName: ctx.table, Key: key, ConsistentRead: true, ProjectionExpression: 'attemptId' }))
    return out.Item?.attemptId === attemptId
  } catch (err) {
    throw wrapDynamoError(`checking whether replay marker ${key.pk} is ours`, err)
  }
}

function validate(req: RegisterRequest): void {
  const count = req.batches.length + req.next.size + (req.markers?.length ?? 0)
  if (count > maxTransactionItems) {
    throw new FloeError(
      `pipeline ${req.pipeline}: registration needs ${count} transaction items (${req.batches.length} batches + ${req.next.size} checkpoints + ${req.markers?.length ?? 0} replay markers), more than ${maxTransactionItems}: split the partitions into groups`,
    )
  }
  for (const [k, next] of req.next) {
    if (!req.expected.has(k)) throw new FloeError(`pipeline ${req.pipeline}: partition ${k} has a new checkpoint but no expected value (read it first)`)
    const expected = req.expected.get(k)
    if (expected !== undefined && next < expected) {
      throw new FloeError(`pipeline ${req.pipeline}: checkpoint of ${k} would move backwards from ${expected} to ${next}`)
    }
  }
  const tables = new Set<string>()
  for (const b of req.batches) {
    if (tables.has(b.table)) throw new FloeError(`pipeline ${req.pipeline}: two batches for table ${b.table} in one registration (merge them)`)
    tables.add(b.table)
    if (b.ranges.length === 0) throw new FloeError(`pipeline ${req.pipeline}: batch for ${b.table} has no offset ranges`)
    if (b.replayId !== undefined) {
      if (!req.markers?.length) throw new FloeError(`pipeline ${req.pipeline}: replay batch for ${b.table} without a replay marker (unfenced)`)
      continue
    }
    for (const r of b.ranges) {
      const k = partitionKey(r.topic, r.partition)
      const next = req.next.get(k)
      if (next === undefined) throw new FloeError(`pipeline ${req.pipeline}: batch for ${b.table} covers ${k}, which has no new checkpoint`)
      if (r.nextOffset > next || r.firstOffset >= r.nextOffset) {
        throw new FloeError(`pipeline ${req.pipeline}: batch for ${b.table} has range ${k} [${r.firstOffset}, ${r.nextOffset}) outside the new checkpoint ${next}`)
      }
    }
  }
}
