/**
 * What the writer needs from the outside (injected, so tests, the local simulator and the chaos
 * harness can build one against local endpoints) and the plain value it hands back — like Kafka
 * Connect's SinkWriter handing its coordinator (table, data files, offsets), never a record.
 */
import type { TableId } from '../catalog/index.js'
import type { DecodedKey, DecodedValue } from '../codec/index.js'
import type { FloeConfig, ValueFormat } from '../config.js'
import type { ControlContext, ReplayMarker } from '../control/index.js'
import type { PartitionSpec, TableMetadata } from '../iceberg/index.js'
import type { FileIO } from '../io/index.js'
import type { KafkaRecord } from '../kafka/index.js'
import type { Schema } from '../schema/index.js'
import type { FlushReason } from './buffers.js'
import type { DeadLetter } from './dead-letters.js'
import type { Router } from './routing.js'

/**
 * The part of lib/catalog's Catalog the writer uses (structural: any Catalog fits). The writer
 * loads and creates tables and commits schema changes; it never commits data (the committer does).
 */
export interface WriterCatalog {
  loadTable(id: TableId): Promise<{ metadata: TableMetadata; metadataLocation: string }>
  createTable(
    id: TableId,
    req: { schema: Schema; spec?: PartitionSpec; properties?: Record<string, string>; location?: string },
  ): Promise<{ metadata: TableMetadata; metadataLocation: string }>
  commit(id: TableId, req: { base: string; metadata: TableMetadata }): Promise<{ metadataLocation: string }>
  createNamespace?(namespace: string): Promise<unknown>
}

/** lib/codec's decoders (createDecoders). */
export interface WriterDecoders {
  decodeValue(record: KafkaRecord): Promise<DecodedValue>
  /** Decode a key with its topic's key format. Optional: without it (and keyFormat) keys are never decoded. */
  decodeKey?(record: KafkaRecord): Promise<DecodedKey>
  /** A topic's key format (FLOE_ROUTES `formats[].key`); undefined: keys are raw bytes. */
  keyFormat?(topic: string): ValueFormat | undefined
  /** A topic's value format; with `json`, inference reads number literals from the record's text (`1.0` is a double). */
  valueFormat?(topic: string): ValueFormat
}

export interface WriterDeps {
  config: FloeConfig
  io: FileIO
  catalog: WriterCatalog
  control: ControlContext
  decoders: WriterDecoders
  /** Compiled once per cold start from config.routes (compileRoutes). */
  router: Router
}

export interface TableWriteResult {
  table: string
  rows: number
  files: number
  bytes: number
  schemaId: number
  specId: number
  /** Fields present in records but not in the table (evolution off), summed over records. */
  unknownFieldsIgnored: number
  /** Set when this invocation committed a schema change. */
  evolvedToSchemaId?: number
  created?: boolean
}

/** What one writer invocation did: a plain value for logs, metrics and tests. */
export interface WriteResult {
  writerId: string
  /** Records in the event (flagged ones included). */
  recordsIn: number
  /** Records at offsets below their partition's checkpoint (already registered by an earlier attempt). */
  belowCheckpoint: number
  /** Records no route matched, dropped by `unrouted: "drop"`. */
  dropped: number
  deadLetters: number
  deadLetterPaths: string[]
  tables: TableWriteResult[]
  /** Registration transactions (more than one when the batch was split into partition groups). */
  transactions: number
  /** 'registered' if this invocation registered everything new; 'stale' if another writer had (files deleted); 'nothing-new'. */
  outcome: 'registered' | 'stale' | 'nothing-new'
  /** Checkpoints after this invocation, by "topic-partition" (decimal strings). */
  checkpoints: Record<string, string>
  flushes: Record<FlushReason, number>
  peakBufferedBytes: number
  bytesWritten: number
  /** Rows the scanner lane read from their bytes (FLOE_WRITER_SCAN, scan-lane.ts), of those registered. */
  recordsScanned: number
}

/** How lib/replay runs the writer path (WriteOptions.replay). */
export interface ReplayOptions {
  /** Carried by every batch of the registration and, once committed, by the snapshot summary (`floe.replay-id`). */
  replayId: string
  /**
   * Called once the files are written, with the records that are dead letters again, before
   * the registration: returns the markers to put in the registration transaction.
   */
  markers: (dead: DeadLetter[]) => Promise<ReplayMarker[]>
  /** Write the dead letters to FLOE_DLQ like the writer (true), or leave them to `markers` (false). */
  writeDeadLetters: boolean
  /** Tables a record may go to (undefined: wherever its routes send it). */
  tablesFor?: (record: KafkaRecord) => Set<string> | undefined
}
