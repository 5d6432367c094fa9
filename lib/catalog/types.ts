/**
 * The catalog interface the committer and the writer (for schema changes) commit through. A
 * catalog maps a table identifier to the location of its current metadata file and swaps that
 * location atomically (compare-and-swap on what the caller read).
 */
import type { Schema } from '../schema/index.js'
import type { PartitionSpec, SortOrder, TableMetadata } from '../iceberg/index.js'
import type { TableId } from './identifier.js'

export interface LoadedTable {
  metadata: TableMetadata
  metadataLocation: string
}

export interface CreateTableOptions {
  /** Field ids are taken as given (assign them with lib/schema). */
  schema: Schema
  spec?: PartitionSpec
  sortOrder?: SortOrder
  properties?: Record<string, string>
  /** Default: the namespace's location (`p.default_location` / Glue LocationUri) + `/<table>`, else `<warehouse>/<namespace>.db/<table>`. */
  location?: string
}

export interface CommitRequest {
  /** The metadata location the caller read (from loadTable); the swap happens only if it is still current. */
  base: string
  /** The new metadata, derived from the base (e.g. by appendFiles). */
  metadata: TableMetadata
  /**
   * The base metadata, if the caller has it: its `last-updated-ms` goes into the metadata log.
   * Without it the catalog reads the base file once.
   */
  baseMetadata?: TableMetadata
}

export interface Catalog {
  /** Throws AlreadyExistsError if it exists. */
  createNamespace(namespace: string, properties?: Record<string, string>): Promise<void>
  listNamespaces(): Promise<string[]>
  /** A namespace's properties, or undefined when it does not exist (one lookup, not a listing). */
  loadNamespace(namespace: string): Promise<Record<string, string> | undefined>
  /** Iceberg tables of a namespace. */
  listTables(namespace: string): Promise<TableId[]>
  /** Throws NoSuchTableError when the table is absent or not an Iceberg table. */
  loadTable(id: TableId): Promise<LoadedTable>
  /** Format v2, no snapshots. Throws AlreadyExistsError, or NoSuchTableError when the namespace is missing. */
  createTable(id: TableId, opts: CreateTableOptions): Promise<LoadedTable>
  /**
   * Writes `metadata` as a new `<metadata dir>/NNNNN-<uuid>.metadata.json` and swaps the table's
   * pointer from `base` to it. CommitConflictError (retryable: reload, re-apply, retry) when the
   * table moved on since `base`; CommitStateUnknownError when the outcome cannot be known (the
   * caller must reload and check before retrying).
   */
  commit(id: TableId, req: CommitRequest): Promise<{ metadataLocation: string; metadata: TableMetadata }>
}
