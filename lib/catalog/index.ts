/** Catalogs: one interface (types.ts), a DynamoDB catalog in Iceberg Java's layout, and AWS Glue. */
import type { AwsClients } from '../clients.js'
import type { FloeConfig } from '../config.js'
import { AlreadyExistsError } from '../errors.js'
import type { FileIO } from '../io/types.js'
import { DynamoDbCatalog } from './dynamodb.js'
import { GlueCatalog } from './glue.js'
import { MetadataCache } from './metadata-cache.js'
import type { Catalog } from './types.js'

export type { Catalog, CommitRequest, CreateTableOptions, LoadedTable, TableId } from './types.js'
export { parseTableId, tableName, validateTableId } from './types.js'
export { DynamoDbCatalog } from './dynamodb.js'
export { GlueCatalog } from './glue.js'
export { MetadataCache } from './metadata-cache.js'

/**
 * The catalog FLOE_CATALOG names: `dynamodb` (table FLOE_CATALOG_TABLE) or `glue` (FLOE_GLUE_CATALOG_ID).
 * Every catalog built here parses a metadata file once per location while the process lives
 * (FLOE_METADATA_CACHE_ENTRIES, metadata-cache.ts): a warm writer's table load is then one pointer
 * read however long the table's history is.
 */
export function createCatalog(
  config: Pick<FloeConfig, 'catalog' | 'catalogTable' | 'warehouse' | 'glueCatalogId'> & Partial<Pick<FloeConfig, 'metadataCacheEntries'>>,
  clients: Pick<AwsClients, 'ddb' | 'glue'>,
  io: FileIO,
): Catalog {
  const metadataCache = new MetadataCache(config.metadataCacheEntries ?? DEFAULT_CACHE_ENTRIES)
  if (config.catalog === 'glue') return new GlueCatalog({ glue: clients.glue(), catalogId: config.glueCatalogId, warehouse: config.warehouse, io, metadataCache })
  return new DynamoDbCatalog({ ddb: clients.ddb, tableName: config.catalogTable, warehouse: config.warehouse, io, metadataCache })
}

const DEFAULT_CACHE_ENTRIES = 64

/** Creates a namespace unless it exists (auto-created tables need one). */
export async function ensureNamespace(catalog: Catalog, namespace: string): Promise<void> {
  try {
    await catalog.createNamespace(namespace)
  } catch (err) {
    if (!(err instanceof AlreadyExistsError)) throw err
  }
}
