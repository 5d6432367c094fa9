/**
 * `floe start` (= `npm start`): the whole pipeline on this machine. Starts DynamoDB Local
 * (persisted under ./floe-local/) and, with --s3, s3rver; creates the tables; generates a demo
 * stream (or reads --input); feeds it through the event-source-mapping simulator into the real
 * writer, with the real committer on a compressed schedule; prints a summary read back from the
 * tables and the commands to query them with other engines.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { relative, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { createCatalog, listenRest, normalizeTableId } from '../catalog/index.js'
import { createClients, endpointsFromEnv } from '../clients.js'
import { loadConfig, parseRoutes, RoutesSchema, type FloeConfig, type Routes } from '../config.js'
import { ConfigError } from '../errors.js'
import { createFileIO } from '../io/index.js'
import { DEMO_ROUTES, generateDemo, LOCAL_CREDENTIALS, LOCAL_REGION, startLocalEndpoints, KafkaLog, KAFKA_USAGE, startFromKafka, takeKafkaArgs, type KafkaStartOptions, ensureBucket, ensureCatalogTable, ensureControlTable, appendInput, readInputFile, writeInputDeadLetters, type InputFile, resumePositions, runLocalPipeline, type Progress, saveLocalState, removeServeInfo, writeServeInfo, countDeadLetters, refreshVersionHints, summarizeTables } from '../local/index.js'
import { count as count_, printSummary, progressPrinter, serveInstructions } from './start-report.js'
import type { Command } from './command.js'

const USAGE = `usage: floe start [options]

Runs the whole pipeline locally: DynamoDB Local (+ s3rver with --s3), a generated demo stream or
your own records, the real writer and committer. A second run continues where the first stopped.

options:
  --records N        demo records to generate (default 20000; 0 with --serve: just serve)
  --input FILE       ingest Kafka records from NDJSON instead of the demo: one JSON object per
                     line with topic, partition, offset (optional), timestamp, key, value (JSON
                     value or string), headers ({name: value})
  --routes FILE      FLOE_ROUTES as a JSON file (default: the demo routes, or one table per topic
                     with --input)
  --dir DIR          local state (default ./floe-local)
  --s3               warehouse in the embedded S3 server instead of the local filesystem
  --reset            delete the local state first
  --seed N           demo data seed (default: changes every run)
  --batch-size N     records per writer invocation (default 500)
  --serve            keep the endpoints running after the summary (Ctrl-C to stop), and serve
                     the catalog as an Iceberg REST catalog on loopback
  --rest-port N      port of that REST catalog (default 8181, the REST convention; taken: any)
  --quiet            no progress output
  --json             print the summary as one JSON line at the end (for scripts and tests)

Everything is validated before anything starts or is deleted: FLOE_* settings, --routes (file,
line, JSON path, "did you mean"), --input (a missing file fails; a malformed line becomes a dead
letter naming its line). Exit codes: 0 done, 1 failed while running, 2 bad usage or settings.
${KAFKA_USAGE}`

/** The flags of `floe start`; a new record source adds its flags here and a case in plan(). */
const START_OPTIONS = {
  records: { type: 'string', default: '20000' },
  input: { type: 'string' },
  routes: { type: 'string' },
  dir: { type: 'string', default: 'floe-local' },
  s3: { type: 'boolean', default: false },
  reset: { type: 'boolean', default: false },
  seed: { type: 'string' },
  'batch-size': { type: 'string', default: '500' },
  serve: { type: 'boolean', default: false },
  'rest-port': { type: 'string', default: '8181' },
  quiet: { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
} as const

/** Where the run's records come from. */
type Source = { kind: 'demo'; records: number; seed: number } | { kind: 'input'; input: InputFile }

/** Everything checked, nothing started: what the run will do. */
interface Plan {
  dir: string
  warehouse: string
  config: FloeConfig
  routes: Routes
  source: Source
  batchSize: number
  s3: boolean
  reset: boolean
  serve: boolean
  restPort: number
  quiet: boolean
  json: boolean
  /** The FLOE_* settings of the run, saved for the other commands (lib/local/state.ts). */
  settings: Record<string, string>
  /** `--kafka [host:port]`: records come through a Kafka broker (lib/local/kafka-start.ts). */
  kafka?: KafkaStartOptions
}

/** Validate flags, settings, routes and input; throws ConfigError before anything starts or is deleted. */
export function plan(argv: string[], env: NodeJS.ProcessEnv = process.env): Plan {
  // The Kafka source's flags live in lib/local/kafka-start.ts; what is left is parsed here.
  const { argv: rest, kafka } = takeKafkaArgs(argv)
  const { values } = parseArgs({ args: rest, options: START_OPTIONS, strict: true, allowPositionals: false })
  const serve = values.serve!
  const records = count('--records', values.records!, serve ? 0 : 1)
  const batchSize = count('--batch-size', values['batch-size']!, 1)
  const dir = resolve(values.dir!)
  const routes = loadRoutes(values.routes, values.input !== undefined || kafka?.brokers !== undefined)
  const warehouse = values.s3 ? 's3://floe-local/warehouse' : `file://${dir}/warehouse`
  const overrides = {
    FLOE_WAREHOUSE: warehouse,
    FLOE_ROUTES: JSON.stringify(routes),
    ...(env.FLOE_COMMIT_BACKOFF_MS ? {} : { FLOE_COMMIT_BACKOFF_MS: '20' }),
    // Broker offsets are not the simulator's: a Kafka run is its own pipeline (checkpoints, summary key).
    ...(kafka && !env.FLOE_PIPELINE ? { FLOE_PIPELINE: 'floe-kafka' } : {}),
  }
  const config = loadConfig({ ...env, AWS_REGION: env.AWS_REGION ?? LOCAL_REGION }, overrides)
  const source: Source = values.input
    ? { kind: 'input', input: readInputFile(values.input) }
    : { kind: 'demo', records, seed: values.seed !== undefined ? count('--seed', values.seed, 0) : Date.now() % 1_000_000 }
  const settings: Record<string, string> = { ...overrides }
  for (const [k, v] of Object.entries(env)) if (k.startsWith('FLOE_') && v) settings[k] = v
  delete settings.FLOE_WAREHOUSE
  const restPort = count('--rest-port', values['rest-port']!, 0)
  return { dir, warehouse, config, routes, source, batchSize, s3: values.s3!, reset: values.reset!, serve, restPort, quiet: values.quiet!, json: values.json!, settings, kafka }
}

export const startCommand: Command = {
  name: 'start',
  summary: 'Run the whole pipeline locally: endpoints, a demo stream (or your records), writer, committer',
  usage: USAGE,
  run: async (argv) => {
    const p = plan(argv)
    const out = (line: string) => process.stdout.write(`${line}\n`)
    if (p.reset) rmSync(p.dir, { recursive: true, force: true })
    mkdirSync(p.dir, { recursive: true })
    out(`floe start: local state in ${p.dir}`)
    if (p.source.kind === 'input') {
      const bad = p.source.input.malformed
      out(`input: ${p.source.input.records.length.toLocaleString('en-US')} records from ${p.source.input.file}${bad.length ? `; ${bad.length} malformed lines become dead letters (line ${bad.slice(0, 10).map((m) => m.line).join(', ')}${bad.length > 10 ? ', …' : ''})` : ''}`)
    }
    const given = endpointsFromEnv(process.env)
    if (!given.dynamodb || !given.s3) out(`starting ${[!given.dynamodb && 'DynamoDB Local', !given.s3 && 's3rver'].filter(Boolean).join(' and ')}…`)
    const endpoints = await startLocalEndpoints({ dataDir: p.dir })
    process.env.AWS_REGION ??= LOCAL_REGION
    if (endpoints.started.length > 0) {
      process.env.AWS_ACCESS_KEY_ID ??= LOCAL_CREDENTIALS.accessKeyId
      process.env.AWS_SECRET_ACCESS_KEY ??= LOCAL_CREDENTIALS.secretAccessKey
    }
    let stopped: () => void = () => undefined
    const interrupted = new Promise<void>((done) => (stopped = done))
    const onSigint = () => (p.serve ? stopped() : void endpoints.stop().finally(() => process.exit(130)))
    // --kafka --follow stops on Ctrl-C itself, then settles the commits and prints the summary.
    if (!p.kafka?.follow) process.on('SIGINT', onSigint)
    process.on('SIGTERM', onSigint)
    try {
      const { config } = p
      const clients = createClients({ endpoints: { s3: endpoints.s3, dynamodb: endpoints.dynamodb }, region: config.region, maxAttempts: config.awsMaxAttempts })
      const io = createFileIO(clients)
      await ensureControlTable(clients.ddb, config.controlTable)
      await ensureCatalogTable(clients.ddb, config.catalogTable)
      if (p.s3) await ensureBucket(clients.s3, 'floe-local')
      saveLocalState(p.dir, { warehouse: p.warehouse, s3: p.s3, settings: p.settings })
      out(`endpoints: DynamoDB ${endpoints.dynamodb}, S3 ${endpoints.s3}; warehouse ${p.warehouse}`)

      const catalog = createCatalog(config, clients, io)
      const namespaces = namespacesOf(p.routes)
      const before = await summarizeTables(catalog, io, namespaces)
      const deadBefore = (await countDeadLetters(io, config.dlq, config.pipeline)).total
      const positions = await resumePositions(config, clients, io)
      const log = new KafkaLog()
      let produced: number
      let bad: { count: number; what: string }
      let sourceText: string
      if (p.kafka?.brokers) {
        produced = 0
        bad = { count: 0, what: 'of them poison' }
        sourceText = `from ${p.kafka.brokers.join(',')}`
      } else if (p.source.kind === 'input') {
        produced = appendInput(p.source.input, log, positions)
        bad = { count: await writeInputDeadLetters(io, config.dlq, config.pipeline, p.source.input), what: 'malformed lines, dead-lettered' }
        sourceText = `from ${p.source.input.file}`
      } else {
        const demo = generateDemo(log, { records: p.source.records, seed: p.source.seed, startOffsets: positions })
        produced = demo.produced
        bad = { count: demo.poison, what: 'of them poison' }
        sourceText = `generated with seed ${p.source.seed} over ${count_(Object.keys(demo.byTopic).length, 'topic')}`
        if (produced) out(`demo stream: ${produced.toLocaleString('en-US')} records (${demo.poison} poison) over ${Object.keys(demo.byTopic).length} topics, seed ${p.source.seed}`)
      }

      const progress = p.quiet ? undefined : progressPrinter(out)
      let result: Progress
      if (p.kafka) {
        const run = await startFromKafka(p.kafka, { config, clients, io, log, dataDir: p.dir, batchSize: p.batchSize, quiet: p.quiet, out })
        produced = run.produced
        result = run.result
      } else {
        result = await runLocalPipeline(config, clients, io, log, positions, { batchSize: p.batchSize, onProgress: progress?.update })
        progress?.done(result)
      }
      if (!p.s3) await refreshVersionHints(catalog, io, namespaces)

      const dead = await countDeadLetters(io, config.dlq, config.pipeline)
      const after = await summarizeTables(catalog, io, namespaces, dead)
      const rel = relative(process.cwd(), p.dir) || '.'
      const dirFlag = rel === 'floe-local' ? '' : ` --dir ${rel.includes(' ') ? JSON.stringify(rel) : rel}`
      printSummary(out, config, after, before, { source: sourceText, produced, bad, result, deadBefore, dead, cli: 'npx floe', dirFlag, serving: p.serve })
      if (p.json) {
        const prior = new Map(before.map((t) => [t.table, t.rows]))
        const poison = p.source.kind === 'demo' ? bad.count : 0
        out(JSON.stringify({ produced, poison, malformed: p.source.kind === 'input' ? bad.count : 0, deadLetters: dead.total, newDeadLetters: dead.total - deadBefore, deadLettersByStage: Object.fromEntries(dead.byReason), tables: after.map((t) => ({ ...t, addedRows: t.rows - (prior.get(t.table) ?? 0) })) }))
      }
      if (p.serve) {
        const rest = await listenRest(catalog, { port: p.restPort }).catch(() => listenRest(catalog, { port: 0 }))
        writeServeInfo(p.dir, { pid: process.pid, dynamodb: endpoints.dynamodb, s3: endpoints.s3, rest: rest.uri })
        out(`REST catalog: ${rest.uri} (PyIceberg: load_catalog("floe", **{"type": "rest", "uri": "${rest.uri}"}); Spark: spark.sql.catalog.rest.type=rest, spark.sql.catalog.rest.uri=${rest.uri})`)
        for (const line of serveInstructions(config, endpoints, after[0])) out(line)
        // Keep the process alive (the endpoint processes are unref'd) until Ctrl-C or SIGTERM.
        const alive = setInterval(() => undefined, 60_000)
        await interrupted
        clearInterval(alive)
        removeServeInfo(p.dir)
        await rest.close()
        out('stopping the endpoints…')
      }
      return 0
    } finally {
      process.off('SIGINT', onSigint)
      process.off('SIGTERM', onSigint)
      await endpoints.stop()
    }
  },
}

function count(flag: string, text: string, min: number): number {
  const v = Number(text)
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(v) || v < min) throw new ConfigError(flag, `expected ${min === 0 ? 'a non-negative' : 'a positive'} integer, got ${JSON.stringify(text)}`)
  return v
}

function loadRoutes(file: string | undefined, custom: boolean): Routes {
  if (file === undefined) return custom ? RoutesSchema.parse({ routes: [{ table: '{topic}' }] }) : DEMO_ROUTES
  if (!existsSync(file)) throw new ConfigError('--routes', `file not found: ${file}`)
  return parseRoutes(readFileSync(file, 'utf8'), `--routes ${file}`)
}

/** The namespaces the routes write, normalised as the writer names its tables (lib/catalog's normalizeTableId). */
function namespacesOf(routes: Routes): string[] {
  const out = new Set<string>()
  const add = (t: string, ns = routes.defaultNamespace) => {
    try {
      out.add(normalizeTableId(t, ns).namespace)
    } catch {
      // a name with an empty part: the writer routes nothing there either
    }
  }
  add('t') // a bare name: the default namespace
  for (const t of Object.keys(routes.tables)) add(t)
  for (const r of routes.routes) {
    if ('table' in r) add(r.table)
    if ('match' in r) Object.keys(r.match).forEach((t) => add(t))
    if ('namespace' in r && r.namespace) add('t', r.namespace)
  }
  if (typeof routes.unrouted === 'object') add(routes.unrouted.table)
  return [...out]
}
