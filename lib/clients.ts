/**
 * The one factory for AWS clients. Every part of Floe that talks to AWS (or to a local stand-in:
 * DynamoDB Local, s3rver, LocalStack) gets its clients here, so endpoints, retries and checksum
 * behaviour are decided in one place.
 */
import { S3Client } from '@aws-sdk/client-s3'
import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb'
import { GlueClient } from '@aws-sdk/client-glue'
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager'

export interface Endpoints {
  s3?: string
  dynamodb?: string
  glue?: string
}

export interface ClientOptions {
  /** Default: AWS_REGION, AWS_DEFAULT_REGION, then us-east-1. */
  region?: string
  /** SDK attempts per request (FLOE_AWS_MAX_ATTEMPTS); default 5. */
  maxAttempts?: number
  /** Explicit endpoints win over AWS_ENDPOINT_URL_<SERVICE> and AWS_ENDPOINT_URL. */
  endpoints?: Endpoints
  /** Static credentials (local emulators); default: the SDK's provider chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string }
  /** Environment to read endpoint variables from; default process.env. */
  env?: NodeJS.ProcessEnv
}

export interface AwsClients {
  s3: S3Client
  ddb: DynamoDBClient
  /** Marshalls with removeUndefinedValues; numbers are NOT wrapped: store 64-bit ids as strings. */
  doc: DynamoDBDocumentClient
  /** Created on first use (only Glue catalogs and registries need them). */
  glue(): GlueClient
  secrets(): SecretsManagerClient
  region: string
  /** The endpoints in use (undefined = the real AWS endpoint). */
  endpoints: Endpoints
  /** Closes every client created so far (sockets), including lazily created ones. */
  destroy(): void
}

/**
 * Endpoints from the environment, the way the AWS SDKs read them: the service-specific
 * variable wins over AWS_ENDPOINT_URL. Empty strings count as unset.
 */
export function endpointsFromEnv(env: NodeJS.ProcessEnv = process.env): Endpoints {
  const pick = (specific: string) => nonEmpty(env[specific]) ?? nonEmpty(env.AWS_ENDPOINT_URL)
  return {
    s3: pick('AWS_ENDPOINT_URL_S3'),
    dynamodb: pick('AWS_ENDPOINT_URL_DYNAMODB'),
    glue: pick('AWS_ENDPOINT_URL_GLUE'),
  }
}

export function createClients(opts: ClientOptions = {}): AwsClients {
  const env = opts.env ?? process.env
  const region = opts.region ?? nonEmpty(env.AWS_REGION) ?? nonEmpty(env.AWS_DEFAULT_REGION) ?? 'us-east-1'
  const fromEnv = endpointsFromEnv(env)
  const endpoints: Endpoints = {
    s3: opts.endpoints?.s3 ?? fromEnv.s3,
    dynamodb: opts.endpoints?.dynamodb ?? fromEnv.dynamodb,
    glue: opts.endpoints?.glue ?? fromEnv.glue,
  }
  const common = {
    region,
    maxAttempts: opts.maxAttempts ?? 5,
    ...(opts.credentials ? { credentials: opts.credentials } : {}),
  }
  const s3 = new S3Client({
    ...common,
    ...(endpoints.s3 ? { endpoint: endpoints.s3, forcePathStyle: true } : {}),
    // s3rver, LocalStack and many S3-compatible stores reject or mangle the SDK's default
    // CRC32 trailers; checksums are only sent and checked where the API requires them.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  })
  const ddb = new DynamoDBClient({ ...common, ...(endpoints.dynamodb ? { endpoint: endpoints.dynamodb } : {}) })
  const doc = DynamoDBDocumentClient.from(ddb, { marshallOptions: { removeUndefinedValues: true } })
  let glue: GlueClient | undefined
  let secrets: SecretsManagerClient | undefined
  return {
    s3,
    ddb,
    doc,
    glue: () => (glue ??= new GlueClient({ ...common, ...(endpoints.glue ? { endpoint: endpoints.glue } : {}) })),
    secrets: () =>
      (secrets ??= new SecretsManagerClient({
        ...common,
        ...(nonEmpty(env.AWS_ENDPOINT_URL_SECRETS_MANAGER) ?? nonEmpty(env.AWS_ENDPOINT_URL)
          ? { endpoint: nonEmpty(env.AWS_ENDPOINT_URL_SECRETS_MANAGER) ?? nonEmpty(env.AWS_ENDPOINT_URL) }
          : {}),
      })),
    region,
    endpoints,
    destroy() {
      s3.destroy()
      doc.destroy()
      ddb.destroy()
      glue?.destroy()
      secrets?.destroy()
    },
  }
}

/** Release sockets (tests and the CLI call this before exiting). */
export function destroyClients(clients: AwsClients): void {
  clients.destroy()
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v.trim()
}
