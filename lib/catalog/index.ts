/** Catalogs: one interface (types.ts), a DynamoDB catalog in Iceberg Java's layout, and AWS Glue. */
import type { AwsClients } from '../clients.js'
import type { FloeConfig } from '../config.js'
import { AlreadyExistsError } from '../errors.js'
import type { FileIO } from '../io/types.js'
import { DynamoDbCatalog } from './dynamodb.js'
import { GlueCatalog } from './glue.js'
import type { Catalog } from './types.js'

export type { Catalog, CommitRequest, CreateTableOptions, LoadedTable, TableId } from './types.js'
export { parseTableId, tableName, validateTableId } from './types.js'
export { DynamoDbCatalog } from './dynamodb.js'
export { GlueCatalog } from './glue.js'

/** The catalog FLOE_CATALOG names: `dynamodb` (table FLOE_CATALOG_TABLE) or `glue` (FLOE_GLUE_CATALOG_ID). */
export function createCatalog(
  config: Pick<FloeConfig, 'catalog' | 'catalogTable' | 'warehouse' | 'glueCatalogId'>,
  clients: Pick<AwsClients, 'ddb' | 'glue'>,
  io: FileIO,
): Catalog {
  if (config.catalog === 'glue') return new GlueCatalog({ glue: clients.glue(), catalogId: config.glueCatalogId, warehouse: config.warehouse, io })
  return new DynamoDbCatalog({ ddb: clients.ddb, tableName: config.catalogTable, warehouse: config.warehouse, io })
}

/** Creates a namespace unless it exists (auto-created tables need one). */
export async function ensureNamespace(catalog: Catalog, namespace: string): Promise<void> {
  try {
    await catalog.createNamespace(namespace)
  } catch (err) {
    if (!(err instanceof AlreadyExistsError)) throw err
  }
}
