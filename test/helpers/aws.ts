/**
 * AWS clients and fresh resources for tests, on the endpoints test/setup/global.ts started (or
 * LocalStack's). Every helper creates uniquely named resources so test files can run in parallel.
 */
import { randomUUID } from 'node:crypto'
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { S3Client } from '@aws-sdk/client-s3'
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb'
import { createClients, type AwsClients } from '../../lib/clients.js'
import { LOCAL_CREDENTIALS } from '../../lib/local/endpoints.js'
import { ensureBucket, ensureCatalogTable, ensureControlTable } from '../../lib/local/init.js'

export interface TestAws {
  s3: S3Client
  ddb: DynamoDBClient
  doc: DynamoDBDocumentClient
  region: string
  endpoints: { s3: string; dynamodb: string }
  /** What createClients() returns: pass it wherever production code takes `clients`. */
  clients: AwsClients
}

let cached: TestAws | undefined

/** The shared clients of this test worker. */
export function testAws(): TestAws {
  if (cached) return cached
  const s3 = process.env.AWS_ENDPOINT_URL_S3
  const dynamodb = process.env.AWS_ENDPOINT_URL_DYNAMODB
  if (!s3 || !dynamodb) {
    throw new Error('AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL_DYNAMODB are not set: run tests with vitest (test/setup/global.ts starts the endpoints)')
  }
  // A few attempts only: a local endpoint that fails is a bug to see, not to retry for long.
  const clients = createClients({ endpoints: { s3, dynamodb }, maxAttempts: 3 })
  cached = { s3: clients.s3, ddb: clients.ddb, doc: clients.doc, region: clients.region, endpoints: { s3, dynamodb }, clients }
  return cached
}

/** A unique lowercase name usable as a bucket or table name: `<prefix>-<12 hex>`. */
export function uniqueName(prefix = 'test'): string {
  return `${prefix}-${randomUUID().replace(/-/g, '').slice(0, 12)}`.toLowerCase()
}

/** A fresh, empty bucket; returns its name. */
export async function createTestBucket(prefix = 'floe-test'): Promise<string> {
  const bucket = uniqueName(prefix)
  await ensureBucket(testAws().s3, bucket)
  return bucket
}

/** A fresh control table (CONTROL_TABLE key schema, `pending` index, TTL); returns its name. */
export async function createTestControlTable(prefix = 'floe-control'): Promise<string> {
  const name = uniqueName(prefix)
  await ensureControlTable(testAws().ddb, name)
  return name
}

/** A fresh catalog table in Iceberg Java's DynamoDbCatalog layout; returns its name. */
export async function createTestCatalogTable(prefix = 'iceberg'): Promise<string> {
  const name = uniqueName(prefix)
  await ensureCatalogTable(testAws().ddb, name)
  return name
}

/**
 * The live Glue test's database: `LIVE_GLUE_DATABASE` (an existing Glue database you may create
 * tables in), used only with real AWS credentials. A test variable, not a FLOE_* setting — Floe
 * never reads it, and lib/config rejects unknown FLOE_* variables. `skip` says why there is none.
 */
export function liveGlueDatabase(env: NodeJS.ProcessEnv = process.env): { database: string } | { skip: string } {
  const database = env.LIVE_GLUE_DATABASE
  if (!database) return { skip: 'LIVE_GLUE_DATABASE is not set' }
  if (!env.AWS_ACCESS_KEY_ID || env.AWS_ACCESS_KEY_ID === LOCAL_CREDENTIALS.accessKeyId)
    return { skip: 'no real AWS credentials in the environment (with s3rver the test setup replaces them with local ones: point AWS_ENDPOINT_URL_S3/_DYNAMODB at running local servers to keep yours)' }
  return { database }
}
