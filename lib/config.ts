/**
 * Every Floe setting, read once from `FLOE_*` environment variables and validated with zod.
 * Unknown `FLOE_*` variables are rejected (they are almost always typos), and every error names
 * the variable and the bad value. Each limit says why its default is what it is; the README's
 * settings table is generated from the same facts (keep them in step).
 */
import { availableParallelism } from 'node:os'
import { RE2JS } from 're2js'
import { z } from 'zod'
import { checkPartitionBy, describeIssues, editDistance, HINT_TYPES, jsonPath, parseJsonText, unknownKey, type KnownKeys } from './config-check.js'
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
    /** Evolve the table to hold new records: add fields, promote types, relax required fields (committed through the catalog). Off: unknown fields are ignored. */
    evolveSchema: z.boolean().default(true),
    /** Match record field names to columns ignoring case (Iceberg Java's caseSensitive=false); off: exact names. */
    caseInsensitive: z.boolean().default(false),
    /** Iceberg identifier-field-ids, by column name. */
    idColumns: z.array(z.string().min(1)).default([]),
    /** Add a `_kafka` struct column. `true` = all of topic, partition, offset, timestamp, key, headers. */
    kafkaMetadata: z
      .union([z.boolean(), z.array(z.enum(['topic', 'partition', 'offset', 'timestamp', 'key', 'headers']))])
      .default(false),
    /** Format version of a table Floe creates: 2 (unset), or 3 (row lineage: every row gets a `_row_id`). Existing tables keep theirs. */
    formatVersion: z.union([z.literal(2), z.literal(3)]).optional(),
    /** Table properties set when Floe creates the table (e.g. write.parquet.compression-codec). */
    properties: z.record(z.string(), z.string()).default({}),
    /**
     * Column types pinned by name (dots for nested fields), used instead of inference when the
     * table is created and when the column first appears, e.g. {"reading": "double", "id": "long"}.
     */
    columns: z
      .record(z.string().min(1), z.string().regex(HINT_TYPES, 'expected an Iceberg primitive type: boolean, int, long, float, double, decimal(P,S), date, time, timestamp, timestamptz, string or binary'))
      .optional(),
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
      /** RE2 pattern the table part of a dynamic name (after prefix and sanitising) must match whole, e.g. "ev_[a-z_]{1,40}". */
      allow: z.string().min(1).optional(),
      /** Let this route reach tables that static routes or `tables` name (off: such a value is a dead letter). */
      allowStatic: z.boolean().default(false),
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
  FLOE_CATALOG: z.enum(['dynamodb', 'glue', 'rest']).default('dynamodb'),
  /** DynamoDB catalog table (Iceberg Java's DynamoDbCatalog default name). */
  FLOE_CATALOG_TABLE: z.string().min(3).max(255).default('iceberg'),
  /** Glue Data Catalog id (AWS account) when FLOE_CATALOG=glue; default: the caller's account. */
  FLOE_GLUE_CATALOG_ID: z.string().regex(/^\d{12}$/).optional(),
  /** Iceberg REST catalog base URI when FLOE_CATALOG=rest (S3 Tables: https://s3tables.<region>.amazonaws.com/iceberg). */
  FLOE_REST_URI: z.string().url().optional(),
  /** `warehouse` sent to GET /v1/config: S3 Tables table-bucket ARN, Glue account id, Polaris catalog name. */
  FLOE_REST_WAREHOUSE: z.string().min(1).optional(),
  /** REST catalog authentication: none, sigv4, oauth2 (client credentials), bearer (token from FLOE_REST_SECRET_ARN). */
  FLOE_REST_AUTH: z.enum(['none', 'sigv4', 'oauth2', 'bearer']).default('none'),
  /** SigV4 signing name; default from the URI's host: s3tables, glue, lambda (function URLs), else execute-api. */
  FLOE_REST_SIGNING_NAME: z.string().regex(/^[a-z0-9-]{2,64}$/).optional(),
  /** SigV4 signing region; default the Lambda's region. */
  FLOE_REST_SIGNING_REGION: z.string().regex(/^[a-z0-9-]{2,32}$/).optional(),
  /** Secrets Manager secret: {"client_id","client_secret"} for oauth2, {"token"} (or the bare token) for bearer. */
  FLOE_REST_SECRET_ARN: z.string().min(1).optional(),
  /** OAuth2 token endpoint; default <FLOE_REST_URI>/v1/oauth/tokens. */
  FLOE_REST_OAUTH2_URI: z.string().url().optional(),
  /** OAuth2 scope requested with the client credentials. */
  FLOE_REST_OAUTH2_SCOPE: z.string().min(1).default('catalog'),
  /** Timeout of every REST catalog request (a commit that times out is commit-state-unknown). */
  FLOE_REST_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(30_000),
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
   * V8's young-generation semi-space of every Floe function (the CDK stack puts it in
   * NODE_OPTIONS as --max-semi-space-size). Lambda's Node runtime sets 5 % of the function's
   * memory (88 MB at 1,769 MB) when NODE_OPTIONS names none: garbage then piles up in the young
   * generation far past the writer's budget (docs/benchmarks.md, "Writer memory").
   */
  FLOE_V8_SEMI_SPACE_MB: mb(8, 1, 256),
  /**
   * The writer runs a full GC whenever the JS heap plus V8's external memory has grown by more
   * than this since the last one (only where Node exposes `gc`, as Lambda's runtime does; 0 =
   * never). V8 otherwise lets the garbage of encoding many files pile up to hundreds of MB
   * (docs/benchmarks.md, "Writer memory bound").
   */
  FLOE_GC_HEADROOM_MB: mb(16, 0, 10_240),
  /**
   * `--enable-source-maps` in every Floe function's NODE_OPTIONS (the CDK stack): stack traces
   * name TypeScript files and lines. Node reads and parses the bundle's map when it loads the
   * bundle (~15 MB of the writer's RSS, docs/benchmarks.md "Writer memory bound"); `false` saves that.
   */
  FLOE_SOURCE_MAPS: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
  /**
   * glibc's malloc serves blocks of at least this many KB with their own mmap, returned to the
   * system when freed (the CDK stack sets MALLOC_MMAP_THRESHOLD_ in every Floe function's
   * environment; 0 leaves glibc's default). By default glibc raises its threshold (up to 32 MB)
   * each time such a block is freed, so Node's large buffers (Parquet output, Arrow IPC, request
   * bodies) come from the heap after the first few and stay resident once freed: the 1,200-file
   * event's peak RSS was ~30 MB higher for it (docs/benchmarks.md, "Issue 20, December 4").
   */
  FLOE_MALLOC_MMAP_THRESHOLD_KB: int(64, 0, 32_768),
  /**
   * Parquet files roll at this size. 128 MB is the Iceberg default target; a 6 MB MSK batch
   * rarely reaches it, so per-invocation files are bounded by the batch, not by this.
   */
  FLOE_TARGET_FILE_MB: mb(128),
  /**
   * Worker threads that encode the writer's Parquet files off the main thread (0 = off, on the
   * main thread as before). `auto`: 2 when the function has 2 or more vCPUs
   * (`os.availableParallelism()`; Lambda gives 2 from 1,769 MB), else 0. Off by default: measured
   * (docs/benchmarks.md "Two workers"), the threads add ~80 MB RSS and 0-6 % CPU for a wall-time
   * gain that only shows with files to overlap and that this shared 2-core machine cannot confirm.
   */
  FLOE_WRITER_WORKERS: z.union([z.literal('auto'), z.coerce.number().int().min(0).max(8)]).default(0),
  /**
   * JSON records routed by topic alone to one existing, unpartitioned table (its `_kafka`, if any,
   * without key or headers) are read by a scanner compiled from the table's schema, straight from
   * their bytes into Parquet columns (lib/writer/scan-lane.ts); a record it does not read exactly
   * takes the present path.
   * `false`: every record takes the present path (strict UTF-8, JSON.parse, guard, coercer).
   */
  FLOE_WRITER_SCAN: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
  /** Parquet codec unless the table sets write.parquet.compression-codec. */
  FLOE_PARQUET_COMPRESSION: z.enum(['zstd', 'snappy', 'gzip', 'lz4', 'uncompressed']).default('zstd'),
  /**
   * How Parquet files (the writer's and compaction's) encode top-level int, long, date, time and
   * timestamp columns: `plain` (every engine) or `delta` (DELTA_BINARY_PACKED: the bench's files
   * 0.61–0.67× the bytes; Spark's Iceberg vectorized reader has it from Iceberg 1.10).
   */
  FLOE_PARQUET_INTEGER_ENCODING: z.enum(['plain', 'delta']).default('plain'),
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
  /**
   * Most batches one snapshot takes: bounds manifest size and committer memory. 5,000 makes 1 GB/s
   * into one table 2 snapshots a minute in 6 MB invocations (12 in 1 MB ones) instead of 10 (60):
   * fewer snapshots, less metadata (docs/scale.md); ~5,000 file entries are a few MB of manifest
   * and batch lists in a 512 MB committer.
   */
  FLOE_COMMIT_MAX_BATCHES: int(5_000, 1),
  /** Most data-file bytes one snapshot takes. */
  FLOE_COMMIT_MAX_MB: mb(10_240, 1, 1_048_576),
  /** Catalog conflicts retried per commit before the table is reported failed (the next run resumes). */
  FLOE_COMMIT_RETRIES: int(10, 0, 100),
  /** First backoff after a conflict; doubles per retry with full jitter. */
  FLOE_COMMIT_BACKOFF_MS: int(100, 0, 60_000),
  /** Ceiling of a catalog-conflict backoff (data and maintenance commits; the writer's schema commits reload at once). */
  FLOE_COMMIT_BACKOFF_MAX_MS: int(30_000, 0, 600_000),
  /** Rounds a control-table BatchGet re-asks for its UnprocessedKeys before failing retryably. */
  FLOE_CONTROL_READ_ROUNDS: int(8, 1, 100),
  /** First backoff of a control-table retry (UnprocessedKeys, a cancelled mark transaction); doubles with full jitter. */
  FLOE_CONTROL_BACKOFF_MS: int(50, 0, 60_000),
  /** Ceiling of a control-table backoff. */
  FLOE_CONTROL_BACKOFF_MAX_MS: int(1_000, 0, 600_000),
  /** Retries of a mark-committed transaction cancelled for another reason than the lease fence (throttling, a transaction conflict). */
  FLOE_MARK_RETRIES: int(5, 0, 100),
  /** Tables committed in parallel by one committer invocation. */
  FLOE_COMMIT_CONCURRENCY: int(4, 1, 64),
  /**
   * Mark transactions (49 batches each) one table commit runs at once, each fenced by its own
   * copy of the lease token (lib/control/lease.ts; at most its 16 copies). Marking one after
   * another was ~1.9 ms a batch, too slow for 60,000 batches a minute (docs/scale.md).
   */
  FLOE_COMMIT_MARK_CONCURRENCY: int(8, 1, 16),
  /**
   * Keys a table's pending batches (and the pipeline's pending index) are spread over. One
   * DynamoDB partition takes ~1,000 write units/s; at the measured ~10 units per batch (register,
   * index, mark) 32 keys carry 1,000 batches/s into one table (1 GB/s in 1 MB invocations) at
   * under half of that, peaks included (docs/scale.md). Changing it is safe: every shard is read.
   */
  FLOE_PENDING_SHARDS: int(32, 1, 256),
  /** Shards the committer and the writer's back-pressure check read in parallel. */
  FLOE_SHARD_CONCURRENCY: int(8, 1, 64),
  /**
   * Tables the writer's back-pressure check counts at once, each over its shards
   * FLOE_SHARD_CONCURRENCY at a time: at most the product of the two requests are in flight.
   */
  FLOE_BACKPRESSURE_TABLES: int(8, 1, 64),
  /**
   * Seconds one committer run keeps taking snapshots of a table while batches remain (0: one
   * snapshot per run). 40 s leaves a minute-scheduled committer time to release before the next run.
   */
  FLOE_COMMIT_RUN_SECONDS: int(40, 0, 840),
  /**
   * The writer's back-pressure check trusts the pending count the committer last wrote for a
   * table if it is this recent; older (a stopped committer), it counts the pending batches itself.
   */
  FLOE_BACKLOG_FRESH_SECONDS: int(180, 1, 86_400),
  /**
   * Data files get a hash directory in their path (Iceberg's object-storage layout) unless the
   * table sets write.object-storage.enabled=false: S3 scales request rates per prefix.
   */
  FLOE_OBJECT_STORAGE_LAYOUT: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
  /** Committed batch items and leases expire after this (DynamoDB TTL); long enough to debug a commit. */
  FLOE_BATCH_TTL_HOURS: int(168, 1, 8_760),
  /**
   * Snapshot expiry keeps at most this many snapshots of a branch for their age when the table
   * does not set `history.expire.max-snapshot-age-ms` (Iceberg's 5-day default would keep 7,200
   * at one commit a minute and tens of thousands for a busy table, all in a metadata.json every
   * commit rewrites). 2,000 is ~2 MB of metadata and more than a 5-minute sink (Kafka Connect's,
   * Firehose's default interval) keeps in 5 days. 0: Iceberg's default alone.
   */
  FLOE_EXPIRE_MAX_SNAPSHOTS: int(2_000, 0, 1_000_000),
  /** Orphan cleanup leaves files younger than this: a writer may still be registering them. */
  FLOE_ORPHAN_HORIZON_HOURS: int(24, 1, 8_760),
  /** Reads of a table's pending file lists orphan cleanup tries while batches commit under it. */
  FLOE_ORPHAN_PENDING_READ_ATTEMPTS: int(5, 1, 100),
  /**
   * Input bytes compaction rewrites per table per maintenance run. 1 GB at the tens of MB/s one
   * Lambda core decodes and encodes Parquet is a few minutes: well inside a 15-minute run; the
   * next run continues.
   */
  FLOE_COMPACT_MAX_MB: mb(1_024, 1, 1_048_576),
  /**
   * Rows compaction decodes and hands to the Parquet writer at once (estimated uncompressed
   * bytes). Bounds compaction's working memory beside one input file and one output file.
   */
  FLOE_COMPACT_CHUNK_MB: mb(16, 1, 1_024),
  /**
   * Working memory compaction may account for while rewriting one group (lib/maintenance/budget.ts:
   * input row groups fetched and decoded, rows in JS, Arrow and IPC copies, output bytes not yet
   * uploaded, parquet-wasm's memory growth). 256 MB leaves a 1 GB maintenance function room for
   * the runtime, the loaded table metadata and garbage the collector has not reclaimed yet. Must
   * be at least 16 × FLOE_COMPACT_CHUNK_MB (a chunk of rows costs several copies of itself: JS rows,
   * Arrow, IPC, parquet-wasm's batch and open row group; measured in docs/benchmarks.md).
   */
  FLOE_COMPACT_MEMORY_MB: mb(256, 16, 10_240),
  /**
   * Parsed table metadata kept per process, by metadata-file location (files are immutable, so
   * never stale): a warm writer's table load is one catalog read, not a parse of the table's
   * history. 64 tables × a few hundred KB of expired-and-bounded metadata is a few MB.
   */
  FLOE_METADATA_CACHE_ENTRIES: int(64, 0, 10_000),
  /**
   * The writer reuses a table's catalog pointer this long per container instead of reading it on
   * every invocation (lib/catalog/pointer-cache.ts: why a stale pointer is safe for a writer).
   * 10 s cuts the pointer reads of a 1 GB/s table ~10x in 1 MB invocations; 0: read every time.
   */
  FLOE_CATALOG_POINTER_TTL_SECONDS: int(10, 0, 300),
  /** SDK attempts per AWS request (the SDK's own retry with backoff for throttling and 5xx). */
  FLOE_AWS_MAX_ATTEMPTS: int(5, 1, 20),
  /**
   * A record value larger than this is a dead letter before it is decoded. 1,024 KB is Kafka's
   * default `message.max.bytes` (1 MB): a bigger record is already unusual, and decoding cost is
   * linear in it (a 1 MB value decodes and is checked in ~15 ms).
   */
  FLOE_MAX_RECORD_KB: int(1_024, 1, 6_144),
  /**
   * Deepest nesting of objects/arrays a record may have (a deeper one is a dead letter). 32 is
   * far beyond real schemas and keeps every recursive step (inference, coercion, Arrow, Parquet)
   * far from the stack: a 5,000-deep value used to overflow it and fail the batch on every retry.
   */
  FLOE_MAX_DEPTH: int(32, 1, 200),
  /**
   * Most columns (leaf fields, list elements counted once) one record may bring or a table may be
   * created with. 1,000 covers wide events; Parquet encoding cost is per column (a 10,000-column
   * record took 43 s, a 1,000-column one ~1 s).
   */
  FLOE_MAX_COLUMNS: int(1_000, 1, 10_000),
  /** Longest field name (characters). 255 is Glue's and Hive's column-name limit, so Athena can read every column. */
  FLOE_MAX_FIELD_NAME_LENGTH: int(255, 1, 10_000),
  /**
   * Longest table name (`namespace.table`, characters) a record may route to. 128 keeps the
   * DynamoDB keys that embed it (sort keys max 1,024 bytes) and the S3 keys of its files
   * (1,024 bytes) within their limits, under Glue's 255.
   */
  FLOE_MAX_TABLE_NAME_LENGTH: int(128, 1, 255),
  /**
   * Longest partition value in a file path (bytes, after escaping); a record with a longer one is
   * a dead letter. 256 leaves room under S3's 1,024-byte key limit for the table location, a
   * second partition field and the file name (~110 bytes).
   */
  FLOE_MAX_PARTITION_VALUE_BYTES: int(256, 16, 900),
  /**
   * Most distinct tables one invocation writes; a partition whose next record needs another table
   * stops there and the invocation fails retryably once the rest is registered (the mapping
   * redelivers the remainder; never dead letters, docs/decisions.md). Each new table costs a catalog load and create, a back-pressure query,
   * a file and a pending-batch item: 200 new tables took 28 s on the shared 2-core test machine
   * (1,000: 155 s), so 200 stays far inside the writer's 5-minute timeout with room for retries.
   * A partition fanned out to more tables than one transaction holds (99) is registered in offset
   * segments (docs/writer.md), so the limit is about cost, not atomicity.
   */
  FLOE_MAX_TABLES_PER_BATCH: int(200, 1, 10_000),
  /** Tries of one partition group's registration when another writer advanced part of it (checkpoints re-read each time). */
  FLOE_WRITER_GROUP_ATTEMPTS: int(3, 1, 100),
  /** Retries of a dead-letter replay chunk that raced another replay over the same sources. */
  FLOE_REPLAY_RACE_RETRIES: int(3, 0, 100),
  /** Local runs from a Kafka broker (`floe start --kafka`): SASL mechanism for the user's broker. */
  FLOE_KAFKA_SASL_MECHANISM: z.enum(['plain', 'scram-sha-256', 'scram-sha-512']).optional(),
  /** Local runs: SASL username. */
  FLOE_KAFKA_SASL_USERNAME: z.string().min(1).optional(),
  /** Local runs: SASL password. */
  FLOE_KAFKA_SASL_PASSWORD: z.string().min(1).optional(),
  /** Local runs: connect to the user's broker over TLS. */
  FLOE_KAFKA_TLS: z.enum(['true', 'false']).default('false').transform((v) => v === 'true'),
  /** Local runs: PEM file of the CA that signed the brokers' certificates (implies TLS). */
  FLOE_KAFKA_TLS_CA_FILE: z.string().min(1).optional(),
  /** Local runs: consumer group of the Kafka poller; default `floe-<pipeline>`, as the CDK stack names it. */
  FLOE_KAFKA_GROUP_ID: z.string().regex(/^[a-zA-Z0-9\-/*:_+=.@]{1,150}$/, 'at most 150 of [a-zA-Z0-9-/*:_+=.@]').optional(),
  /** Local runs: the Kafka poller's batching window (MaximumBatchingWindowInSeconds, in ms). */
  FLOE_KAFKA_BATCHING_WINDOW_MS: int(500, 0, 300_000),
  /** Local runs: first backoff before a failed batch is retried; doubles up to 30 s. */
  FLOE_KAFKA_RETRY_BACKOFF_MS: int(500, 10, 30_000),
  /** Local runs: JVM heap of the local Kafka broker. */
  FLOE_KAFKA_BROKER_HEAP_MB: int(512, 128, 8_192),
  /** Local runs: how long the local Kafka broker keeps records, by their timestamps; -1 keeps them until `--reset`. */
  FLOE_KAFKA_BROKER_RETENTION_HOURS: int(-1, -1, 1_000_000),
} as const

export type SettingName = keyof typeof SETTINGS

type Parsed = { [K in SettingName]: z.output<(typeof SETTINGS)[K]> }

export interface FloeConfig {
  pipeline: string
  controlTable: string
  warehouse: string
  catalog: 'dynamodb' | 'glue' | 'rest'
  catalogTable: string
  glueCatalogId?: string
  /** FLOE_REST_*: set when FLOE_CATALOG=rest. */
  rest?: RestCatalogConfig
  routes: Routes
  dlq: string
  /** FLOE_FAILED_BATCHES: the on-failure destination's objects, for replay. */
  failedBatches: string
  valueFormat: ValueFormat
  schemaRegistry?: { url: string; secretArn?: string; timeoutMs: number }
  /** Timeout of every schema-registry request (Confluent and Glue), FLOE_SCHEMA_REGISTRY_TIMEOUT_MS. */
  registryTimeoutMs: number
  memoryBudgetBytes: number
  /** FLOE_GC_HEADROOM_MB in bytes: heap growth between the writer's full GCs (0 = never). */
  gcHeadroomBytes: number
  targetFileBytes: number
  /** FLOE_WRITER_WORKERS resolved: Parquet-encode threads, 0 = encode on the main thread. */
  writerWorkers: number
  /** FLOE_WRITER_SCAN: the writer's JSON scanner lane is on. */
  writerScan: boolean
  parquetCompression: 'zstd' | 'snappy' | 'gzip' | 'lz4' | 'uncompressed'
  /** FLOE_PARQUET_INTEGER_ENCODING. */
  parquetIntegerEncoding: 'plain' | 'delta'
  maxPendingBatches: number
  spillThresholdBytes: number
  leaseTtlMs: number
  commitMaxBatches: number
  commitMaxBytes: number
  commitRetries: number
  commitBackoffMs: number
  commitBackoffMaxMs: number
  controlReadRounds: number
  controlBackoffMs: number
  controlBackoffMaxMs: number
  markRetries: number
  orphanPendingReadAttempts: number
  writerGroupAttempts: number
  replayRaceRetries: number
  commitConcurrency: number
  pendingShards: number
  shardConcurrency: number
  backpressureTables: number
  markConcurrency: number
  expireMaxSnapshots: number
  catalogPointerTtlMs: number
  commitRunMs: number
  backlogFreshMs: number
  objectStorageLayout: boolean
  batchTtlSeconds: number
  orphanHorizonMs: number
  compactMaxBytes: number
  compactChunkBytes: number
  compactMemoryBytes: number
  metadataCacheEntries: number
  awsMaxAttempts: number
  /** What one record may contain (FLOE_MAX_*): beyond any of them it is a dead letter. */
  limits: RecordLimits
  region?: string
  /** `floe start --kafka` only: the poller's connection and batching (FLOE_KAFKA_*). */
  localKafka: LocalKafkaSettings
}

export interface LocalKafkaSettings {
  saslMechanism?: 'plain' | 'scram-sha-256' | 'scram-sha-512'
  saslUsername?: string
  saslPassword?: string
  tls: boolean
  tlsCaFile?: string
  groupId?: string
  batchingWindowMs: number
  retryBackoffMs: number
  brokerHeapMb: number
  brokerRetentionHours: number
}

/** The FLOE_MAX_* limits on what one record may contain and reach. */
export interface RecordLimits {
  maxRecordBytes: number
  maxDepth: number
  maxColumns: number
  maxFieldNameLength: number
  maxTableNameLength: number
  maxPartitionValueBytes: number
  maxTablesPerBatch: number
}

export const DEFAULT_LIMITS: RecordLimits = {
  maxRecordBytes: 1_024 * 1024,
  maxDepth: 32,
  maxColumns: 1_000,
  maxFieldNameLength: 255,
  maxTableNameLength: 128,
  maxPartitionValueBytes: 256,
  maxTablesPerBatch: 200,
}

export interface RestCatalogConfig {
  uri: string
  warehouse?: string
  auth: 'none' | 'sigv4' | 'oauth2' | 'bearer'
  signingName?: string
  signingRegion?: string
  secretArn?: string
  oauth2Uri?: string
  oauth2Scope: string
  timeoutMs: number
}

function restConfig(p: Parsed): RestCatalogConfig | undefined {
  if (p.FLOE_CATALOG !== 'rest') return undefined
  if (!p.FLOE_REST_URI) throw new ConfigError('FLOE_REST_URI', 'required when FLOE_CATALOG=rest; not set')
  if ((p.FLOE_REST_AUTH === 'oauth2' || p.FLOE_REST_AUTH === 'bearer') && !p.FLOE_REST_SECRET_ARN) {
    throw new ConfigError('FLOE_REST_SECRET_ARN', `required when FLOE_REST_AUTH=${p.FLOE_REST_AUTH}; not set`)
  }
  return {
    uri: p.FLOE_REST_URI.replace(/\/+$/, ''),
    warehouse: p.FLOE_REST_WAREHOUSE,
    auth: p.FLOE_REST_AUTH,
    signingName: p.FLOE_REST_SIGNING_NAME,
    signingRegion: p.FLOE_REST_SIGNING_REGION,
    secretArn: p.FLOE_REST_SECRET_ARN,
    oauth2Uri: p.FLOE_REST_OAUTH2_URI,
    oauth2Scope: p.FLOE_REST_OAUTH2_SCOPE,
    timeoutMs: p.FLOE_REST_TIMEOUT_MS,
  }
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
    if (key === 'FLOE_ROUTES' && value) {
      raw[key] = parseRoutes(value, key)
      continue
    }
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
  // Also when parseRoutes already checked FLOE_ROUTES: the table-name limit is only known now.
  validateRoutes(p.FLOE_ROUTES, 'FLOE_ROUTES', { maxTableNameLength: p.FLOE_MAX_TABLE_NAME_LENGTH })
  const MB = 1024 * 1024
  if (p.FLOE_COMPACT_MEMORY_MB < 16 * p.FLOE_COMPACT_CHUNK_MB) {
    throw new ConfigError('FLOE_COMPACT_MEMORY_MB', `${p.FLOE_COMPACT_MEMORY_MB} MB is less than 16 × FLOE_COMPACT_CHUNK_MB (${p.FLOE_COMPACT_CHUNK_MB} MB): a chunk of rows costs several copies of itself (JS rows, Arrow, IPC, parquet-wasm)`)
  }
  return {
    pipeline: p.FLOE_PIPELINE,
    controlTable: p.FLOE_CONTROL_TABLE,
    warehouse: p.FLOE_WAREHOUSE.replace(/\/+$/, ''),
    catalog: p.FLOE_CATALOG,
    catalogTable: p.FLOE_CATALOG_TABLE,
    glueCatalogId: p.FLOE_GLUE_CATALOG_ID,
    rest: restConfig(p),
    routes: p.FLOE_ROUTES,
    dlq: (p.FLOE_DLQ ?? `${p.FLOE_WAREHOUSE.replace(/\/+$/, '')}/_floe/dead-letters`).replace(/\/+$/, ''),
    failedBatches: (p.FLOE_FAILED_BATCHES ?? `${p.FLOE_WAREHOUSE.replace(/\/+$/, '')}/_floe/failed-batches`).replace(/\/+$/, ''),
    valueFormat: p.FLOE_VALUE_FORMAT,
    schemaRegistry: p.FLOE_SCHEMA_REGISTRY_URL
      ? { url: p.FLOE_SCHEMA_REGISTRY_URL, secretArn: p.FLOE_SCHEMA_REGISTRY_SECRET_ARN, timeoutMs: p.FLOE_SCHEMA_REGISTRY_TIMEOUT_MS }
      : undefined,
    registryTimeoutMs: p.FLOE_SCHEMA_REGISTRY_TIMEOUT_MS,
    memoryBudgetBytes: p.FLOE_MEMORY_BUDGET_MB * MB,
    gcHeadroomBytes: p.FLOE_GC_HEADROOM_MB * MB,
    targetFileBytes: p.FLOE_TARGET_FILE_MB * MB,
    writerWorkers: p.FLOE_WRITER_WORKERS === 'auto' ? (availableParallelism() >= 2 ? 2 : 0) : p.FLOE_WRITER_WORKERS,
    writerScan: p.FLOE_WRITER_SCAN,
    parquetCompression: p.FLOE_PARQUET_COMPRESSION,
    parquetIntegerEncoding: p.FLOE_PARQUET_INTEGER_ENCODING,
    maxPendingBatches: p.FLOE_MAX_PENDING_BATCHES,
    spillThresholdBytes: p.FLOE_SPILL_THRESHOLD_KB * 1024,
    leaseTtlMs: p.FLOE_LEASE_TTL_SECONDS * 1000,
    commitMaxBatches: p.FLOE_COMMIT_MAX_BATCHES,
    commitMaxBytes: p.FLOE_COMMIT_MAX_MB * MB,
    commitRetries: p.FLOE_COMMIT_RETRIES,
    commitBackoffMs: p.FLOE_COMMIT_BACKOFF_MS,
    commitBackoffMaxMs: p.FLOE_COMMIT_BACKOFF_MAX_MS,
    controlReadRounds: p.FLOE_CONTROL_READ_ROUNDS,
    controlBackoffMs: p.FLOE_CONTROL_BACKOFF_MS,
    controlBackoffMaxMs: p.FLOE_CONTROL_BACKOFF_MAX_MS,
    markRetries: p.FLOE_MARK_RETRIES,
    orphanPendingReadAttempts: p.FLOE_ORPHAN_PENDING_READ_ATTEMPTS,
    writerGroupAttempts: p.FLOE_WRITER_GROUP_ATTEMPTS,
    replayRaceRetries: p.FLOE_REPLAY_RACE_RETRIES,
    commitConcurrency: p.FLOE_COMMIT_CONCURRENCY,
    pendingShards: p.FLOE_PENDING_SHARDS,
    shardConcurrency: p.FLOE_SHARD_CONCURRENCY,
    backpressureTables: p.FLOE_BACKPRESSURE_TABLES,
    markConcurrency: p.FLOE_COMMIT_MARK_CONCURRENCY,
    expireMaxSnapshots: p.FLOE_EXPIRE_MAX_SNAPSHOTS,
    catalogPointerTtlMs: p.FLOE_CATALOG_POINTER_TTL_SECONDS * 1000,
    commitRunMs: p.FLOE_COMMIT_RUN_SECONDS * 1000,
    backlogFreshMs: p.FLOE_BACKLOG_FRESH_SECONDS * 1000,
    objectStorageLayout: p.FLOE_OBJECT_STORAGE_LAYOUT,
    batchTtlSeconds: p.FLOE_BATCH_TTL_HOURS * 3600,
    orphanHorizonMs: p.FLOE_ORPHAN_HORIZON_HOURS * 3600 * 1000,
    compactMaxBytes: p.FLOE_COMPACT_MAX_MB * MB,
    compactChunkBytes: p.FLOE_COMPACT_CHUNK_MB * MB,
    compactMemoryBytes: p.FLOE_COMPACT_MEMORY_MB * MB,
    metadataCacheEntries: p.FLOE_METADATA_CACHE_ENTRIES,
    awsMaxAttempts: p.FLOE_AWS_MAX_ATTEMPTS,
    limits: {
      maxRecordBytes: p.FLOE_MAX_RECORD_KB * 1024,
      maxDepth: p.FLOE_MAX_DEPTH,
      maxColumns: p.FLOE_MAX_COLUMNS,
      maxFieldNameLength: p.FLOE_MAX_FIELD_NAME_LENGTH,
      maxTableNameLength: p.FLOE_MAX_TABLE_NAME_LENGTH,
      maxPartitionValueBytes: p.FLOE_MAX_PARTITION_VALUE_BYTES,
      maxTablesPerBatch: p.FLOE_MAX_TABLES_PER_BATCH,
    },
    region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION,
    localKafka: {
      saslMechanism: p.FLOE_KAFKA_SASL_MECHANISM,
      saslUsername: p.FLOE_KAFKA_SASL_USERNAME,
      saslPassword: p.FLOE_KAFKA_SASL_PASSWORD,
      tls: p.FLOE_KAFKA_TLS,
      tlsCaFile: p.FLOE_KAFKA_TLS_CA_FILE,
      groupId: p.FLOE_KAFKA_GROUP_ID,
      batchingWindowMs: p.FLOE_KAFKA_BATCHING_WINDOW_MS,
      retryBackoffMs: p.FLOE_KAFKA_RETRY_BACKOFF_MS,
      brokerHeapMb: p.FLOE_KAFKA_BROKER_HEAP_MB,
      brokerRetentionHours: p.FLOE_KAFKA_BROKER_RETENTION_HOURS,
    },
  }
}

/** Rules across keys (Iceberg IcebergSinkConfig.validate style). */
function validateRoutes(routes: Routes, key = 'FLOE_ROUTES', limits: Pick<RecordLimits, 'maxTableNameLength'> = DEFAULT_LIMITS): void {
  for (const name of [...Object.keys(routes.tables), ...routes.routes.flatMap((r) => ('table' in r ? [r.table] : 'match' in r ? Object.keys(r.match) : []))]) {
    if (name.length > limits.maxTableNameLength)
      throw new ConfigError(key, `table name ${JSON.stringify(name)} is ${name.length} characters, more than FLOE_MAX_TABLE_NAME_LENGTH=${limits.maxTableNameLength}`)
  }
  const tables: [string, TableOptions][] = [...Object.entries(routes.tables).map(([n, o]): [string, TableOptions] => [jsonPath(['tables', n]), o]), ['$.tableDefaults', routes.tableDefaults]]
  for (const [where, options] of tables) {
    const problem = checkPartitionBy(options.partitionBy, options.columns ?? {})
    if (problem) throw new ConfigError(key, `${where}.${problem}`)
  }
  routes.routes.forEach((route, i) => {
    if (route.topic !== undefined && route.topicPattern !== undefined)
      throw new ConfigError(key, `$.routes[${i}]: set topic or topicPattern, not both`)
    // Route regexes run with RE2 semantics (linear time: lib/writer/routing.ts); a pattern RE2
    // cannot run (backreferences, lookaround) is refused here, not at the first record.
    const patterns = [route.topicPattern, ...('match' in route ? Object.values(route.match) : []), 'allow' in route ? route.allow : undefined]
    for (const pattern of patterns) {
      if (pattern === undefined) continue
      try {
        RE2JS.compile(pattern)
      } catch (err) {
        throw new ConfigError(key, `$.routes[${i}]: invalid regular expression ${JSON.stringify(pattern)} for RE2 (linear-time; no backreferences or lookaround): ${(err as Error).message}`)
      }
    }
    if ('tableFromField' in route) {
      const table = `${route.namespace ?? routes.defaultNamespace}.${route.prefix}`
      if (table.length >= limits.maxTableNameLength)
        throw new ConfigError(key, `$.routes[${i}]: namespace and prefix ${JSON.stringify(table)} leave no room under FLOE_MAX_TABLE_NAME_LENGTH=${limits.maxTableNameLength}`)
    }
  })
  routes.formats.forEach((rule, i) => {
    if (rule.topicPattern !== undefined) {
      try {
        RegExp(rule.topicPattern)
      } catch (err) {
        throw new ConfigError(key, `$.formats[${i}]: invalid regular expression ${JSON.stringify(rule.topicPattern)} (${(err as Error).message})`)
      }
    }
  })
}

/** Which keys each object of a routes document may have, by JSON path (null: any name). */
const routesKeys: KnownKeys = (path) => {
  const keys = (schema: { shape: object }) => Object.keys(schema.shape)
  const [top, second] = path
  if (path.length === 0) return keys(RoutesSchema)
  if (top === 'tables') return path.length === 1 ? null : path.length === 2 ? keys(TableOptionsSchema) : undefined
  if (top === 'tableDefaults' && path.length === 1) return keys(TableOptionsSchema)
  if (top === 'routes' && path.length === 2 && typeof second === 'number') return [...new Set(RouteSchema.options.flatMap((o) => keys(o)))]
  if (top === 'formats' && path.length === 2 && typeof second === 'number') return keys(FormatRuleSchema)
  if (top === 'unrouted' && path.length === 1) return ['table']
  return undefined
}

/**
 * A routes document (FLOE_ROUTES, or the file of `floe start --routes`) parsed and checked, or a
 * ConfigError under `key` naming the line and column of a syntax error, or the JSON path, the
 * value and the nearest known key of a bad one.
 */
export function parseRoutes(text: string, key: string): Routes {
  const json = parseJsonText(text)
  if (!json.ok) throw new ConfigError(key, json.message)
  const unknown = unknownKey(json.value, routesKeys)
  if (unknown) throw new ConfigError(key, unknown)
  const parsed = RoutesSchema.safeParse(json.value)
  if (!parsed.success) throw new ConfigError(key, describeIssues(parsed.error.issues, json.value))
  validateRoutes(parsed.data, key)
  return parsed.data
}
