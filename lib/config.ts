/**
 * Every Floe setting, read once from `FLOE_*` environment variables and validated with zod.
 * Unknown `FLOE_*` variables are rejected (they are almost always typos), and every error names
 * the variable and the bad value. Each limit says why its default is what it is; the README's
 * settings table is generated from the same facts (keep them in step).
 */
import { z } from 'zod'
import { ConfigError } from './errors.js'

const mb = (def: number, min = 1, max = 10_240) => z.coerce.number().int().min(min).max(max).default(def)
const int = (def: number, min = 0, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max).default(def)
const location = z.string().regex(/^(s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/.*)?|file:\/\/.+)$/, 'expected s3://bucket/prefix or file:///path')

/** Value formats understood by lib/codec. */
export const VALUE_FORMATS = ['json', 'json-schema-envelope', 'avro-confluent', 'avro-glue', 'string', 'bytes'] as const
export type ValueFormat = (typeof VALUE_FORMATS)[number]

/** Options of one table (or of every dynamic table, via `tableDefaults`). */
export const TableOptionsSchema = z
  .object({
    /** Create the table on first write, with a schema inferred from the records (or the Avro schema). */
    autoCreate: z.boolean().default(true),
    /** Iceberg partition transforms over column names, e.g. ["day(ts)", "bucket(16, user_id)"]. */
    partitionBy: z.array(z.string().min(1)).default([]),
    /** Add unknown fields as optional columns (committed through the catalog) instead of ignoring them. */
    evolveSchema: z.boolean().default(true),
    /** Iceberg identifier-field-ids, by column name. */
    idColumns: z.array(z.string().min(1)).default([]),
    /** Add a `_kafka` struct column. `true` = all of topic, partition, offset, timestamp, key, headers. */
    kafkaMetadata: z
      .union([z.boolean(), z.array(z.enum(['topic', 'partition', 'offset', 'timestamp', 'key', 'headers']))])
      .default(false),
    /** Table properties set when Floe creates the table (e.g. write.parquet.compression-codec). */
    properties: z.record(z.string(), z.string()).default({}),
  })
  .strict()
export type TableOptions = z.infer<typeof TableOptionsSchema>

const topicMatch = {
  /** Exact topic name. */
  topic: z.string().min(1).optional(),
  /** Regular expression over the topic name (anchored by the author, not by Floe). */
  topicPattern: z.string().min(1).optional(),
}

export const RouteSchema = z.union([
  /** Every record of the matching topics (or of all topics) goes to one table; `{topic}` in the name is replaced by the topic (sanitized). */
  z.object({ ...topicMatch, table: z.string().min(1) }).strict(),
  /** A field's value is matched against per-table regexes; a record may match several tables. */
  z.object({ ...topicMatch, field: z.string().min(1), match: z.record(z.string(), z.string()) }).strict(),
  /** Dynamic tables: the table name is the field's value (optionally namespaced and prefixed). */
  z
    .object({
      ...topicMatch,
      tableFromField: z.string().min(1),
      namespace: z.string().min(1).optional(),
      prefix: z.string().default(''),
    })
    .strict(),
])
export type Route = z.infer<typeof RouteSchema>

export const FormatRuleSchema = z
  .object({ ...topicMatch, value: z.enum(VALUE_FORMATS).optional(), key: z.enum(VALUE_FORMATS).optional() })
  .strict()

export const RoutesSchema = z
  .object({
    /** Namespace of table names given without one. */
    defaultNamespace: z.string().min(1).default('default'),
    /** Per-table options keyed by `namespace.table` (or a bare table name in the default namespace). */
    tables: z.record(z.string(), TableOptionsSchema).default({}),
    /** Options for tables not listed in `tables` (dynamic tables). */
    tableDefaults: TableOptionsSchema.default(TableOptionsSchema.parse({})),
    routes: z.array(RouteSchema).min(1),
    /** What happens to a record no route matches: never silent. */
    unrouted: z
      .union([z.enum(['dead-letter', 'drop']), z.object({ table: z.string().min(1) }).strict()])
      .default('dead-letter'),
    /** Per-topic value/key formats; the first matching rule wins, then FLOE_VALUE_FORMAT. */
    formats: z.array(FormatRuleSchema).default([]),
  })
  .strict()
export type Routes = z.infer<typeof RoutesSchema>

const jsonOf = <T extends z.ZodTypeAny>(schema: T) =>
  z.string().transform((text, ctx) => {
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `not valid JSON (${(err as Error).message})` })
      return z.NEVER
    }
    const result = schema.safeParse(parsed)
    if (!result.success) {
      for (const issue of result.error.issues) ctx.addIssue({ ...issue, code: 'custom', path: issue.path } as never)
      return z.NEVER
    }
    return result.data as z.infer<T>
  })

/**
 * The settings. Keys are the environment variable names; defaults are chosen for a Lambda
 * function with 1,024 MB of memory consuming an MSK topic with the mapping's default batching.
 */
export const SETTINGS = {
  /** Name of this pipeline: scopes checkpoints, batches and snapshot summary keys (`floe.offsets.<pipeline>`). */
  FLOE_PIPELINE: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits, _ . - (1-64)').default('floe'),
  /** DynamoDB table for checkpoints, pending batches, leases. */
  FLOE_CONTROL_TABLE: z.string().min(3).max(255).default('floe-control'),
  /** Where table data and metadata go: s3://bucket/prefix or file:///path. */
  FLOE_WAREHOUSE: location,
  /** Catalog implementation. */
  FLOE_CATALOG: z.enum(['dynamodb', 'glue']).default('dynamodb'),
  /** DynamoDB catalog table (Iceberg Java's DynamoDbCatalog default name). */
  FLOE_CATALOG_TABLE: z.string().min(3).max(255).default('iceberg'),
  /** Glue Data Catalog id (AWS account) when FLOE_CATALOG=glue; default: the caller's account. */
  FLOE_GLUE_CATALOG_ID: z.string().regex(/^\d{12}$/).optional(),
  /** Routing of records to tables (JSON, see README "Routing"). */
  FLOE_ROUTES: jsonOf(RoutesSchema).prefault(JSON.stringify({ routes: [{ table: '{topic}' }] })),
  /** Dead-letter store (s3://bucket/prefix or file:///path); default `<warehouse>/_floe/dead-letters`. */
  FLOE_DLQ: location.optional(),
  /** Where the event source mapping's on-failure destination puts batches it gave up on (read by `floe replay failed-batches`); default `<warehouse>/_floe/failed-batches`. */
  FLOE_FAILED_BATCHES: location.optional(),
  /** Value format for topics without a rule in FLOE_ROUTES.formats. */
  FLOE_VALUE_FORMAT: z.enum(VALUE_FORMATS).default('json'),
  /** Confluent-compatible schema registry for avro-confluent. */
  FLOE_SCHEMA_REGISTRY_URL: z.string().url().optional(),
  /** Secrets Manager secret holding `{"username","password"}` for the registry's basic auth. */
  FLOE_SCHEMA_REGISTRY_SECRET_ARN: z.string().min(1).optional(),
  /** Registry request timeout (Confluent and Glue): short, because a slow registry should fail the batch (retryable), not the Lambda timeout. */
  FLOE_SCHEMA_REGISTRY_TIMEOUT_MS: int(5_000, 100, 60_000),
  /**
   * Bytes all open buffers of one writer invocation may hold. 256 MB leaves room in a 1 GB
   * function for the decoded 6 MB batch, parquet-wasm's working memory and the Node heap.
   */
  FLOE_MEMORY_BUDGET_MB: mb(256),
  /**
   * Parquet files roll at this size. 128 MB is the Iceberg default target; a 6 MB MSK batch
   * rarely reaches it, so per-invocation files are bounded by the batch, not by this.
   */
  FLOE_TARGET_FILE_MB: mb(128),
  /** Parquet codec unless the table sets write.parquet.compression-codec. */
  FLOE_PARQUET_COMPRESSION: z.enum(['zstd', 'snappy', 'gzip', 'lz4', 'uncompressed']).default('zstd'),
  /**
   * A table with more uncommitted batches than this makes writers fail retryably (back pressure).
   * 1,000 is ~15 minutes of one-per-second batches: long enough to ride out a committer hiccup,
   * short enough that a broken committer shows up as consumer lag, not as a huge backlog.
   */
  FLOE_MAX_PENDING_BATCHES: int(1_000, 1),
  /** A pending batch's file list larger than this spills to an S3 object (DynamoDB items max out at 400 KB). */
  FLOE_SPILL_THRESHOLD_KB: int(300, 1, 390),
  /**
   * Committer lease per table. 5 minutes covers a slow commit with retries; an expired lease is
   * taken over by the next run, and epoch fencing makes the late holder harmless.
   */
  FLOE_LEASE_TTL_SECONDS: int(300, 1, 86_400),
  /** Most batches one snapshot takes: bounds manifest size and committer memory. */
  FLOE_COMMIT_MAX_BATCHES: int(1_000, 1),
  /** Most data-file bytes one snapshot takes. */
  FLOE_COMMIT_MAX_MB: mb(10_240, 1, 1_048_576),
  /** Catalog conflicts retried per commit before the table is reported failed (the next run resumes). */
  FLOE_COMMIT_RETRIES: int(10, 0, 100),
  /** First backoff after a conflict; doubles per retry with full jitter. */
  FLOE_COMMIT_BACKOFF_MS: int(100, 0, 60_000),
  /** Tables committed in parallel by one committer invocation. */
  FLOE_COMMIT_CONCURRENCY: int(4, 1, 64),
  /** Committed batch items and leases expire after this (DynamoDB TTL); long enough to debug a commit. */
  FLOE_BATCH_TTL_HOURS: int(168, 1, 8_760),
  /** Orphan cleanup leaves files younger than this: a writer may still be registering them. */
  FLOE_ORPHAN_HORIZON_HOURS: int(24, 1, 8_760),
  /** SDK attempts per AWS request (the SDK's own retry with backoff for throttling and 5xx). */
  FLOE_AWS_MAX_ATTEMPTS: int(5, 1, 20),
  /** Test-only: Glue database for the live Glue catalog test; ignored at run time. */
  FLOE_LIVE_GLUE_DATABASE: z.string().min(1).optional(),
} as const

export type SettingName = keyof typeof SETTINGS

type Parsed = { [K in SettingName]: z.output<(typeof SETTINGS)[K]> }

export interface FloeConfig {
  pipeline: string
  controlTable: string
  warehouse: string
  catalog: 'dynamodb' | 'glue'
  catalogTable: string
  glueCatalogId?: string
  routes: Routes
  dlq: string
  /** FLOE_FAILED_BATCHES: the on-failure destination's objects, for replay. */
  failedBatches: string
  valueFormat: ValueFormat
  schemaRegistry?: { url: string; secretArn?: string; timeoutMs: number }
  /** Timeout of every schema-registry request (Confluent and Glue), FLOE_SCHEMA_REGISTRY_TIMEOUT_MS. */
  registryTimeoutMs: number
  memoryBudgetBytes: number
  targetFileBytes: number
  parquetCompression: 'zstd' | 'snappy' | 'gzip' | 'lz4' | 'uncompressed'
  maxPendingBatches: number
  spillThresholdBytes: number
  leaseTtlMs: number
  commitMaxBatches: number
  commitMaxBytes: number
  commitRetries: number
  commitBackoffMs: number
  commitConcurrency: number
  batchTtlSeconds: number
  orphanHorizonMs: number
  awsMaxAttempts: number
  region?: string
}

/**
 * Parse the environment. Throws ConfigError naming the first bad or unknown variable.
 * `overrides` (same keys) win over `env`; the CLI uses them for local runs.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Record<SettingName, string>> = {}): FloeConfig {
  const merged: Record<string, string | undefined> = {}
  for (const [k, v] of Object.entries(env)) if (k.startsWith('FLOE_')) merged[k] = v
  Object.assign(merged, overrides)
  for (const key of Object.keys(merged)) {
    if (!(key in SETTINGS)) {
      const near = Object.keys(SETTINGS).find((k) => editDistance(k, key) <= 3)
      throw new ConfigError(key, `unknown setting${near ? ` (did you mean ${near}?)` : ''}`)
    }
  }
  const raw: Record<string, unknown> = {}
  for (const key of Object.keys(SETTINGS) as SettingName[]) {
    const value = merged[key]
    const result = SETTINGS[key].safeParse(value === '' ? undefined : value)
    if (!result.success) {
      const issue = result.error.issues[0]
      const where = issue?.path.length ? ` at ${issue.path.join('.')}` : ''
      const shown = value === undefined ? 'not set' : `got ${JSON.stringify(value.length > 200 ? value.slice(0, 200) + '…' : value)}`
      throw new ConfigError(key, `${issue?.message ?? 'invalid'}${where}; ${shown}`)
    }
    raw[key] = result.data
  }
  const p = raw as Parsed
  validateRoutes(p.FLOE_ROUTES)
  const MB = 1024 * 1024
  return {
    pipeline: p.FLOE_PIPELINE,
    controlTable: p.FLOE_CONTROL_TABLE,
    warehouse: p.FLOE_WAREHOUSE.replace(/\/+$/, ''),
    catalog: p.FLOE_CATALOG,
    catalogTable: p.FLOE_CATALOG_TABLE,
    glueCatalogId: p.FLOE_GLUE_CATALOG_ID,
    routes: p.FLOE_ROUTES,
    dlq: (p.FLOE_DLQ ?? `${p.FLOE_WAREHOUSE.replace(/\/+$/, '')}/_floe/dead-letters`).replace(/\/+$/, ''),
    failedBatches: (p.FLOE_FAILED_BATCHES ?? `${p.FLOE_WAREHOUSE.replace(/\/+$/, '')}/_floe/failed-batches`).replace(/\/+$/, ''),
    valueFormat: p.FLOE_VALUE_FORMAT,
    schemaRegistry: p.FLOE_SCHEMA_REGISTRY_URL
      ? { url: p.FLOE_SCHEMA_REGISTRY_URL, secretArn: p.FLOE_SCHEMA_REGISTRY_SECRET_ARN, timeoutMs: p.FLOE_SCHEMA_REGISTRY_TIMEOUT_MS }
      : undefined,
    registryTimeoutMs: p.FLOE_SCHEMA_REGISTRY_TIMEOUT_MS,
    memoryBudgetBytes: p.FLOE_MEMORY_BUDGET_MB * MB,
    targetFileBytes: p.FLOE_TARGET_FILE_MB * MB,
    parquetCompression: p.FLOE_PARQUET_COMPRESSION,
    maxPendingBatches: p.FLOE_MAX_PENDING_BATCHES,
    spillThresholdBytes: p.FLOE_SPILL_THRESHOLD_KB * 1024,
    leaseTtlMs: p.FLOE_LEASE_TTL_SECONDS * 1000,
    commitMaxBatches: p.FLOE_COMMIT_MAX_BATCHES,
    commitMaxBytes: p.FLOE_COMMIT_MAX_MB * MB,
    commitRetries: p.FLOE_COMMIT_RETRIES,
    commitBackoffMs: p.FLOE_COMMIT_BACKOFF_MS,
    commitConcurrency: p.FLOE_COMMIT_CONCURRENCY,
    batchTtlSeconds: p.FLOE_BATCH_TTL_HOURS * 3600,
    orphanHorizonMs: p.FLOE_ORPHAN_HORIZON_HOURS * 3600 * 1000,
    awsMaxAttempts: p.FLOE_AWS_MAX_ATTEMPTS,
    region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION,
  }
}

/** Rules across keys (Iceberg IcebergSinkConfig.validate style). */
function validateRoutes(routes: Routes): void {
  routes.routes.forEach((route, i) => {
    if (route.topic !== undefined && route.topicPattern !== undefined)
      throw new ConfigError('FLOE_ROUTES', `routes[${i}]: set topic or topicPattern, not both`)
    const patterns = [route.topicPattern, ...('match' in route ? Object.values(route.match) : [])]
    for (const pattern of patterns) {
      if (pattern === undefined) continue
      try {
        RegExp(pattern)
      } catch (err) {
        throw new ConfigError('FLOE_ROUTES', `routes[${i}]: invalid regular expression ${JSON.stringify(pattern)} (${(err as Error).message})`)
      }
    }
  })
  routes.formats.forEach((rule, i) => {
    if (rule.topicPattern !== undefined) {
      try {
        RegExp(rule.topicPattern)
      } catch (err) {
        throw new ConfigError('FLOE_ROUTES', `formats[${i}]: invalid regular expression ${JSON.stringify(rule.topicPattern)} (${(err as Error).message})`)
      }
    }
  })
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1))
      prev = cur
    }
  }
  return row[b.length]!
}
