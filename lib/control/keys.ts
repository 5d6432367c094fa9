/**
 * Item keys of the control table. One item kind per key prefix:
 *
 * | item | pk | sk |
 * |---|---|---|
 * | offset checkpoint | `ckpt#<pipeline>#<topic>#<partition>` | `ckpt` |
 * | pending batch | `batch#<pipeline>#<table>` | `p#<batchId>` |
 * | committed batch (journal, expires by TTL) | `batch#<pipeline>#<table>` | `c#<batchId>` |
 * | committer lease | `lease#<pipeline>#<table>` | `lease` |
 *
 * Checkpoints get a partition key each so that writers of different Kafka partitions never
 * share a DynamoDB partition. Pending and committed batches differ by sort-key prefix so the
 * committer's consistent Query reads only pending ones (committed items linger until TTL).
 * Pending batch items also carry `gsi1pk = pending#<pipeline>`, `gsi1sk = <table>#<batchId>`
 * (the sparse `pending` index) so a committer discovers the tables with work.
 */
import { createHash } from 'node:crypto'

export type Key = {
  pk: string
  sk: string
}

/** `"topic-partition"`, the key of offset maps (as in Kafka Connect's offsets). */
export function partitionKey(topic: string, partition: number): string {
  return `${topic}-${partition}`
}

/** Inverse of partitionKey: the partition is after the last dash (topics may contain dashes). */
export function parsePartitionKey(key: string): { topic: string; partition: number } {
  const i = key.lastIndexOf('-')
  const partition = Number(key.slice(i + 1))
  if (i <= 0 || !Number.isInteger(partition) || partition < 0) throw new Error(`not a "topic-partition" key: ${JSON.stringify(key)}`)
  return { topic: key.slice(0, i), partition }
}

export function checkpointKey(pipeline: string, topic: string, partition: number): Key {
  return { pk: `ckpt#${pipeline}#${topic}#${partition}`, sk: 'ckpt' }
}

export function checkpointPrefix(pipeline: string): string {
  return `ckpt#${pipeline}#`
}

export function batchPartition(pipeline: string, table: string): string {
  return `batch#${pipeline}#${table}`
}

export const PENDING_PREFIX = 'p#'
export const COMMITTED_PREFIX = 'c#'

export function pendingBatchKey(pipeline: string, table: string, batchId: string): Key {
  return { pk: batchPartition(pipeline, table), sk: `${PENDING_PREFIX}${batchId}` }
}

export function committedBatchKey(pipeline: string, table: string, batchId: string): Key {
  return { pk: batchPartition(pipeline, table), sk: `${COMMITTED_PREFIX}${batchId}` }
}

export function leaseKey(pipeline: string, table: string): Key {
  return { pk: `lease#${pipeline}#${table}`, sk: 'lease' }
}

export const PENDING_INDEX = 'pending'

export function pendingIndexPk(pipeline: string): string {
  return `pending#${pipeline}`
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
