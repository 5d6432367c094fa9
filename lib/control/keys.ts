/**
 * Item keys of the control table. One item kind per key prefix:
 *
 * | item | pk | sk |
 * |---|---|---|
 * | offset checkpoint | `ckpt#<pipeline>#<topic>#<partition>` | `ckpt` |
 * | pending batch, shard 0 | `batch#<pipeline>#<table>` | `p#<batchId>` |
 * | pending batch, shard k ≥ 1 | `bshard#<pipeline>#<k>#<table>` | `p#<batchId>` |
 * | committed batch (journal, expires by TTL) | the pending batch's pk | `c#<batchId>` |
 * | committer lease | `lease#<pipeline>#<table>` | `lease` |
 * | lease fence copy k (parallel marks) | `lease#<pipeline>#<table>` | `fence#<k>` |
 * | table backlog (pending count the committer saw) | `backlog#<pipeline>#<table>` | `backlog` |
 *
 * Checkpoints get a partition key each so that writers of different Kafka partitions never
 * share a DynamoDB partition. Pending and committed batches differ by sort-key prefix so the
 * committer's consistent Query reads only pending ones (committed items linger until TTL).
 * Pending batch items also carry `gsi1pk = pending#<pipeline>` (shard 0) or
 * `pending#<pipeline>#<k>` (shard k), `gsi1sk = <table>#<batchId>` (the sparse `pending` index)
 * so a committer discovers the tables with work.
 *
 * Write sharding (FLOE_PENDING_SHARDS, docs/scale.md): one DynamoDB partition takes about 1,000
 * write units per second, so a table's batches (and the pipeline's index entries) are spread
 * over N keys by a hash of the batch id — the same batch id always lands on the same key, which
 * keeps a redelivered batch's conditional put meaningful. Shard 0 is the unsharded layout of
 * earlier versions, so their pending batches are read (and committed) as shard 0, and N = 1 is
 * exactly the old layout. Table names may contain '#', pipelines may not: `bshard#` keys never
 * collide with `batch#` keys, nor two shards' keys with each other.
 */
import { createHash } from 'node:crypto'
import { partitionKey } from '../kafka/index.js'

export type Key = {
  pk: string
  sk: string
}

export function checkpointKey(pipeline: string, topic: string, partition: number): Key {
  return { pk: `ckpt#${pipeline}#${topic}#${partition}`, sk: 'ckpt' }
}

export function checkpointPrefix(pipeline: string): string {
  return `ckpt#${pipeline}#`
}

/** The pk of one shard of a table's batches (shard 0: the unsharded key of earlier versions). */
export function batchPartition(pipeline: string, table: string, shard = 0): string {
  return shard === 0 ? `batch#${pipeline}#${table}` : `bshard#${pipeline}#${shard}#${table}`
}

/** Prefixes of every batch pk of a pipeline, all tables and shards (for Scans: lib/replay). */
export function batchPartitionPrefixes(pipeline: string): [string, string] {
  return [`batch#${pipeline}#`, `bshard#${pipeline}#`]
}

/** The shard of a batch id (a hex digest) among `shards`. */
export function shardOf(batchId: string, shards: number): number {
  if (shards <= 1) return 0
  const n = Number.parseInt(batchId.slice(0, 8), 16)
  return (Number.isNaN(n) ? 0 : n) % shards
}

/** 0 … shards-1. */
export function shardRange(shards: number): number[] {
  return Array.from({ length: Math.max(1, shards) }, (_, i) => i)
}

export function backlogKey(pipeline: string, table: string): Key {
  return { pk: `backlog#${pipeline}#${table}`, sk: 'backlog' }
}

export const PENDING_PREFIX = 'p#'
export const COMMITTED_PREFIX = 'c#'

export function pendingBatchKey(pipeline: string, table: string, batchId: string, shard = 0): Key {
  return { pk: batchPartition(pipeline, table, shard), sk: `${PENDING_PREFIX}${batchId}` }
}

export function committedBatchKey(pipeline: string, table: string, batchId: string, shard = 0): Key {
  return { pk: batchPartition(pipeline, table, shard), sk: `${COMMITTED_PREFIX}${batchId}` }
}

export function leaseKey(pipeline: string, table: string): Key {
  return { pk: `lease#${pipeline}#${table}`, sk: 'lease' }
}

/** Copy k of a lease's fencing token (lib/control/lease.ts: marks in parallel transactions). */
export function fenceKey(pipeline: string, table: string, k: number): Key {
  return { pk: `lease#${pipeline}#${table}`, sk: `fence#${k}` }
}

export const PENDING_INDEX = 'pending'

export function pendingIndexPk(pipeline: string, shard = 0): string {
  return shard === 0 ? `pending#${pipeline}` : `pending#${pipeline}#${shard}`
}

export function pendingIndexSk(table: string, batchId: string): string {
  return `${table}#${batchId}`
}

/**
 * Deterministic batch id: the same records of the same table (same pipeline, same first offsets
 * per partition) always get the same id, so a redelivered batch cannot be put twice.
 */
export function batchIdFor(pipeline: string, table: string, ranges: { topic: string; partition: number; firstOffset: bigint }[]): string {
  const parts = ranges.map((r) => `${partitionKey(r.topic, r.partition)}@${r.firstOffset}`).sort()
  return createHash('sha256').update(`${pipeline}\n${table}\n${parts.join('\n')}`).digest('hex').slice(0, 32)
}
