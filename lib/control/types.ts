/** Values passed between the writer, the committer and the control table. */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb'
import type { FloeConfig } from '../config.js'
import type { FileIO } from '../io/index.js'
import type { RegisteredFile } from './file-list.js'

/** What every control-table operation needs. */
export interface ControlContext {
  doc: DynamoDBDocumentClient
  /** Control table name. */
  table: string
  /** Reads and writes spilled file lists. */
  io: FileIO
  /** Where file lists too large for a DynamoDB item go (s3://… or file://…). */
  spillPrefix: string
  config: FloeConfig
}

/** The offsets of one Kafka partition that one batch covers. */
export interface OffsetRange {
  topic: string
  partition: number
  /** First offset of a record in this batch. */
  firstOffset: bigint
  /** The partition's checkpoint after this batch (offsets have gaps: not necessarily last + 1). */
  nextOffset: bigint
  records: number
  /** Latest record timestamp (epoch ms) of this partition in the batch. */
  maxTimestamp: number
}

/** One table's share of a writer invocation, as the writer hands it to registerBatches. */
export interface PendingBatchInput {
  /** `namespace.name` */
  table: string
  /** The files, in their registration form (file-list.ts: the writer encodes each once). */
  files: RegisteredFile[]
  schemaId: number
  specId: number
  ranges: OffsetRange[]
  recordCount: number
  bytes: number
  /** Set on batches lib/replay registers: fenced by a replay marker, not by the checkpoints. */
  replayId?: string
}

/** A pending batch as the committer reads it back (files loaded separately: see loadBatchFiles). */
export interface PendingBatch {
  table: string
  batchId: string
  writerId: string
  createdAt: number
  schemaId: number
  specId: number
  ranges: OffsetRange[]
  recordCount: number
  bytes: number
  fileCount: number
  /** Set when the file list spilled to an object; otherwise the item holds `files`. */
  spillPath?: string
  /** Unique per registerBatches call (tells a writer its own earlier attempt from another writer's). */
  attemptId?: string
  /** A replayed batch (lib/replay): its ranges are below the committed offsets; the summary's `floe.replay-id` says whether it is in. */
  replayId?: string
  /** The key shard the item was read from (keys.ts; absent: shard 0, the unsharded key). */
  shard?: number
}
