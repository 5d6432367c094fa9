/**
 * A NodejsFunction with Floe's defaults baked in (Powertools example-app style): ARM64,
 * nodejs22.x, a log group with retention, source maps, ESM bundled by the local esbuild (no
 * Docker) with parquet-wasm's `.wasm` and the writer's encode worker beside the bundle, and an execution role that
 * starts empty. Access is added only through `bindX()` helpers, each of which grants what the
 * function needs AND sets the FLOE_* variable that tells it where to find it, so the two cannot
 * drift apart.
 */
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Duration, RemovalPolicy } from 'aws-cdk-lib'
import * as iam from 'aws-cdk-lib/aws-iam'
import * as lambda from 'aws-cdk-lib/aws-lambda'
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs'
import * as logs from 'aws-cdk-lib/aws-logs'
import type { Construct } from 'constructs'
import { SETTINGS, type SettingName } from '../../lib/config.js'
import type { RawRecords } from './raw-records.js'
import type { Catalog, ControlTable } from './tables.js'
import type { Warehouse } from './warehouse.js'

/** The repository root (package.json, package-lock.json, functions/). */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

/**
 * parquet-wasm's Node build loads `${__dirname}/parquet_wasm_bg.wasm` with readFileSync, so the
 * file must sit beside the bundle and `__dirname` must be the bundle's directory.
 */
export const PARQUET_WASM = createRequire(import.meta.url).resolve('parquet-wasm/node/parquet_wasm_bg.wasm')

/**
 * The writer's Parquet-encode worker thread (lib/writer/workers, FLOE_WRITER_WORKERS): a second
 * esbuild entry, bundled as CommonJS (parquet-wasm's Node build included; `__dirname` finds the
 * `.wasm` copied beside it) to `encode-worker.cjs` beside `index.mjs`, where the pool looks for it.
 */
export const ENCODE_WORKER = path.join(PROJECT_ROOT, 'lib/writer/workers/encode-worker.cjs')
const ESBUILD = createRequire(import.meta.url).resolve('esbuild')

/** esbuild options of the encode worker's bundle (also used by test/bench/memory.ts's bundled child). */
export const ENCODE_WORKER_BUILD = { bundle: true, platform: 'node', format: 'cjs', target: 'node22', minify: true, logLevel: 'error' } as const

/** The shell command that bundles the encode worker into `outputDir`. */
export function encodeWorkerBundleCommand(outputDir: string): string {
  const build = 'require(process.argv[1]).buildSync({ ...JSON.parse(process.argv[4]), entryPoints: [process.argv[2]], outfile: process.argv[3] })'
  return `node -e "${build}" "${ESBUILD}" "${ENCODE_WORKER}" "${path.join(outputDir, 'encode-worker.cjs')}" '${JSON.stringify(ENCODE_WORKER_BUILD)}'`
}

/**
 * ESM output has no `require`, `__filename` or `__dirname`; CommonJS dependencies bundled into it
 * (parquet-wasm's Node build, the AWS SDK's lazy requires) expect them.
 */
export const ESM_BANNER = [
  "import { createRequire as __floeCreateRequire } from 'node:module';",
  "import { fileURLToPath as __floeFileURLToPath } from 'node:url';",
  "import { dirname as __floeDirname } from 'node:path';",
  'const require = __floeCreateRequire(import.meta.url);',
  'const __filename = __floeFileURLToPath(import.meta.url);',
  'const __dirname = __floeDirname(__filename);',
].join(' ')

/**
 * NODE_OPTIONS of a Floe function of `memoryMb`: source maps (FLOE_SOURCE_MAPS) and V8's heap
 * sizes from FLOE_V8_SEMI_SPACE_MB (`settings`, else their defaults). Only V8 flags Node allows in NODE_OPTIONS
 * (`--max-semi-space-size`, `--max-old-space-size`): any other makes Node refuse to start
 * (`--initial-old-space-size= is not allowed in NODE_OPTIONS`), so every cold start would fail;
 * test/infra/bundle.test.ts cold-starts the bundles with exactly this value.
 * Lambda's Node runtime adds --max-semi-space-size (5 % of the memory) and --max-old-space-size
 * (90 %) only when NODE_OPTIONS names neither, so naming the semi-space means naming the old
 * space too: kept at the runtime's 90 %. test/bench/memory.ts runs the writer with exactly this.
 */
export function nodeOptions(memoryMb: number, settings: Record<string, string | undefined> = {}): string {
  const semi = SETTINGS.FLOE_V8_SEMI_SPACE_MB.parse(settings.FLOE_V8_SEMI_SPACE_MB)
  const old = memoryMb - Math.floor(memoryMb / 10)
  const maps = SETTINGS.FLOE_SOURCE_MAPS.parse(settings.FLOE_SOURCE_MAPS) ? ['--enable-source-maps'] : []
  return [...maps, `--max-semi-space-size=${semi}`, `--max-old-space-size=${old}`].join(' ')
}

/**
 * Environment a Floe function's process reads before any of its code runs: glibc's malloc
 * tunables (FLOE_MALLOC_MMAP_THRESHOLD_KB → MALLOC_MMAP_THRESHOLD_, in bytes; 0 sets nothing).
 * test/bench/memory.ts runs the writer with exactly this.
 */
export function processEnvironment(settings: Record<string, string | undefined> = {}): Record<string, string> {
  const kb = SETTINGS.FLOE_MALLOC_MMAP_THRESHOLD_KB.parse(settings.FLOE_MALLOC_MMAP_THRESHOLD_KB)
  return kb > 0 ? { MALLOC_MMAP_THRESHOLD_: String(kb * 1024) } : {}
}

export interface FloeFunctionProps {
  /** Handler source, relative to the project root (e.g. `functions/writer.ts`); exports `handler`. */
  entry: string
  description: string
  memorySize: number
  timeout: Duration
  logRetention: logs.RetentionDays
  /** POWERTOOLS_SERVICE_NAME: the `service` dimension of Floe's custom metrics. */
  serviceName: string
  /** FLOE_* settings shared by every function of the stack. */
  settings?: Record<string, string>
}

export class FloeFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: FloeFunctionProps) {
    const logGroup = new logs.LogGroup(scope, `${id}Logs`, {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.RETAIN,
    })
    // A role of our own instead of the default one, which attaches the AWSLambdaBasicExecutionRole
    // managed policy (logs:* on every log group): this one may write to its own log group only.
    const role = new iam.Role(scope, `${id}Role`, {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of ${id}: every permission comes from a bindX() helper`,
    })
    super(scope, id, {
      entry: path.join(PROJECT_ROOT, props.entry),
      handler: 'handler',
      description: props.description,
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize,
      timeout: props.timeout,
      role,
      logGroup,
      loggingFormat: lambda.LoggingFormat.JSON,
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: path.join(PROJECT_ROOT, 'package-lock.json'),
      environment: {
        NODE_OPTIONS: nodeOptions(props.memorySize, props.settings),
        ...processEnvironment(props.settings),
        POWERTOOLS_SERVICE_NAME: props.serviceName,
        POWERTOOLS_METRICS_NAMESPACE: 'Floe',
        ...props.settings,
      },
      bundling: {
        forceDockerBundling: false,
        format: OutputFormat.ESM,
        target: 'node22',
        mainFields: ['module', 'main'],
        banner: ESM_BANNER,
        minify: true,
        // Error classes report their name (ConfigError, FencedError…) in logs: keep it through minification.
        keepNames: true,
        sourceMap: true,
        sourcesContent: false,
        // Everything is bundled, the AWS SDK included: the versions the tests ran against, not
        // whatever the runtime ships, and a bundle that loads in plain Node (the smoke test).
        externalModules: [],
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (_inputDir: string, outputDir: string) => [
            `node -e "require('fs').copyFileSync(process.argv[1], process.argv[2])" "${PARQUET_WASM}" "${path.join(outputDir, 'parquet_wasm_bg.wasm')}"`,
            encodeWorkerBundleCommand(outputDir),
          ],
        },
      },
    })
    logGroup.grantWrite(role)
  }

  /** Set one FLOE_* setting (type-checked against lib/config.ts SETTINGS). */
  setting(name: SettingName, value: string): this {
    this.addEnvironment(name, value)
    return this
  }

  /** Table data and metadata under the warehouse prefix; FLOE_WAREHOUSE. `maintenance`: read, list, delete orphans only. */
  bindWarehouse(warehouse: Warehouse, access: 'readwrite' | 'maintenance' = 'readwrite'): this {
    if (access === 'maintenance') warehouse.grantTableMaintenance(this)
    else warehouse.grantTableFiles(this)
    return this.setting('FLOE_WAREHOUSE', warehouse.warehouseUrl)
  }

  /** Write-only dead-letter prefix (SSE-KMS); FLOE_DLQ. */
  bindDeadLetters(raw: RawRecords): this {
    raw.grantDeadLetterWrite(this)
    return this.setting('FLOE_DLQ', raw.deadLetterUrl)
  }

  /** Replay: read, rewrite and delete dead letters, read failed batches; FLOE_DLQ, FLOE_FAILED_BATCHES. */
  bindRawRecords(raw: RawRecords): this {
    raw.grantRead(this.role!, { replay: true })
    if (raw.failedBatchesUrl) this.setting('FLOE_FAILED_BATCHES', raw.failedBatchesUrl)
    return this.setting('FLOE_DLQ', raw.deadLetterUrl)
  }

  /** Control-table items (checkpoints, batches, leases) and its index; FLOE_CONTROL_TABLE. */
  bindControlTable(control: ControlTable, access: 'writer' | 'committer' | 'maintenance' | 'replay'): this {
    control.grant(this, access)
    return this.setting('FLOE_CONTROL_TABLE', control.table.tableName)
  }

  /** The Iceberg catalog (DynamoDB table or Glue database); FLOE_CATALOG, FLOE_CATALOG_TABLE. `read`: load tables only. */
  bindCatalog(catalog: Catalog, access: 'readwrite' | 'read' = 'readwrite'): this {
    catalog.grant(this, access)
    for (const [name, value] of Object.entries(catalog.settings)) if (value !== undefined) this.setting(name as SettingName, value)
    return this
  }
}
