/**
 * `floe start` (= `npm start`): the whole pipeline on this machine. Starts DynamoDB Local
 * (persisted under ./floe-local/) and, with --s3, s3rver; creates the tables; generates a demo
 * stream (or reads --input); feeds it through the event-source-mapping simulator into the real
 * writer, with the real committer on a compressed schedule; prints a summary read back from the
 * tables and the commands to query them with other engines.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { createCatalog } from '../catalog/index.js'
import { createClients } from '../clients.js'
import { loadConfig, RoutesSchema, type FloeConfig, type Routes } from '../config.js'
import { ConfigError } from '../errors.js'
import { createFileIO } from '../io/index.js'
import { DEMO_ROUTES, generateDemo } from '../local/demo.js'
import { LOCAL_CREDENTIALS, LOCAL_REGION, startLocalEndpoints } from '../local/endpoints.js'
import { KafkaLog } from '../local/kafka-log.js'
import { KAFKA_USAGE, startFromKafka, takeKafkaArgs } from '../local/kafka-start.js'
import { ensureBucket, ensureCatalogTable, ensureControlTable } from '../local/init.js'
import { readInputFile } from '../local/input.js'
import { resumePositions, runLocalPipeline, type Progress } from '../local/pipeline.js'
import { countDeadLetters, refreshVersionHints, summarizeTables, type TableSummary } from '../local/summary.js'
import type { Command } from './command.js'

const USAGE = `usage: floe start [options]

Runs the whole pipeline locally: DynamoDB Local (+ s3rver with --s3), a generated demo stream or
your own records, the real writer and committer. A second run continues where the first stopped.

options:
  --records N        demo records to generate (default 20000)
  --input FILE       ingest Kafka records from NDJSON instead of the demo: one JSON object per
                     line with topic, partition, offset (optional), timestamp, key, value (JSON
                     value or string), headers ({name: value})
  --routes FILE      FLOE_ROUTES as a JSON file (default: the demo routes, or one table per topic
                     with --input or --kafka HOST:PORT)
  --dir DIR          local state (default ./floe-local)
  --s3               warehouse in the embedded S3 server instead of the local filesystem
  --reset            delete the local state first
  --seed N           demo data seed (default: changes every run)
  --batch-size N     records per writer invocation (default 500)
  --serve            keep the endpoints running after the summary (Ctrl-C to stop)
  --quiet            no progress output
  --json             print the summary as one JSON line at the end (for scripts and tests)
${KAFKA_USAGE}`

export const startCommand: Command = {
  name: 'start',
  summary: 'Run the whole pipeline locally: endpoints, a demo stream (or your records), writer, committer',
  usage: USAGE,
  run: async (argv) => {
    // The Kafka source's flags live in lib/local/kafka-start.ts; what is left is parsed here.
    const source = takeKafkaArgs(argv)
    const { values } = parseArgs({
      args: source.argv,
      options: {
        records: { type: 'string', default: '20000' },
        input: { type: 'string' },
        routes: { type: 'string' },
        dir: { type: 'string', default: 'floe-local' },
        s3: { type: 'boolean', default: false },
        reset: { type: 'boolean', default: false },
        seed: { type: 'string' },
        'batch-size': { type: 'string', default: '500' },
        serve: { type: 'boolean', default: false },
        quiet: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
    })
    const records = positiveInt('--records', values.records!)
    const batchSize = positiveInt('--batch-size', values['batch-size']!)
    const dir = resolve(values.dir!)
    if (values.reset) rmSync(dir, { recursive: true, force: true })
    const routes = loadRoutes(values.routes, values.input !== undefined || source.kafka?.brokers !== undefined)
    const out = (line: string) => process.stdout.write(`${line}\n`)

    out(`floe start: local state in ${dir}`)
    const endpoints = await startLocalEndpoints({ dataDir: dir })
    process.env.AWS_REGION ??= LOCAL_REGION
    if (endpoints.started.length > 0) {
      process.env.AWS_ACCESS_KEY_ID ??= LOCAL_CREDENTIALS.accessKeyId
      process.env.AWS_SECRET_ACCESS_KEY ??= LOCAL_CREDENTIALS.secretAccessKey
    }
    const interrupted = () => void endpoints.stop().finally(() => process.exit(130))
    // --kafka --follow stops on Ctrl-C itself, then settles and prints the summary.
    if (!source.kafka?.follow) process.once('SIGINT', interrupted)
    try {
      const warehouse = values.s3 ? 's3://floe-local/warehouse' : `file://${dir}/warehouse`
      const config = loadConfig(process.env, {
        FLOE_WAREHOUSE: warehouse,
        FLOE_ROUTES: JSON.stringify(routes),
        ...(process.env.FLOE_COMMIT_BACKOFF_MS ? {} : { FLOE_COMMIT_BACKOFF_MS: '20' }),
        // Broker offsets are not the simulator's: a Kafka run is its own pipeline (checkpoints, summary key).
        ...(source.kafka && !process.env.FLOE_PIPELINE ? { FLOE_PIPELINE: 'floe-kafka' } : {}),
      })
      const clients = createClients({ endpoints: { s3: endpoints.s3, dynamodb: endpoints.dynamodb }, region: config.region, maxAttempts: config.awsMaxAttempts })
      const io = createFileIO(clients)
      await ensureControlTable(clients.ddb, config.controlTable)
      await ensureCatalogTable(clients.ddb, config.catalogTable)
      if (values.s3) await ensureBucket(clients.s3, 'floe-local')
      out(`endpoints: DynamoDB ${endpoints.dynamodb}, S3 ${endpoints.s3}; warehouse ${warehouse}`)

      const catalog = createCatalog(config, clients, io)
      const namespaces = namespacesOf(routes)
      const before = await summarizeTables(catalog, io, namespaces)
      const positions = await resumePositions(config, clients, io)
      const log = new KafkaLog()
      let produced: number
      let poison = 0
      if (source.kafka?.brokers) {
        produced = 0
      } else if (values.input) {
        produced = readInputFile(values.input, log, positions)
        out(`input: ${produced} records from ${values.input}`)
      } else {
        const seed = values.seed !== undefined ? Number(values.seed) : Date.now() % 1_000_000
        const demo = generateDemo(log, { records, seed, startOffsets: positions })
        produced = demo.produced
        poison = demo.poison
        out(`demo stream: ${produced} records (${poison} poison) over ${Object.keys(demo.byTopic).length} topics, seed ${seed}`)
      }

      const progress = values.quiet ? undefined : progressPrinter(out)
      let result: Progress
      if (source.kafka) {
        const run = await startFromKafka(source.kafka, { config, clients, io, log, dataDir: dir, batchSize, quiet: values.quiet!, out })
        produced = run.produced
        result = run.result
      } else {
        result = await runLocalPipeline(config, clients, io, log, positions, { batchSize, onProgress: progress?.update })
        progress?.done(result)
      }
      if (!values.s3) await refreshVersionHints(catalog, io, namespaces)

      const dead = await countDeadLetters(io, config.dlq, config.pipeline)
      const after = await summarizeTables(catalog, io, namespaces, dead)
      printSummary(out, config, after, before, { produced, poison, result, dead: dead.total, endpoints })
      if (values.json) {
        const prior = new Map(before.map((t) => [t.table, t.rows]))
        out(JSON.stringify({ produced, poison, deadLetters: dead.total, tables: after.map((t) => ({ ...t, addedRows: t.rows - (prior.get(t.table) ?? 0) })) }))
      }
      if (values.serve) {
        out('\nendpoints are running; Ctrl-C to stop.')
        await new Promise(() => undefined)
      }
      return 0
    } finally {
      process.off('SIGINT', interrupted)
      await endpoints.stop()
    }
  },
}

function positiveInt(flag: string, text: string): number {
  const n = Number(text)
  if (!Number.isSafeInteger(n) || n < 1) throw new ConfigError(flag, `expected a positive integer, got ${JSON.stringify(text)}`)
  return n
}

function loadRoutes(file: string | undefined, custom: boolean): Routes {
  if (file === undefined) return custom ? RoutesSchema.parse({ routes: [{ table: '{topic}' }] }) : DEMO_ROUTES
  if (!existsSync(file)) throw new ConfigError('--routes', `file not found: ${file}`)
  const parsed = RoutesSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')))
  if (!parsed.success) throw new ConfigError('--routes', parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '))
  return parsed.data
}

function namespacesOf(routes: Routes): string[] {
  const out = new Set([routes.defaultNamespace])
  const add = (t: string) => t.includes('.') && out.add(t.slice(0, t.indexOf('.')))
  for (const t of Object.keys(routes.tables)) add(t)
  for (const r of routes.routes) {
    if ('table' in r) add(r.table)
    if ('match' in r) Object.keys(r.match).forEach(add)
    if ('namespace' in r && r.namespace) out.add(r.namespace)
  }
  if (typeof routes.unrouted === 'object') add(routes.unrouted.table)
  return [...out]
}

function progressPrinter(out: (line: string) => void) {
  const tty = process.stdout.isTTY === true
  let last = 0
  const line = (p: Progress) => {
    const rate = p.elapsedMs > 0 ? Math.round((p.delivered / p.elapsedMs) * 1000) : 0
    const stats = `${p.delivered.toLocaleString('en-US')}/${p.total.toLocaleString('en-US')} records · ${rate.toLocaleString('en-US')} rec/s · ${p.batches} batches · ${p.files} files · ${p.commits} commits · ${p.deadLetters} dead letters`
    if (!tty) return stats
    const width = 24
    const filled = p.total > 0 ? Math.round((p.delivered / p.total) * width) : width
    return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${stats}`
  }
  return {
    update: (p: Progress) => {
      if (tty) process.stdout.write(`\r${line(p)}\u001b[K`)
      else if (p.elapsedMs - last >= 2_000) {
        last = p.elapsedMs
        out(line(p))
      }
    },
    done: (p: Progress) => {
      if (tty) process.stdout.write(`\r${line(p)}\u001b[K\n`)
      else out(line(p))
    },
  }
}

function printSummary(
  out: (line: string) => void,
  config: FloeConfig,
  tables: TableSummary[],
  before: TableSummary[],
  run: { produced: number; poison: number; result: Progress; dead: number; endpoints: { dynamodb: string; s3: string } },
): void {
  const prior = new Map(before.map((t) => [t.table, t]))
  out('')
  out(`done in ${(run.result.elapsedMs / 1000).toFixed(1)} s: ${run.result.batches} writer invocations, ${run.result.commits} commits`)
  out('')
  out('table                          rows (+this run)        files  snapshots  partitions  dead letters')
  for (const t of tables) {
    const added = t.rows - (prior.get(t.table)?.rows ?? 0)
    out(`${t.table.padEnd(30)} ${`${t.rows} (+${added})`.padEnd(22)} ${String(t.files).padStart(6)} ${String(t.snapshots).padStart(10)} ${String(t.partitions).padStart(11)} ${String(t.deadLetters).padStart(13)}`)
  }
  const addedRows = tables.reduce((n, t) => n + t.rows - (prior.get(t.table)?.rows ?? 0), 0)
  out('')
  out(`this run: ${run.produced} records produced, ${run.poison} poison; ${addedRows} rows added to tables; dead-letter store holds ${run.dead} in all (${config.dlq})`)
  if (tables.length === 0) return
  const first = tables[0]!
  const localPath = (p: string) => p.replace(/^file:\/\//, '')
  out('')
  out('query the result:')
  out(`  floe inspect ${localPath(first.metadataLocation)}`)
  if (first.metadataLocation.startsWith('file://')) {
    out(`  duckdb -c "INSTALL iceberg; LOAD iceberg; SELECT count(*) FROM iceberg_scan('${localPath(first.metadataLocation)}');"`)
  }
  out('  Spark (Iceberg DynamoDbCatalog, same catalog table; start the endpoints with `floe start --serve`):')
  out(`    --conf spark.sql.catalog.floe=org.apache.iceberg.spark.SparkCatalog \\`)
  out(`    --conf spark.sql.catalog.floe.catalog-impl=org.apache.iceberg.aws.dynamodb.DynamoDbCatalog \\`)
  out(`    --conf spark.sql.catalog.floe.dynamodb.table-name=${config.catalogTable} \\`)
  out(`    --conf spark.sql.catalog.floe.warehouse=${config.warehouse} \\`)
  out(`    --conf spark.sql.catalog.floe.client.region=${config.region ?? LOCAL_REGION}   (plus dynamodb.endpoint=${run.endpoints.dynamodb} while serving)`)
  out(`  PyIceberg: load_catalog("floe", type="dynamodb", **{"table-name": "${config.catalogTable}", "dynamodb.endpoint": "${run.endpoints.dynamodb}", "dynamodb.region": "${config.region ?? LOCAL_REGION}"})`)
}
