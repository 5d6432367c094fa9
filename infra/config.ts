/**
 * The stack's configuration: read from CDK context (`cdk.json` or `-c key=value`) or given as
 * props, validated with zod. Every error names the context key and the bad value, like
 * lib/config.ts does for FLOE_* variables. Rules across keys live in `validate()`.
 */
import { z } from 'zod'
import type { Node } from 'constructs'
import { ConfigError } from '../lib/errors.js'
import { RoutesSchema, SETTINGS, VALUE_FORMATS, type SettingName } from '../lib/config.js'

/** FLOE_* settings the stack derives from resources it creates; `settings` may not set them. */
export const STACK_SETTINGS = [
  'FLOE_PIPELINE',
  'FLOE_CONTROL_TABLE',
  'FLOE_WAREHOUSE',
  'FLOE_CATALOG',
  'FLOE_CATALOG_TABLE',
  'FLOE_REST_URI',
  'FLOE_REST_WAREHOUSE',
  'FLOE_REST_AUTH',
  'FLOE_ROUTES',
  'FLOE_DLQ',
  'FLOE_MEMORY_BUDGET_MB',
  'FLOE_VALUE_FORMAT',
  'FLOE_FAILED_BATCHES',
] as const satisfies readonly SettingName[]

const arn = (service: string, resource: string) =>
  z.string().regex(new RegExp(`^arn:aws[a-z-]*:${service}:[a-z0-9-]+:\\d{12}:${resource}`), `expected an ${service} ARN (${resource}…)`)
/** Kafka allows 1-249 of [A-Za-z0-9._-]; the mapping's Topics pattern also wants 2+ characters, not starting with '.'. */
const topicName = z.string().regex(/^[A-Za-z0-9_-][A-Za-z0-9._-]{1,248}$/, "2-249 of [A-Za-z0-9._-], not starting with '.'")
/** Values CloudWatch Logs accepts as retention (RetentionDays). */
const RETENTION_DAYS = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653] as const

/** Context keys, their defaults, and why the default is what it is. */
export const ContextSchema = z
  .object({
    /** Name of the pipeline: scopes checkpoints and snapshot summary keys; part of resource names. */
    pipeline: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits, _ . - (1-64)').default('floe'),

    /** Amazon MSK cluster (provisioned or serverless). Set this or `bootstrapServers`. */
    mskClusterArn: arn('kafka', 'cluster/[^/]+/[^/]+').optional(),
    /** Self-managed Kafka brokers (`host:port`). Set this or `mskClusterArn`. */
    bootstrapServers: z.array(z.string().regex(/^[^\s:]+:\d{1,5}$/, 'expected host:port')).min(1).optional(),
    /**
     * How the event source mapping authenticates. MSK: `iam` (default; the writer's role gets
     * kafka-cluster:* on the cluster, topics and group) or `sasl-scram-512`. Self-managed:
     * `sasl-scram-512` (default), `sasl-scram-256`, `basic`, `mtls`, or `none`.
     */
    kafkaAuth: z.enum(['iam', 'sasl-scram-512', 'sasl-scram-256', 'basic', 'mtls', 'none']).optional(),
    /** Secrets Manager secret with the Kafka credentials (SASL/basic) or client certificate (mTLS). */
    kafkaSecretArn: arn('secretsmanager', 'secret:').optional(),
    /** KMS key that encrypts kafkaSecretArn (MSK requires a customer managed key for SCRAM secrets): the writer may decrypt with it. */
    kafkaSecretKeyArn: arn('kms', 'key/').optional(),
    /** Self-managed Kafka in a VPC: the subnets and security groups the mapping's pollers use. */
    subnetIds: z.array(z.string().regex(/^subnet-[0-9a-f]+$/, 'expected subnet-…')).min(1).optional(),
    securityGroupIds: z.array(z.string().regex(/^sg-[0-9a-f]+$/, 'expected sg-…')).min(1).optional(),

    /** Topics to consume. One event source mapping per topic (a mapping takes exactly one). */
    topics: z.array(topicName).min(1),
    /**
     * Consumer group id (default `floe-<pipeline>`). Lambda requires a group id unique among
     * mappings, so with several topics each mapping uses `<consumerGroupId>.<topic>`.
     */
    consumerGroupId: z.string().regex(/^[a-zA-Z0-9\-/*:_+=.@]{1,150}$/, 'at most 150 of [a-zA-Z0-9-/*:_+=.@]').optional(),
    /** Where a new consumer group starts. TRIM_HORIZON: a first deploy loses nothing already in the topic. */
    startingPosition: z.enum(['TRIM_HORIZON', 'LATEST', 'AT_TIMESTAMP']).default('TRIM_HORIZON'),
    /**
     * Where the mapping puts a batch it gives up on. `s3` (default): a bucket of failed batches,
     * whole records kept for replay, and an alarm. With a destination Lambda stops after 10
     * retries, so a long outage (or back pressure) parks batches there instead of in Kafka.
     * `none`: no destination, retries until the records leave the topic's retention: every
     * record waits in Kafka (DESIGN.md invariant 5), at the price of a stuck partition.
     */
    onFailure: z.enum(['s3', 'none']).default('s3'),
    /** Unix seconds, with startingPosition AT_TIMESTAMP. */
    startingPositionTimestamp: z.number().int().positive().optional(),
    /**
     * Records per invocation. 10,000 (the mapping's maximum for Kafka): the 6 MB invocation payload
     * is the cap that binds for records over ~600 bytes, and a lower count only makes smaller
     * Parquet files; writer memory is bounded by the payload and FLOE_MEMORY_BUDGET_MB either way.
     */
    batchSize: z.number().int().min(1).max(10_000).default(10_000),
    /**
     * Seconds the mapping gathers records before invoking (max 300). 30 s: a quiet topic still
     * yields one file per partition value every 30 s instead of one per record, and with the
     * one-minute commit a record is queryable within ~90 s.
     */
    maxBatchingWindowSeconds: z.number().int().min(0).max(300).default(30),
    /**
     * Provisioned mode for the mapping (docs/scale.md, docs/deploy.md): the fewest event pollers it
     * keeps (1–200). Setting this or maximumPollers turns provisioned mode on; unset: on-demand
     * pollers, which Lambda rescales from the offset lag once a minute.
     */
    minimumPollers: z.number().int().min(1).max(200).optional(),
    /**
     * Provisioned mode: the most event pollers (1–2,000; Lambda caps it at the topic's partitions).
     * A poller carries up to 5 MB/s: 1 GB/s needs ≥ 200, plus headroom for catch-up.
     */
    maximumPollers: z.number().int().min(1).max(2_000).optional(),
    /** Provisioned mode: share pollers across up to 100 mappings in a group (PollerGroupName). */
    pollerGroupName: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'letters, digits, _ and - (1-128)').optional(),

    /** Routing of records to tables (the FLOE_ROUTES JSON object, see README "Routing"). */
    routes: z.record(z.string(), z.unknown()).optional(),
    /** Value format for topics without a rule in routes.formats (FLOE_VALUE_FORMAT). */
    valueFormat: z.enum(VALUE_FORMATS).default('json'),
    /** Further FLOE_* settings for both functions (e.g. FLOE_MAX_PENDING_BATCHES), as strings. */
    settings: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).default({}),

    /** An existing bucket for the warehouse; default: the stack creates one. */
    warehouseBucketName: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'expected an S3 bucket name').optional(),
    /** Key prefix of the Iceberg warehouse in the bucket (tables live below it). */
    warehousePrefix: z.string().regex(/^[A-Za-z0-9!_.*'()-]+(\/[A-Za-z0-9!_.*'()-]+)*$/, 'a key prefix without leading or trailing /').default('warehouse'),
    /** Key prefix of dead-letter objects (records that could not be decoded, coerced or routed). */
    deadLetterPrefix: z.string().regex(/^[A-Za-z0-9!_.*'()-]+(\/[A-Za-z0-9!_.*'()-]+)*$/, 'a key prefix without leading or trailing /').default('dead-letters'),
    /** Dead letters expire after this many days: long enough to notice, fix and replay. */
    deadLetterRetentionDays: z.number().int().min(1).max(3650).default(30),

    /**
     * `dynamodb` (Iceberg Java DynamoDbCatalog layout, created here), `glue` (a Glue database), or
     * `s3tables` (an S3 Tables table bucket and namespace through its Iceberg REST endpoint).
     */
    catalog: z.enum(['dynamodb', 'glue', 's3tables']).default('dynamodb'),
    /** catalog=s3tables: an existing table bucket to use (its ARN); without it the stack creates one named `tableBucketName`. */
    tableBucketArn: arn('s3tables', 'bucket/[a-z0-9-]{3,63}$').optional(),
    /** catalog=s3tables: name of the table bucket the stack creates; default `floe-<pipeline>` (lower case). */
    tableBucketName: z.string().regex(/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/, 'a table bucket name: 3-63 of [a-z0-9-]').optional(),
    /** catalog=s3tables: the namespace the stack creates in the table bucket; it is the routes' default namespace. */
    tableNamespace: z.string().regex(/^[a-z0-9][a-z0-9_]{0,254}$/, 'S3 Tables namespaces are lower case [a-z0-9_], starting with a letter or digit').optional(),
    /**
     * Serve the catalog as an Iceberg REST catalog (functions/rest-catalog.ts) on a Lambda function
     * URL with IAM auth (engines sign with SigV4, signing name `lambda`). catalog=dynamodb only.
     */
    restEndpoint: z.boolean().default(false),
    /** Name of the DynamoDB catalog table; default: CloudFormation generates one. Set `iceberg` to share Spark's default. */
    catalogTableName: z.string().regex(/^[A-Za-z0-9_.-]{3,255}$/, 'a DynamoDB table name').optional(),
    /** Glue database (created by the stack) when catalog=glue; it is the routes' default namespace. */
    glueDatabase: z.string().regex(/^[a-z0-9_]{1,255}$/, 'Glue database names are lower case [a-z0-9_]').optional(),

    /** Writer memory. 1,024 MB: FLOE_MEMORY_BUDGET_MB is a quarter of it (256 MB, lib/config.ts). */
    writerMemoryMb: z.number().int().min(256).max(10_240).default(1_024),
    /** Committer memory. 512 MB: it holds manifests and batch lists, never record data. */
    committerMemoryMb: z.number().int().min(128).max(10_240).default(512),
    /** EventBridge Scheduler expression for the committer: rate(…), cron(…) or at(…). */
    commitSchedule: z.string().regex(/^(rate|cron|at)\(.+\)$/, 'expected rate(…), cron(…) or at(…)').default('rate(1 minute)'),
    /**
     * Maintenance schedule (compaction, snapshot expiry, orphan cleanup). Hourly: a busy table
     * gains thousands of small files an hour, and each run compacts at most FLOE_COMPACT_MAX_MB per
     * table, so small files are rewritten within about an hour of landing.
     */
    maintenanceSchedule: z.string().regex(/^(rate|cron|at)\(.+\)$/, 'expected rate(…), cron(…) or at(…)').default('rate(1 hour)'),
    /** CloudWatch Logs retention of both functions. */
    logRetentionDays: z
      .number()
      .int()
      .refine((d) => (RETENTION_DAYS as readonly number[]).includes(d), `one of ${RETENTION_DAYS.join(', ')}`)
      .default(30),
    /** An existing SNS topic that alarms notify; default: the stack creates one (see alarmEmail). */
    alarmTopicArn: arn('sns', '[A-Za-z0-9_-]+$').optional(),
    /** Email address subscribed to the stack's alarm topic (AWS sends a confirmation mail first). */
    alarmEmail: z.string().regex(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, 'expected an email address').optional(),
    /** KMS key for dead letters and failed batches; default: the stack creates one (rotated yearly). */
    rawRecordsKeyArn: arn('kms', 'key/[0-9a-f-]+$').optional(),
    /** Name of the role that may read dead letters and failed batches (besides the replay function); default `floe-<pipeline>-raw-records-reader`. */
    rawRecordsReaderRoleName: z.string().regex(/^[\w+=,.@-]{1,64}$/, 'an IAM role name').optional(),
    /** Consumer lag (records, max over partitions) that raises the lag alarm. */
    offsetLagAlarmThreshold: z.number().int().min(1).default(100_000),
  })
  .strict()

export type FloeContext = z.output<typeof ContextSchema>
export type FloeContextInput = z.input<typeof ContextSchema>

/** Validated configuration with cross-key rules applied and derived values filled in. */
export interface FloeStackConfig extends FloeContext {
  kafka:
    | { kind: 'msk'; clusterArn: string; auth: 'iam' | 'sasl-scram-512'; secretArn?: string }
    | {
        kind: 'self-managed'
        bootstrapServers: string[]
        auth: 'sasl-scram-512' | 'sasl-scram-256' | 'basic' | 'mtls' | 'none'
        secretArn?: string
        vpc?: { subnetIds: string[]; securityGroupIds: string[] }
      }
  /** Group id per topic. */
  consumerGroups: Map<string, string>
  routesJson: string
  /** Extra FLOE_* settings, validated, as env strings. */
  extraSettings: Record<string, string>
}

/** Every key of the schema: read from context when not given as a prop. */
export const CONTEXT_KEYS = Object.keys(ContextSchema.shape) as (keyof FloeContext)[]

/** Read the context keys from a construct node (cdk.json, `-c`), overridden by `props`. */
export function readContext(node: Node, props: Partial<FloeContextInput> = {}): Record<string, unknown> {
  const raw: Record<string, unknown> = {}
  for (const key of CONTEXT_KEYS) {
    const value = key in props ? props[key] : node.tryGetContext(key)
    if (value !== undefined) raw[key] = typeof value === 'string' && looksLikeJson(value) ? parseJson(key, value) : value
  }
  return raw
}

/** Validate raw context. Throws ConfigError naming the context key. */
export function parseStackConfig(raw: Record<string, unknown>): FloeStackConfig {
  const result = ContextSchema.safeParse(coerceNumbers(raw))
  if (!result.success) {
    const issue = result.error.issues[0]!
    const key = String(issue.path[0] ?? '(context)')
    const where = issue.path.length > 1 ? ` at ${issue.path.slice(1).join('.')}` : ''
    const shown = key in raw ? `got ${truncate(JSON.stringify(raw[key]))}` : 'not set'
    if (issue.code === 'unrecognized_keys') throw new ConfigError(`context key '${issue.keys.join("', '")}'`, 'unknown context key')
    throw new ConfigError(`context key '${key}'`, `${issue.message}${where}; ${shown}`)
  }
  return validate(result.data)
}

/** Rules across keys (IcebergSinkConfig.validate style). */
function validate(c: FloeContext): FloeStackConfig {
  const fail = (key: string, message: string): never => {
    throw new ConfigError(`context key '${key}'`, message)
  }
  if ((c.mskClusterArn === undefined) === (c.bootstrapServers === undefined))
    fail('mskClusterArn', 'set exactly one of mskClusterArn (Amazon MSK) or bootstrapServers (self-managed Kafka)')

  let kafka: FloeStackConfig['kafka']
  if (c.mskClusterArn !== undefined) {
    const auth = c.kafkaAuth ?? 'iam'
    if (auth !== 'iam' && auth !== 'sasl-scram-512') fail('kafkaAuth', `Amazon MSK supports iam or sasl-scram-512; got ${JSON.stringify(auth)}`)
    if (auth === 'sasl-scram-512' && !c.kafkaSecretArn) fail('kafkaSecretArn', 'required with kafkaAuth sasl-scram-512')
    if (c.subnetIds || c.securityGroupIds) fail('subnetIds', 'only for self-managed Kafka (MSK mappings use the cluster\'s own VPC settings)')
    kafka = { kind: 'msk', clusterArn: c.mskClusterArn, auth: auth as 'iam' | 'sasl-scram-512', secretArn: c.kafkaSecretArn }
  } else {
    const auth = c.kafkaAuth ?? 'sasl-scram-512'
    if (auth === 'iam') fail('kafkaAuth', 'iam authentication is only for Amazon MSK (set mskClusterArn)')
    if (auth !== 'none' && !c.kafkaSecretArn) fail('kafkaSecretArn', `required with kafkaAuth ${auth}`)
    if ((c.subnetIds === undefined) !== (c.securityGroupIds === undefined))
      fail(c.subnetIds ? 'securityGroupIds' : 'subnetIds', 'subnetIds and securityGroupIds go together (brokers reachable in a VPC)')
    kafka = {
      kind: 'self-managed',
      bootstrapServers: c.bootstrapServers!,
      auth: auth as 'sasl-scram-512' | 'sasl-scram-256' | 'basic' | 'mtls' | 'none',
      secretArn: c.kafkaSecretArn,
      vpc: c.subnetIds ? { subnetIds: c.subnetIds, securityGroupIds: c.securityGroupIds! } : undefined,
    }
  }

  if (c.minimumPollers !== undefined && c.maximumPollers !== undefined && c.maximumPollers < c.minimumPollers)
    fail('maximumPollers', `must be at least minimumPollers (${c.minimumPollers}); got ${c.maximumPollers}`)
  if (c.pollerGroupName !== undefined && c.minimumPollers === undefined && c.maximumPollers === undefined)
    fail('pollerGroupName', 'only in provisioned mode (set minimumPollers or maximumPollers)')
  if (new Set(c.topics).size !== c.topics.length) fail('topics', `duplicate topic in ${JSON.stringify(c.topics)}`)
  if (c.alarmEmail && c.alarmTopicArn) fail('alarmEmail', 'only without alarmTopicArn (subscribe to your own topic yourself)')
  if (c.kafkaSecretKeyArn && !c.kafkaSecretArn) fail('kafkaSecretKeyArn', 'only with kafkaSecretArn')
  if (c.startingPosition === 'AT_TIMESTAMP' && c.startingPositionTimestamp === undefined)
    fail('startingPositionTimestamp', 'required with startingPosition AT_TIMESTAMP')
  if (c.startingPosition !== 'AT_TIMESTAMP' && c.startingPositionTimestamp !== undefined)
    fail('startingPositionTimestamp', `only with startingPosition AT_TIMESTAMP (startingPosition is ${c.startingPosition})`)
  const group = c.consumerGroupId ?? `floe-${c.pipeline}`
  const consumerGroups = new Map(c.topics.map((t) => [t, c.topics.length === 1 ? group : `${group}.${t}`]))
  for (const [topic, id] of consumerGroups) if (id.length > 200) fail('consumerGroupId', `group id for topic ${topic} is longer than 200: ${id}`)

  if (c.catalog === 'glue' && !c.glueDatabase) fail('glueDatabase', 'required with catalog glue')
  if (c.catalog !== 'glue' && c.glueDatabase) fail('glueDatabase', 'only with catalog glue')
  if (c.catalog === 'glue' && c.catalogTableName) fail('catalogTableName', 'only with catalog dynamodb')
  if (c.catalog === 's3tables' && c.catalogTableName) fail('catalogTableName', 'only with catalog dynamodb')
  if (c.catalog === 's3tables' && !c.tableNamespace) fail('tableNamespace', 'required with catalog s3tables')
  if (c.catalog !== 's3tables' && (c.tableNamespace || c.tableBucketArn || c.tableBucketName)) fail(c.tableNamespace ? 'tableNamespace' : c.tableBucketArn ? 'tableBucketArn' : 'tableBucketName', 'only with catalog s3tables')
  if (c.tableBucketArn && c.tableBucketName) fail('tableBucketName', 'give tableBucketArn (use a bucket) or tableBucketName (create one), not both')
  if (c.restEndpoint && c.catalog !== 'dynamodb') fail('restEndpoint', `serves the DynamoDB catalog; catalog is ${c.catalog}`)

  const parsedRoutes = RoutesSchema.safeParse(c.routes ?? { routes: [{ table: '{topic}' }] })
  if (!parsedRoutes.success) {
    const issue = parsedRoutes.error.issues[0]!
    fail('routes', `${issue.message} at ${issue.path.join('.') || '(root)'}; got ${truncate(JSON.stringify(c.routes))}`)
  }
  void parsedRoutes.data
  // The functions get the routes as written (defaults are theirs to apply): Lambda allows 4 KB of environment in all.
  const routes: Record<string, unknown> = { ...(c.routes ?? { routes: [{ table: '{topic}' }] }) }
  if (c.catalog === 'glue') {
    if (routes.defaultNamespace !== undefined && routes.defaultNamespace !== c.glueDatabase)
      fail('routes', `defaultNamespace ${JSON.stringify(routes.defaultNamespace)} differs from glueDatabase ${JSON.stringify(c.glueDatabase)}: the functions may only touch the stack's Glue database`)
    routes.defaultNamespace = c.glueDatabase!
  }
  if (c.catalog === 's3tables') {
    if (routes.defaultNamespace !== undefined && routes.defaultNamespace !== c.tableNamespace)
      fail('routes', `defaultNamespace ${JSON.stringify(routes.defaultNamespace)} differs from tableNamespace ${JSON.stringify(c.tableNamespace)}: the functions may only touch the stack's namespace`)
    routes.defaultNamespace = c.tableNamespace!
  }
  const routesJson = JSON.stringify(routes)
  if (routesJson.length > 3_000) fail('routes', `${routesJson.length} characters of JSON; Lambda allows 4 KB of environment variables in all, keep routes under 3,000`)
  if (c.warehousePrefix === c.deadLetterPrefix || c.deadLetterPrefix.startsWith(`${c.warehousePrefix}/`) || c.warehousePrefix.startsWith(`${c.deadLetterPrefix}/`))
    fail('deadLetterPrefix', `must not overlap warehousePrefix (${c.warehousePrefix}): dead letters expire, table files must not`)

  const extraSettings: Record<string, string> = {}
  for (const [name, value] of Object.entries(c.settings)) {
    if (!(name in SETTINGS)) fail('settings', `unknown setting ${name}`)
    if ((STACK_SETTINGS as readonly string[]).includes(name)) fail('settings', `${name} is set by the stack; use the matching context key`)
    const parsed = SETTINGS[name as SettingName].safeParse(String(value))
    if (!parsed.success) fail('settings', `${name}: ${parsed.error.issues[0]?.message}; got ${JSON.stringify(value)}`)
    extraSettings[name] = String(value)
  }
  return { ...c, kafka, consumerGroups, routesJson, extraSettings }
}

/** `-c batchSize=500` arrives as a string; numeric keys accept numeric strings. */
function coerceNumbers(raw: Record<string, unknown>): Record<string, unknown> {
  const out = { ...raw }
  for (const [key, value] of Object.entries(out)) {
    if (typeof value === 'string' && /^-?\d+$/.test(value) && isNumericKey(key)) out[key] = Number(value)
  }
  return out
}

function isNumericKey(key: string): boolean {
  const shape = ContextSchema.shape as Record<string, z.ZodType>
  const probe = shape[key]?.safeParse(1)
  return probe?.success === true
}

function looksLikeJson(value: string): boolean {
  return /^\s*[[{]/.test(value)
}

function parseJson(key: string, value: string): unknown {
  try {
    return JSON.parse(value)
  } catch (err) {
    throw new ConfigError(`context key '${key}'`, `not valid JSON (${(err as Error).message}); got ${truncate(value)}`)
  }
}

function truncate(text: string | undefined): string {
  if (text === undefined) return 'undefined'
  return text.length > 200 ? `${text.slice(0, 200)}…` : text
}
