/** Catalogs: one interface (types.ts), a DynamoDB catalog in Iceberg Java's layout, and AWS Glue. */
import type { AwsClients } from '../clients.js'
import type { FloeConfig } from '../config.js'
import { AlreadyExistsError } from '../errors.js'
import type { FileIO } from '../io/index.js'
import { DynamoDbCatalog } from './dynamodb.js'
import { GlueCatalog } from './glue.js'
import { MetadataCache } from './metadata-cache.js'
import { createRestCatalog } from './rest/factory.js'
import type { Catalog } from './types.js'

export type { Catalog, CommitRequest, CreateTableOptions, LoadedTable } from './types.js'
export { normalizeTableId, normalizeTableName, parseTableId, sanitizeName, tableName, validateNamespace, validateTableId, type TableId } from './identifier.js'
export { DynamoDbCatalog } from './dynamodb.js'
export { GlueCatalog } from './glue.js'
export { MetadataCache } from './metadata-cache.js'
export { PointerCachedCatalog, withPointerCache } from './pointer-cache.js'
export { RestCatalog, type RestCatalogOptions } from './rest/catalog.js'
export { bearerAuth, noAuth, oauth2Auth, sigV4Auth, signingNameFor, type RestAuth } from './rest/auth.js'
export { createRestCatalog } from './rest/factory.js'
export { commitWithRebase, type Rebased, type RebaseCatalog, type RebaseOptions, type RebaseResult } from './rebase.js'
export { serveRest, type RestServerRequest, type RestServerResponse } from './rest-server/router.js'
export { listenRest, type ServingRest } from './rest-server/listen.js'
export { CATALOG_TABLE } from './table-def.js'

/**
 * The catalog FLOE_CATALOG names: `dynamodb` (table FLOE_CATALOG_TABLE), `glue` (FLOE_GLUE_CATALOG_ID)
 * or `rest` (FLOE_REST_*: the server writes metadata, so no metadata cache is involved).
 * Every catalog built here parses a metadata file once per location while the process lives
 * (FLOE_METADATA_CACHE_ENTRIES, metadata-cache.ts): a warm writer's table load is then one pointer
 * read however long the table's history is.
 */
export function createCatalog(
  config: Pick<FloeConfig, 'catalog' | 'catalogTable' | 'warehouse' | 'glueCatalogId'> & Partial<Pick<FloeConfig, 'metadataCacheEntries' | 'rest'>>,
  clients: Pick<AwsClients, 'ddb' | 'glue'> & Partial<Pick<AwsClients, 's3' | 'secrets' | 'region'>>,
  io: FileIO,
): Catalog {
  if (config.catalog === 'rest') {
    if (!config.rest || !clients.s3 || !clients.secrets || !clients.region) throw new Error('createCatalog: FLOE_CATALOG=rest needs the FLOE_REST_* config and the s3/secrets clients')
    return createRestCatalog(config.rest, { region: clients.region, credentials: clients.s3.config.credentials, secrets: clients.secrets })
  }
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
