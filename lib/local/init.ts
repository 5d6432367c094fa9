/**
 * Idempotent creation of the resources Floe needs on an endpoint that has none yet (DynamoDB
 * Local, s3rver, LocalStack, or a bare AWS account for a quick try): the control table, the
 * Iceberg-Java-compatible catalog table and the warehouse bucket. Key schemas come from the same
 * definitions the CDK stack uses (lib/control/table-def.ts, lib/catalog/table-def.ts).
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  ResourceInUseException,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
  type CreateTableCommandInput,
  type DynamoDBClient,
  type ProjectionType,
} from '@aws-sdk/client-dynamodb'
import { CreateBucketCommand, HeadBucketCommand, type S3Client } from '@aws-sdk/client-s3'
import { CATALOG_TABLE } from '../catalog/index.js'
import { CONTROL_TABLE } from '../control/index.js'
import { errorName, statusOf } from '../retry/index.js'

export type EnsureResult = 'created' | 'exists'

interface KeyDef {
  name: string
  type: string
}
interface TableDef {
  partitionKey: KeyDef
  sortKey: KeyDef
  indexes: readonly { name: string; partitionKey: KeyDef; sortKey: KeyDef; projection?: ProjectionType }[]
}

/** Control table: pk/sk, the sparse `pending` index (all attributes projected) and TTL on `ttl`. */
export async function ensureControlTable(ddb: DynamoDBClient, name: string): Promise<EnsureResult> {
  const result = await ensureTable(ddb, name, CONTROL_TABLE, 'ALL')
  await ensureTtl(ddb, name, CONTROL_TABLE.ttlAttribute)
  return result
}

/**
 * Catalog table exactly as Iceberg Java's DynamoDbCatalog creates it: hash `identifier`, range
 * `namespace`, GSI `namespace-identifier` (keys only), on-demand billing.
 */
export function ensureCatalogTable(ddb: DynamoDBClient, name: string): Promise<EnsureResult> {
  return ensureTable(ddb, name, CATALOG_TABLE, 'KEYS_ONLY')
}

export async function ensureBucket(s3: S3Client, bucket: string): Promise<EnsureResult> {
  try {
    await s3.send(new HeadBucketCommand({ Bucket: bucket }))
    return 'exists'
  } catch (err) {
    if (statusOf(err) !== 404 && errorName(err) !== 'NotFound' && errorName(err) !== 'NoSuchBucket') throw err
  }
  try {
    await s3.send(new CreateBucketCommand({ Bucket: bucket }))
    return 'created'
  } catch (err) {
    // Someone (a parallel `floe init`) created it between our HEAD and our PUT.
    if (errorName(err) === 'BucketAlreadyOwnedByYou' || errorName(err) === 'BucketAlreadyExists') return 'exists'
    throw err
  }
}

/** The table's key schema as CreateTable input (shared with tests). */
export function createTableInput(name: string, def: TableDef, projection: ProjectionType): CreateTableCommandInput {
  const attrs = new Map<string, string>()
  for (const k of [def.partitionKey, def.sortKey, ...def.indexes.flatMap((i) => [i.partitionKey, i.sortKey])]) attrs.set(k.name, k.type)
  return {
    TableName: name,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [...attrs].map(([AttributeName, AttributeType]) => ({ AttributeName, AttributeType: AttributeType as 'S' | 'N' | 'B' })),
    KeySchema: [
      { AttributeName: def.partitionKey.name, KeyType: 'HASH' },
      { AttributeName: def.sortKey.name, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: def.indexes.map((i) => ({
      IndexName: i.name,
      KeySchema: [
        { AttributeName: i.partitionKey.name, KeyType: 'HASH' },
        { AttributeName: i.sortKey.name, KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: i.projection ?? projection },
    })),
  }
}

async function ensureTable(ddb: DynamoDBClient, name: string, def: TableDef, projection: ProjectionType): Promise<EnsureResult> {
  let result: EnsureResult = 'exists'
  if (!(await tableExists(ddb, name))) {
    try {
      await ddb.send(new CreateTableCommand(createTableInput(name, def, projection)))
      result = 'created'
    } catch (err) {
      if (!(err instanceof ResourceInUseException)) throw err
    }
  }
  await waitUntilTableExists({ client: ddb, maxWaitTime: 120, minDelay: 1, maxDelay: 5 }, { TableName: name })
  await checkKeys(ddb, name, def)
  return result
}

/** An existing table with other keys would fail much later and obscurely: say so now. */
async function checkKeys(ddb: DynamoDBClient, name: string, def: TableDef): Promise<void> {
  const { Table } = await ddb.send(new DescribeTableCommand({ TableName: name }))
  const keys = (Table?.KeySchema ?? []).map((k) => `${k.AttributeName}:${k.KeyType}`).join(',')
  const want = `${def.partitionKey.name}:HASH,${def.sortKey.name}:RANGE`
  if (keys !== want) throw new Error(`DynamoDB table ${name} exists with keys ${keys || '(none)'}; Floe needs ${want}`)
  const indexes = new Set((Table?.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName))
  const missing = def.indexes.filter((i) => !indexes.has(i.name)).map((i) => i.name)
  if (missing.length) throw new Error(`DynamoDB table ${name} exists without index ${missing.join(', ')}`)
}

async function tableExists(ddb: DynamoDBClient, name: string): Promise<boolean> {
  try {
    await ddb.send(new DescribeTableCommand({ TableName: name }))
    return true
  } catch (err) {
    if (err instanceof ResourceNotFoundException) return false
    throw err
  }
}

async function ensureTtl(ddb: DynamoDBClient, name: string, attribute: string): Promise<void> {
  const { TimeToLiveDescription: ttl } = await ddb.send(new DescribeTimeToLiveCommand({ TableName: name }))
  if (ttl?.TimeToLiveStatus === 'ENABLED' || ttl?.TimeToLiveStatus === 'ENABLING') return
  await ddb.send(new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: { AttributeName: attribute, Enabled: true } }))
}
