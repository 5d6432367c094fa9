import { GlueClient } from '@aws-sdk/client-glue'
import { describe, expect, it } from 'vitest'
import { createCatalog, DynamoDbCatalog, GlueCatalog } from '../../lib/catalog/index.js'
import { createFileIO } from '../../lib/io/index.js'
import { testAws } from '../helpers/aws.js'

describe('createCatalog', () => {
  const aws = testAws()
  const io = createFileIO(aws.clients)
  const base = { warehouse: 's3://bucket/wh', catalogTable: 'iceberg' }

  it('builds the catalog FLOE_CATALOG names', () => {
    expect(createCatalog({ ...base, catalog: 'dynamodb' }, aws.clients, io)).toBeInstanceOf(DynamoDbCatalog)
    // Glue is only constructed here, never called (Glue has no local server).
    const glue = new GlueClient({ region: 'us-east-1' })
    expect(createCatalog({ ...base, catalog: 'glue', glueCatalogId: '123456789012' }, { ddb: aws.ddb, glue: () => glue }, io)).toBeInstanceOf(GlueCatalog)
  })

  it('uses the configured DynamoDB table name', () => {
    const c = createCatalog({ ...base, catalog: 'dynamodb', catalogTable: 'my_catalog' }, aws.clients, io) as DynamoDbCatalog
    expect(c.table).toBe('my_catalog')
  })
})
