/**
 * Iceberg catalog in a DynamoDB table, item for item what Apache Iceberg Java's DynamoDbCatalog
 * writes (aws/src/main/java/org/apache/iceberg/aws/dynamodb/DynamoDbCatalog.java and
 * DynamoDbTableOperations.java), so Spark, Flink and EMR can share tables with Floe:
 *
 *   table row:     identifier = "<ns>.<table>", namespace = "<ns>", p.table_type = "ICEBERG",
 *                  p.metadata_location, p.previous_metadata_location (after the first commit),
 *                  created_at / updated_at (N, epoch millis), v (S, a fresh UUID per write)
 *   namespace row: identifier = "NAMESPACE", namespace = "<ns>", p.<property>…, created_at, updated_at, v
 *
 * Creates are conditioned on attribute_not_exists(v), commits on v = :v (optimistic locking).
 */
import { randomUUID } from 'node:crypto'
import { type AttributeValue, DynamoDBClient, GetItemCommand, PutItemCommand, QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb'
import { AlreadyExistsError, CommitConflictError, CommitStateUnknownError, IcebergError, NoSuchTableError } from '../errors.js'
import type { FileIO } from '../io/index.js'
import { newTableMetadata, readTableMetadata, type TableMetadata } from '../iceberg/index.js'
import type { MetadataCache } from './metadata-cache.js'
import { CATALOG_TABLE } from './table-def.js'
import { attemptsOf, definitelyRejected, errorName, isConditionFailed } from '../retry/index.js'
import { deleteObsoleteMetadata, discardMetadataFile, writeCommitMetadata, writeInitialMetadata } from './metadata-files.js'
import { type TableId, tableName, validateNamespace, validateTableId } from './identifier.js'
import type { Catalog, CommitRequest, CreateTableOptions, LoadedTable } from './types.js'

type Item = Record<string, AttributeValue>

const NAMESPACE_ID = 'NAMESPACE'
const GSI = CATALOG_TABLE.indexes[0].name
const P = 'p.'
const METADATA_LOCATION = `${P}metadata_location`
const PREVIOUS_METADATA_LOCATION = `${P}previous_metadata_location`
const TABLE_TYPE = `${P}table_type`
const DEFAULT_LOCATION = `${P}default_location`
const ICEBERG = 'ICEBERG'

const s = (v: string): AttributeValue => ({ S: v })
const n = (v: number): AttributeValue => ({ N: String(v) })
const str = (item: Item | undefined, key: string): string | undefined => item?.[key]?.S

export interface DynamoDbCatalogOptions {
  ddb: DynamoDBClient
  /** The catalog table (Iceberg Java's default: `iceberg`). */
  tableName?: string
  /** `s3://bucket/prefix` or `file:///path`: default root of table locations. */
  warehouse: string
  io: FileIO
  /** Parsed metadata by location, shared across loads (metadata-cache.ts); default: none. */
  metadataCache?: MetadataCache
  /** Clock for created_at/updated_at (tests). */
  now?: () => number
}

export class DynamoDbCatalog implements Catalog {
  readonly table: string
  private readonly ddb: DynamoDBClient
  private readonly warehouse: string
  private readonly io: FileIO
  private readonly cache?: MetadataCache
  private readonly now: () => number

  constructor(opts: DynamoDbCatalogOptions) {
    this.ddb = opts.ddb
    this.table = opts.tableName ?? CATALOG_TABLE.defaultName
    this.warehouse = opts.warehouse.replace(/\/+$/, '')
    this.io = opts.io
    this.cache = opts.metadataCache
    this.now = opts.now ?? Date.now
  }

  private tableKey(id: TableId): Item {
    return { identifier: s(tableName(id)), namespace: s(id.namespace) }
  }

  private namespaceKey(ns: string): Item {
    return { identifier: s(NAMESPACE_ID), namespace: s(ns) }
  }

  private newEntryMetadata(): Item {
    const now = this.now()
    return { created_at: n(now), updated_at: n(now), v: s(randomUUID()) }
  }

  private async getItem(key: Item): Promise<Item | undefined> {
    const res = await this.ddb.send(new GetItemCommand({ TableName: this.table, Key: key, ConsistentRead: true }))
    return res.Item
  }

  async createNamespace(namespace: string, properties: Record<string, string> = {}): Promise<void> {
    validateNamespace(namespace)
    const item: Item = { ...this.namespaceKey(namespace), ...this.newEntryMetadata() }
    for (const [k, v] of Object.entries(properties)) item[P + k] = s(v)
    try {
      await this.ddb.send(new PutItemCommand({ TableName: this.table, Item: item, ConditionExpression: 'attribute_not_exists(v)' }))
    } catch (err) {
      if (isConditionFailed(err)) throw new AlreadyExistsError(`namespace '${namespace}' already exists in DynamoDB catalog ${this.table}`, { cause: err })
      throw err
    }
  }

  async loadNamespace(namespace: string): Promise<Record<string, string> | undefined> {
    const item = await this.getItem(this.namespaceKey(namespace))
    if (!item) return undefined
    const props: Record<string, string> = {}
    for (const [k, v] of Object.entries(item)) if (k.startsWith(P) && v.S !== undefined) props[k.slice(P.length)] = v.S
    return props
  }

  async listNamespaces(): Promise<string[]> {
    const out: string[] = []
    let start: Item | undefined
    do {
      const res = await this.ddb.send(
        new QueryCommand({
          TableName: this.table,
          ConsistentRead: true,
          KeyConditionExpression: 'identifier = :identifier',
          ExpressionAttributeValues: { ':identifier': s(NAMESPACE_ID) },
          ExclusiveStartKey: start,
        }),
      )
      for (const item of res.Items ?? []) out.push(str(item, 'namespace')!)
      start = res.LastEvaluatedKey
    } while (start && Object.keys(start).length > 0)
    return out
  }

  async listTables(namespace: string): Promise<TableId[]> {
    const out: TableId[] = []
    let start: Item | undefined
    do {
      const res = await this.ddb.send(
        new QueryCommand({
          TableName: this.table,
          IndexName: GSI,
          KeyConditionExpression: 'namespace = :ns',
          ExpressionAttributeValues: { ':ns': s(namespace) },
          ExclusiveStartKey: start,
        }),
      )
      for (const item of res.Items ?? []) {
        const identifier = str(item, 'identifier')!
        if (identifier !== NAMESPACE_ID) out.push({ namespace, name: identifier.slice(identifier.lastIndexOf('.') + 1) })
      }
      start = res.LastEvaluatedKey
    } while (start && Object.keys(start).length > 0)
    return out
  }

  /** The table's row, or NoSuchTableError if it is absent or not an Iceberg table. */
  private async tableItem(id: TableId): Promise<Item> {
    validateTableId(id)
    const item = await this.getItem(this.tableKey(id))
    if (!item) throw new NoSuchTableError(`table ${tableName(id)} does not exist in DynamoDB catalog ${this.table}`)
    const type = str(item, TABLE_TYPE)
    if (type?.toUpperCase() !== ICEBERG) throw new NoSuchTableError(`table ${tableName(id)} in DynamoDB catalog ${this.table} is not an Iceberg table (${TABLE_TYPE}=${type})`)
    if (!str(item, METADATA_LOCATION)) throw new IcebergError(`table ${tableName(id)} in DynamoDB catalog ${this.table} has no ${METADATA_LOCATION}`)
    return item
  }

  async loadTable(id: TableId): Promise<LoadedTable> {
    const metadataLocation = str(await this.tableItem(id), METADATA_LOCATION)!
    return { metadata: await (this.cache ? this.cache.read(this.io, metadataLocation) : readTableMetadata(this.io, metadataLocation)), metadataLocation }
  }

  async createTable(id: TableId, opts: CreateTableOptions): Promise<LoadedTable> {
    validateTableId(id)
    const ns = await this.getItem(this.namespaceKey(id.namespace))
    if (!ns) throw new NoSuchTableError(`cannot create table ${tableName(id)}: namespace '${id.namespace}' does not exist in DynamoDB catalog ${this.table}`)
    if (await this.getItem(this.tableKey(id))) throw new AlreadyExistsError(`table ${tableName(id)} already exists in DynamoDB catalog ${this.table}`)
    const nsLocation = str(ns, DEFAULT_LOCATION)?.replace(/\/+$/, '')
    const location = opts.location ?? (nsLocation ? `${nsLocation}/${id.name}` : `${this.warehouse}/${id.namespace}.db/${id.name}`)
    const metadata = newTableMetadata({ location, schema: opts.schema, spec: opts.spec, sortOrder: opts.sortOrder, properties: opts.properties })
    const metadataLocation = await writeInitialMetadata(this.io, metadata)
    const item: Item = { ...this.tableKey(id), [TABLE_TYPE]: s(ICEBERG), [METADATA_LOCATION]: s(metadataLocation), ...this.newEntryMetadata() }
    try {
      await this.ddb.send(new PutItemCommand({ TableName: this.table, Item: item, ConditionExpression: 'attribute_not_exists(v)' }))
    } catch (err) {
      if (isConditionFailed(err) && attemptsOf(err) <= 1) {
        await discardMetadataFile(this.io, metadataLocation, tableName(id))
        throw new AlreadyExistsError(`table ${tableName(id)} already exists in DynamoDB catalog ${this.table}`, { cause: err })
      }
      const current = await this.getItem(this.tableKey(id)).catch(() => undefined)
      if (str(current, METADATA_LOCATION) === metadataLocation) return { metadata, metadataLocation }
      if (definitelyRejected(err) || current) {
        await discardMetadataFile(this.io, metadataLocation, tableName(id))
        if (current) throw new AlreadyExistsError(`table ${tableName(id)} already exists in DynamoDB catalog ${this.table}`, { cause: err })
        throw err
      }
      throw new CommitStateUnknownError(`creating table ${tableName(id)}: outcome unknown after ${errorName(err) || 'error'} (${(err as Error).message}); ${metadataLocation} kept`, { cause: err })
    }
    return { metadata, metadataLocation }
  }

  async commit(id: TableId, req: CommitRequest): Promise<{ metadataLocation: string; metadata: TableMetadata }> {
    const table = tableName(id)
    const item = await this.tableItem(id)
    const current = str(item, METADATA_LOCATION)!
    if (current !== req.base) {
      throw new CommitConflictError(`table ${table}: base metadata ${req.base} is no longer current (the catalog points at ${current})`)
    }
    const version = item.v!
    const prepared = await writeCommitMetadata(this.io, req)
    const values: Item = {
      ':type': s(ICEBERG),
      ':loc': s(prepared.path),
      ':prev': s(req.base),
      ':uat': n(this.now()),
      ':uv': s(randomUUID()),
      ':v': version,
    }
    try {
      await this.ddb.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: this.tableKey(id),
          UpdateExpression: 'SET #type = :type, #loc = :loc, #prev = :prev, updated_at = :uat, v = :uv',
          ConditionExpression: 'v = :v',
          ExpressionAttributeNames: { '#type': TABLE_TYPE, '#loc': METADATA_LOCATION, '#prev': PREVIOUS_METADATA_LOCATION },
          ExpressionAttributeValues: values,
        }),
      )
    } catch (err) {
      await this.resolveFailedSwap(table, id, err, prepared.path, version)
    }
    await deleteObsoleteMetadata(this.io, prepared.obsolete, table)
    this.cache?.put(prepared.path, prepared.metadata)
    return { metadataLocation: prepared.path, metadata: prepared.metadata }
  }

  /**
   * Decides what a failed UpdateItem means. Returns if the swap landed after all (an earlier
   * attempt succeeded); throws CommitConflictError when it definitely did not (and deletes the
   * new file), CommitStateUnknownError when it may still land (and keeps the file).
   */
  private async resolveFailedSwap(table: string, id: TableId, err: unknown, newPath: string, version: AttributeValue): Promise<void> {
    const conditional = isConditionFailed(err)
    if (conditional && attemptsOf(err) <= 1) {
      await discardMetadataFile(this.io, newPath, table)
      throw new CommitConflictError(`table ${table}: concurrent update detected (version ${version.S} changed)`, { cause: err })
    }
    let now: Item | undefined
    try {
      now = await this.getItem(this.tableKey(id))
    } catch (checkErr) {
      throw new CommitStateUnknownError(`table ${table}: commit outcome unknown: ${errorName(err)} (${(err as Error).message}), and the check failed: ${(checkErr as Error).message}; ${newPath} kept`, { cause: err })
    }
    if (str(now, METADATA_LOCATION) === newPath) return
    // Someone else's write changed v: our request, conditioned on the old v, can never apply.
    if (conditional || definitelyRejected(err) || now?.v?.S !== version.S) {
      await discardMetadataFile(this.io, newPath, table)
      if (conditional || now?.v?.S !== version.S) throw new CommitConflictError(`table ${table}: concurrent update detected`, { cause: err })
      throw err
    }
    throw new CommitStateUnknownError(`table ${table}: commit outcome unknown: ${errorName(err) || 'error'} (${(err as Error).message}); ${newPath} kept`, { cause: err })
  }
}
