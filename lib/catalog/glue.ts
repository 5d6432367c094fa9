/**
 * Iceberg catalog in the AWS Glue Data Catalog, as Apache Iceberg Java's GlueCatalog and
 * GlueTableOperations do it (aws/src/main/java/org/apache/iceberg/aws/glue/): a Glue table with
 * TableType EXTERNAL_TABLE, parameters table_type=ICEBERG, metadata_location and
 * previous_metadata_location, a StorageDescriptor whose columns mirror the Iceberg schema, and
 * commits as UpdateTable with the VersionId read (optimistic locking; Glue answers
 * ConcurrentModificationException when someone else updated the table first).
 */
import {
  type Column,
  CreateDatabaseCommand,
  CreateTableCommand,
  GetDatabaseCommand,
  GetDatabasesCommand,
  GetTableCommand,
  GetTablesCommand,
  type GlueClient,
  type Table,
  type TableInput,
  UpdateTableCommand,
} from '@aws-sdk/client-glue'
import { AlreadyExistsError, CommitConflictError, CommitStateUnknownError, IcebergError, NoSuchTableError } from '../errors.js'
import type { FileIO } from '../io/index.js'
import { newTableMetadata, readTableMetadata, type TableMetadata } from '../iceberg/index.js'
import type { MetadataCache } from './metadata-cache.js'
import { glueColumns } from './glue-columns.js'
import { attemptsOf, definitelyRejected, errorName } from '../retry/index.js'
import { deleteObsoleteMetadata, discardMetadataFile, writeCommitMetadata, writeInitialMetadata } from './metadata-files.js'
import { type TableId, tableName } from './identifier.js'
import type { Catalog, CommitRequest, CreateTableOptions, LoadedTable } from './types.js'

const TABLE_TYPE = 'table_type'
const METADATA_LOCATION = 'metadata_location'
const PREVIOUS_METADATA_LOCATION = 'previous_metadata_location'
const ICEBERG = 'ICEBERG'
const EXTERNAL_TABLE = 'EXTERNAL_TABLE'
/** Table properties Java lists as StorageDescriptor.AdditionalLocations. */
const ADDITIONAL_LOCATION_PROPERTIES = ['write.data.path', 'write.metadata.path', 'write.object-storage.path', 'write.folder-storage.path']
/** Glue's (and Athena's) name rules, enforced by Java unless glue.skip-name-validation is set. */
const DB_NAME = /^[a-z0-9_]{1,252}$/
const TABLE_NAME = /^[a-z0-9_]{1,255}$/

export interface GlueCatalogOptions {
  glue: GlueClient
  /** The AWS account whose Data Catalog to use; default: the caller's. */
  catalogId?: string
  warehouse: string
  io: FileIO
  /** Parsed metadata by location, shared across loads (metadata-cache.ts); default: none. */
  metadataCache?: MetadataCache
  /** Java's glue.skip-archive (default true): do not keep a Glue table version per commit. */
  skipArchive?: boolean
}

export class GlueCatalog implements Catalog {
  private readonly glue: GlueClient
  private readonly catalogId?: string
  private readonly warehouse: string
  private readonly io: FileIO
  private readonly cache?: MetadataCache
  private readonly skipArchive: boolean

  constructor(opts: GlueCatalogOptions) {
    this.glue = opts.glue
    this.catalogId = opts.catalogId
    this.warehouse = opts.warehouse.replace(/\/+$/, '')
    this.io = opts.io
    this.cache = opts.metadataCache
    this.skipArchive = opts.skipArchive ?? true
  }

  private get cat(): { CatalogId?: string } {
    return this.catalogId === undefined ? {} : { CatalogId: this.catalogId }
  }

  private check(id: TableId): void {
    checkDatabase(id.namespace)
    if (!TABLE_NAME.test(id.name)) throw new IcebergError(`cannot use '${id.name}' as a Glue table name: it must be 1-255 lowercase letters, digits or underscores`)
  }

  async createNamespace(namespace: string, properties: Record<string, string> = {}): Promise<void> {
    checkDatabase(namespace)
    const { comment, location, ...rest } = properties
    const input = { Name: namespace, ...(comment !== undefined ? { Description: comment } : {}), ...(location !== undefined ? { LocationUri: location } : {}), Parameters: rest }
    try {
      await this.glue.send(new CreateDatabaseCommand({ ...this.cat, DatabaseInput: input }))
    } catch (err) {
      if (errorName(err) === 'AlreadyExistsException') throw new AlreadyExistsError(`Glue database '${namespace}' already exists`, { cause: err })
      throw err
    }
  }

  async loadNamespace(namespace: string): Promise<Record<string, string> | undefined> {
    try {
      const db = (await this.glue.send(new GetDatabaseCommand({ ...this.cat, Name: namespace }))).Database
      if (!db) return undefined
      // The inverse of createNamespace: Description and LocationUri are Iceberg's comment and location.
      return { ...db.Parameters, ...(db.Description !== undefined ? { comment: db.Description } : {}), ...(db.LocationUri !== undefined ? { location: db.LocationUri } : {}) }
    } catch (err) {
      if (errorName(err) === 'EntityNotFoundException') return undefined
      throw err
    }
  }

  async listNamespaces(): Promise<string[]> {
    const out: string[] = []
    let NextToken: string | undefined
    do {
      const res = await this.glue.send(new GetDatabasesCommand({ ...this.cat, ...(NextToken ? { NextToken } : {}) }))
      for (const db of res.DatabaseList ?? []) if (db.Name) out.push(db.Name)
      NextToken = res.NextToken
    } while (NextToken)
    return out
  }

  async listTables(namespace: string): Promise<TableId[]> {
    checkDatabase(namespace)
    const out: TableId[] = []
    let NextToken: string | undefined
    do {
      const res = await this.glue.send(new GetTablesCommand({ ...this.cat, DatabaseName: namespace, ...(NextToken ? { NextToken } : {}) }))
      for (const t of res.TableList ?? []) if (t.Name && isIceberg(t)) out.push({ namespace, name: t.Name })
      NextToken = res.NextToken
    } while (NextToken)
    return out
  }

  private async getTable(id: TableId): Promise<Table | undefined> {
    try {
      return (await this.glue.send(new GetTableCommand({ ...this.cat, DatabaseName: id.namespace, Name: id.name }))).Table
    } catch (err) {
      if (errorName(err) === 'EntityNotFoundException') return undefined
      throw err
    }
  }

  private async icebergTable(id: TableId): Promise<Table & { location: string }> {
    this.check(id)
    const table = await this.getTable(id)
    if (!table) throw new NoSuchTableError(`Glue table ${tableName(id)} does not exist`)
    if (!isIceberg(table)) throw new NoSuchTableError(`Glue table ${tableName(id)} is not an Iceberg table (${TABLE_TYPE}=${table.Parameters?.[TABLE_TYPE]})`)
    const location = table.Parameters?.[METADATA_LOCATION]
    if (!location) throw new IcebergError(`Glue table ${tableName(id)} has no ${METADATA_LOCATION} parameter`)
    return { ...table, location }
  }

  async loadTable(id: TableId): Promise<LoadedTable> {
    const table = await this.icebergTable(id)
    return { metadata: await (this.cache ? this.cache.read(this.io, table.location) : readTableMetadata(this.io, table.location)), metadataLocation: table.location }
  }

  async createTable(id: TableId, opts: CreateTableOptions): Promise<LoadedTable> {
    this.check(id)
    let dbLocation: string | undefined
    try {
      dbLocation = (await this.glue.send(new GetDatabaseCommand({ ...this.cat, Name: id.namespace }))).Database?.LocationUri
    } catch (err) {
      if (errorName(err) === 'EntityNotFoundException') throw new NoSuchTableError(`cannot create table ${tableName(id)}: Glue database '${id.namespace}' does not exist`, { cause: err })
      throw err
    }
    if (await this.getTable(id)) throw new AlreadyExistsError(`Glue table ${tableName(id)} already exists`)
    const location = opts.location ?? (dbLocation ? `${dbLocation.replace(/\/+$/, '')}/${id.name}` : `${this.warehouse}/${id.namespace}.db/${id.name}`)
    const metadata = newTableMetadata({ location, schema: opts.schema, spec: opts.spec, sortOrder: opts.sortOrder, properties: opts.properties })
    const metadataLocation = await writeInitialMetadata(this.io, metadata)
    const input = tableInput(id, metadata, { [TABLE_TYPE]: ICEBERG, [METADATA_LOCATION]: metadataLocation })
    try {
      await this.glue.send(new CreateTableCommand({ ...this.cat, DatabaseName: id.namespace, TableInput: input }))
    } catch (err) {
      if (errorName(err) === 'AlreadyExistsException' || definitelyRejected(err)) {
        await discardMetadataFile(this.io, metadataLocation, tableName(id))
        if (errorName(err) === 'AlreadyExistsException') throw new AlreadyExistsError(`Glue table ${tableName(id)} already exists`, { cause: err })
        throw err
      }
      const now = await this.getTable(id).catch(() => undefined)
      if (now?.Parameters?.[METADATA_LOCATION] === metadataLocation) return { metadata, metadataLocation }
      throw new CommitStateUnknownError(`creating Glue table ${tableName(id)}: outcome unknown after ${errorName(err) || 'error'} (${(err as Error).message}); ${metadataLocation} kept`, { cause: err })
    }
    return { metadata, metadataLocation }
  }

  async commit(id: TableId, req: CommitRequest): Promise<{ metadataLocation: string; metadata: TableMetadata }> {
    const name = tableName(id)
    const table = await this.icebergTable(id)
    if (table.location !== req.base) {
      throw new CommitConflictError(`Glue table ${name}: base metadata ${req.base} is no longer current (the catalog points at ${table.location})`)
    }
    const prepared = await writeCommitMetadata(this.io, req)
    const parameters = { ...table.Parameters, [TABLE_TYPE]: ICEBERG, [METADATA_LOCATION]: prepared.path, [PREVIOUS_METADATA_LOCATION]: req.base }
    try {
      await this.glue.send(
        new UpdateTableCommand({
          ...this.cat,
          DatabaseName: id.namespace,
          SkipArchive: this.skipArchive,
          TableInput: tableInput(id, prepared.metadata, parameters, table),
          VersionId: table.VersionId,
        }),
      )
    } catch (err) {
      await this.resolveFailedSwap(name, id, err, prepared.path, table.VersionId)
    }
    await deleteObsoleteMetadata(this.io, prepared.obsolete, name)
    this.cache?.put(prepared.path, prepared.metadata)
    return { metadataLocation: prepared.path, metadata: prepared.metadata }
  }

  /** Same reasoning as DynamoDbCatalog: conflict (file deleted), landed after all, or unknown (file kept). */
  private async resolveFailedSwap(name: string, id: TableId, err: unknown, newPath: string, versionId: string | undefined): Promise<void> {
    const conflict = errorName(err) === 'ConcurrentModificationException'
    if (conflict && attemptsOf(err) <= 1) {
      await discardMetadataFile(this.io, newPath, name)
      throw new CommitConflictError(`Glue table ${name}: Glue detected a concurrent update (version ${versionId})`, { cause: err })
    }
    let now: Table | undefined
    try {
      now = await this.getTable(id)
    } catch (checkErr) {
      throw new CommitStateUnknownError(`Glue table ${name}: commit outcome unknown: ${errorName(err)} (${(err as Error).message}), and the check failed: ${(checkErr as Error).message}; ${newPath} kept`, { cause: err })
    }
    if (now?.Parameters?.[METADATA_LOCATION] === newPath) return
    const moved = now?.VersionId !== versionId
    if (conflict || moved || definitelyRejected(err)) {
      await discardMetadataFile(this.io, newPath, name)
      if (conflict || moved) throw new CommitConflictError(`Glue table ${name}: concurrent update detected`, { cause: err })
      throw err
    }
    throw new CommitStateUnknownError(`Glue table ${name}: commit outcome unknown: ${errorName(err) || 'error'} (${(err as Error).message}); ${newPath} kept`, { cause: err })
  }
}

function checkDatabase(namespace: string): void {
  if (!DB_NAME.test(namespace)) throw new IcebergError(`cannot use namespace '${namespace}' as a Glue database name: it must be 1-252 lowercase letters, digits or underscores`)
}

const isIceberg = (t: Table) => t.Parameters?.[TABLE_TYPE]?.toUpperCase() === ICEBERG

/** The TableInput Java's persistGlueTable sends (IcebergToGlueConverter.setTableInputInformation). */
export function tableInput(id: TableId, metadata: TableMetadata, parameters: Record<string, string>, existing?: Table): TableInput {
  const props = metadata.properties
  const description = props.comment ?? existing?.Description
  const additional = [...new Set(ADDITIONAL_LOCATION_PROPERTIES.map((k) => props[k]).filter((v): v is string => v !== undefined))]
  const columns: Column[] = glueColumns(metadata, existing?.StorageDescriptor?.Columns)
  return {
    Name: id.name,
    TableType: EXTERNAL_TABLE,
    Parameters: parameters,
    ...(description !== undefined ? { Description: description } : {}),
    StorageDescriptor: { Location: metadata.location, Columns: columns, AdditionalLocations: additional },
  }
}
