/** Reading pending batches back: which tables have work, what their batches cover, their files. */
import { QueryCommand } from '@aws-sdk/lib-dynamodb'
import { FloeError } from '../errors.js'
import { batchGetAll } from './batch-get.js'
import { wrapDynamoError } from './errors.js'
import { pages } from './paging.js'
import { mapBounded } from '../concurrency.js'
import { batchPartition, pendingBatchKey, pendingIndexPk, PENDING_INDEX, PENDING_PREFIX, shardRange } from './keys.js'
import type { ControlContext, PendingBatch } from './types.js'

/**
 * Tables with at least one pending batch, from the sparse `pending` index (eventually
 * consistent: a just-registered batch may show up one run later, which is harmless). Skips from
 * table to table instead of reading every pending item; reads every shard of the index
 * (FLOE_PENDING_SHARDS, at most FLOE_SHARD_CONCURRENCY at once). Sorted.
 */
export async function listPendingTables(ctx: ControlContext, pipeline: string): Promise<string[]> {
  const perShard = await mapBounded(shardRange(ctx.config.pendingShards), ctx.config.shardConcurrency, (shard) => listShardTables(ctx, pipeline, shard))
  return [...new Set(perShard.flat())].sort()
}

async function listShardTables(ctx: ControlContext, pipeline: string, shard: number): Promise<string[]> {
  const tables: string[] = []
  let after: string | undefined
  for (;;) {
    let page
    try {
      page = await ctx.doc.send(
        new QueryCommand({
          TableName: ctx.table,
          IndexName: PENDING_INDEX,
          KeyConditionExpression: after === undefined ? 'gsi1pk = :pk' : 'gsi1pk = :pk AND gsi1sk > :after',
          ExpressionAttributeValues: { ':pk': pendingIndexPk(pipeline, shard), ...(after === undefined ? {} : { ':after': after }) },
          ProjectionExpression: 'gsi1sk',
          Limit: 1,
        }),
      )
    } catch (err) {
      throw wrapDynamoError(`listing tables with pending batches in ${ctx.table}`, err)
    }
    const sk = page.Items?.[0]?.gsi1sk as string | undefined
    if (sk === undefined) return tables
    const table = sk.slice(0, sk.lastIndexOf('#'))
    tables.push(table)
    // '#' + U+FFFF sorts after every `<table>#<batchId>`.
    after = `${table}#\uffff`
  }
}

const SUMMARY_FIELDS = ['table', 'batchId', 'writerId', 'createdAt', 'schemaId', 'specId', 'ranges', 'recordCount', 'bytes', 'fileCount', 'spillPath', 'attemptId', 'replayId']

/** Every pending batch of a table (consistent Query of every shard), without file lists. */
export async function readPendingBatches(ctx: ControlContext, pipeline: string, table: string): Promise<PendingBatch[]> {
  const perShard = await mapBounded(shardRange(ctx.config.pendingShards), ctx.config.shardConcurrency, (shard) => readShard(ctx, pipeline, table, shard))
  return perShard.flat()
}

async function readShard(ctx: ControlContext, pipeline: string, table: string, shard: number): Promise<PendingBatch[]> {
  const out: PendingBatch[] = []
  const query = (start: Record<string, unknown> | undefined) =>
    new QueryCommand({
      TableName: ctx.table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': batchPartition(pipeline, table, shard), ':p': PENDING_PREFIX },
      ProjectionExpression: SUMMARY_FIELDS.map((_, i) => `#f${i}`).join(', '),
      ExpressionAttributeNames: Object.fromEntries(SUMMARY_FIELDS.map((f, i) => [`#f${i}`, f])),
      ConsistentRead: true,
      ExclusiveStartKey: start,
    })
  for await (const page of pages(ctx, `reading pending batches of ${table} from ${ctx.table}`, query)) {
    for (const item of page.Items ?? []) out.push({ ...toPendingBatch(item), ...(shard === 0 ? {} : { shard }) })
  }
  return out
}

function toPendingBatch(item: Record<string, unknown>): PendingBatch {
  const ranges = (item.ranges as Record<string, unknown>[]).map((r) => ({
    topic: r.topic as string,
    partition: r.partition as number,
    firstOffset: BigInt(r.firstOffset as string),
    nextOffset: BigInt(r.nextOffset as string),
    records: r.records as number,
    maxTimestamp: r.maxTimestamp as number,
  }))
  return {
    table: item.table as string,
    batchId: item.batchId as string,
    writerId: item.writerId as string,
    createdAt: item.createdAt as number,
    schemaId: item.schemaId as number,
    specId: item.specId as number,
    ranges,
    recordCount: item.recordCount as number,
    bytes: item.bytes as number,
    fileCount: item.fileCount as number,
    spillPath: item.spillPath as string | undefined,
    attemptId: item.attemptId as string | undefined,
    ...(item.replayId ? { replayId: item.replayId as string } : {}),
  }
}

/**
 * The files of the given batches (from the items, or from their spilled objects), each list entry
 * passed through `decode` (the caller's file type: lib/iceberg's `dataFileFromJSON` for data files).
 * The BatchGets (100 items each) run FLOE_SHARD_CONCURRENCY at a time: 10,000 batches are 100 of them.
 */
export async function loadBatchFiles<F>(ctx: ControlContext, pipeline: string, batches: PendingBatch[], decode: (entry: unknown) => F): Promise<Map<string, F[]>> {
  const files = new Map<string, F[]>()
  const parseFiles = (data: Uint8Array | string, batch: PendingBatch) => parseFileList(data, batch).map(decode)
  const inline = new Map(batches.filter((b) => b.spillPath === undefined).map((b) => [b.batchId, b]))
  const spilled = batches.filter((b) => b.spillPath !== undefined)
  await mapBounded(spilled, ctx.config.shardConcurrency, async (b) => void files.set(b.batchId, parseFiles(await ctx.io.read(b.spillPath!), b)))
  const groups: PendingBatch[][] = []
  const all = [...inline.values()]
  for (let i = 0; i < all.length; i += 100) groups.push(all.slice(i, i + 100))
  await mapBounded(groups, ctx.config.shardConcurrency, async (group) => {
    const keys = group.map((b) => pendingBatchKey(pipeline, b.table, b.batchId, b.shard))
    await batchGetAll(ctx, keys, { what: 'batch items', reading: 'reading batch file lists', projection: 'batchId, filesJson' }, (item) => {
      files.set(item.batchId as string, parseFiles(item.filesJson as string, inline.get(item.batchId as string)!))
    })
  })
  for (const b of batches) {
    if (!files.has(b.batchId)) throw new FloeError(`table ${b.table}: pending batch ${b.batchId} vanished while reading its files (committed by another committer?)`, { retryable: true })
  }
  return files
}

function parseFileList(data: Uint8Array | string, batch: PendingBatch): unknown[] {
  const text = typeof data === 'string' ? data : new TextDecoder().decode(data)
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (err) {
    throw new FloeError(`table ${batch.table}: file list of batch ${batch.batchId}${batch.spillPath ? ` (${batch.spillPath})` : ''} is not JSON`, { cause: err })
  }
  if (!Array.isArray(json) || json.length !== batch.fileCount) {
    throw new FloeError(`table ${batch.table}: batch ${batch.batchId} lists ${Array.isArray(json) ? json.length : 'no'} files, expected ${batch.fileCount}`)
  }
  return json
}
