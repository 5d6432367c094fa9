/**
 * Writer throughput: the same records through
 * - Floe's real path: base64 MSK events of ≤ 6 MB → writeBatch (parse, checkpoints, decode,
 *   route, coerce, Arrow, Parquet ZSTD, file write, fenced registration) with a file:// warehouse
 *   and DynamoDB Local for the control and catalog tables;
 * - Floe's encode path alone (no I/O): parseKafkaEvent → JSON decode (as the writer does it:
 *   JSON.parse, exact only where digits matter) → record guard → coerce → encodeParquet, one
 *   Parquet file per event, timed per stage;
 * - DuckDB (`SET threads=1`): NDJSON → Parquet ZSTD with COPY.
 * Each figure is the median of `runs` runs; CPU seconds come from process.cpuUsage() (Floe's
 * process also runs V8's GC threads; DynamoDB Local's JVM is a separate process and not counted).
 */
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import type { AwsClients } from '../../lib/clients.js'
import { createCatalog } from '../../lib/catalog/index.js'
import { createDecoders } from '../../lib/codec/index.js'
import { loadConfig } from '../../lib/config.js'
import { noteBacklog } from '../../lib/control/backlog.js'
import { createControlContext } from '../../lib/control/context.js'
import { createFileIO } from '../../lib/io/index.js'
import { parseKafkaEvent } from '../../lib/kafka/event-parts.js'
import { inferSchema } from '../../lib/schema/infer.js'
import { compileCoercer, encodeParquet } from '../../lib/writer/columnar/index.js'
import { parseJsonObject, parseJsonObjectFast } from '../../lib/codec/json.js'
import { inspectRecord } from '../../lib/writer/guard.js'
import { coerceExactly } from '../../lib/writer/tables.js'
import { writeBatch } from '../../lib/writer/pipeline.js'
import { compileRoutes } from '../../lib/writer/routing.js'
import type { WriterDeps } from '../../lib/writer/types.js'
import { collectGarbage, median, RequestCounter, round } from './common.js'
import { countingIO, emptyIoCounts, type IoCounts } from './counting-io.js'
import { eventOf, firstEvents, writeNdjson, type Dataset } from './data.js'

export interface RunFigures {
  wallMs: number
  cpuMs: number
}

export interface ThroughputResult {
  dataset: string
  records: number
  jsonMB: number
  events: number
  runs: number
  floe: { wallMs: number; cpuMs: number; recordsPerSec: number; jsonMBPerSec: number; recordsPerCpuSec: number; parquetBytes: number; files: number }
  encodeOnly: { wallMs: number; recordsPerSec: number; jsonMBPerSec: number; stagesMs: Record<string, number> }
  duckdb: { wallMs: number; cpuMs: number; recordsPerSec: number; jsonMBPerSec: number; recordsPerCpuSec: number; parquetBytes: number }
  ratio: { floeToDuckdb: number; encodeOnlyToDuckdb: number }
  /** Per writer invocation (one 6 MB event), for the cost model. */
  perInvocation: { ms: number; s3: IoCounts; ddbRequests: Record<string, number>; wcu: number; rcu: number; jsonBytes: number }
}

const MB = 1024 * 1024

function cpuMsSince(start: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(start)
  return (d.user + d.system) / 1000
}

export interface Ctx {
  clients: AwsClients
  counter: RequestCounter
  controlTable: string
  catalogTable: string
  dir: string
  stamp: string
  /** The table's partitionBy (partitioned.ts); unpartitioned when absent. */
  partitionBy?: string[]
}

/**
 * One pass of the real writer path over every event; a fresh pipeline and table per run.
 * `settings`: extra FLOE_* settings (workers.ts: FLOE_WRITER_WORKERS); `perEvent`: each event's figures.
 */
export async function floeRun(
  ctx: Ctx,
  ds: Dataset,
  run: number | string,
  io: IoCounts,
  settings: Record<string, string> = {},
  perEvent?: (f: RunFigures) => void,
): Promise<RunFigures & { parquetBytes: number; files: number }> {
  const table = `bench.${ds.name}_${ctx.stamp}_${run}`
  const config = loadConfig(
    {},
    {
      FLOE_PIPELINE: `bench-${ctx.stamp}-${ds.name}-${run}`,
      FLOE_WAREHOUSE: `file://${join(ctx.dir, 'warehouse')}`,
      FLOE_CONTROL_TABLE: ctx.controlTable,
      FLOE_CATALOG_TABLE: ctx.catalogTable,
      FLOE_ROUTES: JSON.stringify({ routes: [{ table }], ...(ctx.partitionBy ? { tables: { [table]: { partitionBy: ctx.partitionBy } } } : {}) }),
      ...settings,
    },
  )
  const fileIO = countingIO(createFileIO(ctx.clients), io)
  const deps: WriterDeps = {
    config,
    io: fileIO,
    catalog: createCatalog(config, ctx.clients, fileIO),
    control: createControlContext(config, ctx.clients.doc, fileIO),
    decoders: await createDecoders(config, ctx.clients),
    router: compileRoutes(config.routes),
  }
  // A running pipeline's committer notes each table's backlog every run, and writers read that
  // note (one GetItem) instead of counting every pending shard (FLOE_PENDING_SHARDS queries):
  // measure that steady state, not a pipeline whose committer has never run.
  await noteBacklog(deps.control, config.pipeline, table, 0)
  let parquetBytes = 0
  let files = 0
  const cpu = process.cpuUsage()
  const t0 = performance.now()
  for (const payload of ds.payloads) {
    const [ec, et] = [process.cpuUsage(), performance.now()]
    // The event as the handler gets it: the runtime parses the invocation's payload (timed, as on Lambda).
    const r = await writeBatch(deps, eventOf(payload))
    perEvent?.({ wallMs: performance.now() - et, cpuMs: cpuMsSince(ec) })
    if (r.outcome !== 'registered') throw new Error(`bench writer: outcome ${r.outcome}, dead letters ${r.deadLetters}`)
    if (r.deadLetters > 0) throw new Error(`bench writer: ${r.deadLetters} dead letters (${r.deadLetterPaths[0]})`)
    parquetBytes += r.bytesWritten
    files += r.tables.reduce((n, t) => n + t.files, 0)
  }
  return { wallMs: performance.now() - t0, cpuMs: cpuMsSince(cpu), parquetBytes, files }
}

/** The encode path without I/O, stage by stage. */
async function encodeRun(ds: Dataset): Promise<{ wallMs: number; stages: Record<string, number> }> {
  const config = loadConfig({}, { FLOE_WAREHOUSE: 'file:///tmp/unused' })
  const decoders = await createDecoders(config, {} as never)
  const first = parseKafkaEvent(eventOf(ds.payloads[0]!))
  const sample: Record<string, unknown>[] = []
  for (const r of first.slice(0, 1000)) {
    const d = await decoders.decodeValue(r)
    if (d.ok) sample.push(d.value)
  }
  const schema = inferSchema(sample)
  const coerce = compileCoercer(schema, { table: 'bench.encode' })
  const limits = config.limits
  const stages = { parseEvent: 0, decodeJson: 0, guard: 0, coerce: 0, encodeParquet: 0 }
  const t0 = performance.now()
  for (const payload of ds.payloads) {
    let t = performance.now()
    const records = parseKafkaEvent(eventOf(payload))
    stages.parseEvent += performance.now() - t
    t = performance.now()
    // As the writer decodes JSON (lib/writer/pipeline.ts): JSON.parse, exact only where digits matter.
    const values: Record<string, unknown>[] = new Array(records.length)
    for (let i = 0; i < records.length; i++) {
      const d = parseJsonObjectFast(records[i]!.value!)
      if (!d.ok) throw new Error(d.reason)
      values[i] = d.value
    }
    stages.decodeJson += performance.now() - t
    t = performance.now()
    for (const v of values) if (inspectRecord(v, limits, { declared: false }).problem !== undefined) throw new Error('bench record breaks a limit')
    stages.guard += performance.now() - t
    t = performance.now()
    const rows = values.map((v, i) => coerceExactly(coerce, v, () => (parseJsonObject(records[i]!.value!) as { value: Record<string, unknown> }).value).row)
    stages.coerce += performance.now() - t
    t = performance.now()
    await encodeParquet(schema, rows, { compression: 'zstd' })
    stages.encodeParquet += performance.now() - t
  }
  return { wallMs: performance.now() - t0, stages }
}

export async function duckdbRun(ndjson: string, out: string): Promise<RunFigures & { parquetBytes: number }> {
  const instance = await DuckDBInstance.create(':memory:')
  const conn = await instance.connect()
  try {
    await conn.run('SET threads=1')
    // As before each Floe pass: process.cpuUsage() counts V8's helper threads too, and a pass's
    // garbage collected concurrently during DuckDB's run would be charged to DuckDB.
    collectGarbage()
    const cpu = process.cpuUsage()
    const t0 = performance.now()
    await conn.run(`COPY (SELECT * FROM read_json('${ndjson}')) TO '${out}' (FORMAT parquet, COMPRESSION zstd)`)
    return { wallMs: performance.now() - t0, cpuMs: cpuMsSince(cpu), parquetBytes: statSync(out).size }
  } finally {
    conn.closeSync()
    instance.closeSync()
  }
}

export async function benchThroughput(
  clients: AwsClients,
  tables: { control: string; catalog: string },
  ds: Dataset,
  runs: number,
  log: (s: string) => void = () => undefined,
): Promise<ThroughputResult> {
  const dir = mkdtempSync(join(tmpdir(), `floe-bench-${ds.name}-`))
  mkdirSync(join(dir, 'warehouse'), { recursive: true })
  const counter = new RequestCounter()
  counter.attach(clients)
  const ctx: Ctx = { clients, counter, controlTable: tables.control, catalogTable: tables.catalog, dir, stamp: Date.now().toString(36) }
  try {
    const ndjson = join(dir, `${ds.name}.ndjson`)
    writeNdjson(ndjson, ds)
    const jsonMB = ds.jsonBytes / MB

    // Warm-up, not measured: a whole pass of Floe's writer and of DuckDB (optimised code, wasm,
    // DuckDB's extension: a one-event warm-up left Floe's first measured run 10–20 % slower than the
    // others, while DuckDB's warm-up was always the whole file); one event of the encode path.
    await floeRun(ctx, ds, 'warm', emptyIoCounts())
    await encodeRun(firstEvents(ds, 1))
    await duckdbRun(ndjson, join(dir, 'warm.parquet'))

    const floe: (RunFigures & { parquetBytes: number; files: number })[] = []
    const enc: { wallMs: number; stages: Record<string, number> }[] = []
    const duck: (RunFigures & { parquetBytes: number })[] = []
    let io = emptyIoCounts()
    let requests: Record<string, number> = {}
    let wcu = 0
    let rcu = 0
    for (let run = 0; run < runs; run++) {
      const ioRun = emptyIoCounts()
      counter.reset()
      collectGarbage()
      floe.push(await floeRun(ctx, ds, run, ioRun))
      if (run === 0) {
        io = ioRun
        requests = counter.snapshot()
        wcu = counter.wcu
        rcu = counter.rcu
      }
      collectGarbage()
      enc.push(await encodeRun(ds))
      duck.push(await duckdbRun(ndjson, join(dir, `duck-${run}.parquet`)))
      log(`  ${ds.name} run ${run + 1}/${runs}: floe ${round(floe.at(-1)!.wallMs)} ms, encode-only ${round(enc.at(-1)!.wallMs)} ms, duckdb ${round(duck.at(-1)!.wallMs)} ms`)
    }
    const fw = median(floe.map((r) => r.wallMs))
    const fc = median(floe.map((r) => r.cpuMs))
    const ew = median(enc.map((r) => r.wallMs))
    const dw = median(duck.map((r) => r.wallMs))
    const dc = median(duck.map((r) => r.cpuMs))
    const perSec = (ms: number) => round(ds.records / (ms / 1000))
    const mbPerSec = (ms: number) => round(jsonMB / (ms / 1000), 2)
    const n = ds.payloads.length
    const per = (x: number) => round(x / n, 3)
    return {
      dataset: ds.name,
      records: ds.records,
      jsonMB: round(jsonMB, 1),
      events: n,
      runs,
      floe: { wallMs: round(fw), cpuMs: round(fc), recordsPerSec: perSec(fw), jsonMBPerSec: mbPerSec(fw), recordsPerCpuSec: perSec(fc), parquetBytes: floe[0]!.parquetBytes, files: floe[0]!.files },
      encodeOnly: {
        wallMs: round(ew),
        recordsPerSec: perSec(ew),
        jsonMBPerSec: mbPerSec(ew),
        stagesMs: Object.fromEntries(Object.keys(enc[0]!.stages).map((k) => [k, round(median(enc.map((r) => r.stages[k]!)))])),
      },
      duckdb: { wallMs: round(dw), cpuMs: round(dc), recordsPerSec: perSec(dw), jsonMBPerSec: mbPerSec(dw), recordsPerCpuSec: perSec(dc), parquetBytes: duck[0]!.parquetBytes },
      ratio: { floeToDuckdb: round(dw / fw, 3), encodeOnlyToDuckdb: round(dw / ew, 3) },
      perInvocation: {
        ms: round(fw / n, 1),
        s3: { PUT: per(io.PUT), GET: per(io.GET), HEAD: per(io.HEAD), LIST: per(io.LIST), DELETE: per(io.DELETE), bytesWritten: round(io.bytesWritten / n) },
        ddbRequests: Object.fromEntries(Object.entries(requests).filter(([k]) => k.startsWith('ddb:')).map(([k, v]) => [k, per(v)])),
        wcu: per(wcu),
        rcu: per(rcu),
        jsonBytes: round(ds.jsonBytes / n),
      },
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** One profiled pass of the real writer path over `ds` (after a warm-up pass). */
export async function profileWriter(
  clients: AwsClients,
  tables: { control: string; catalog: string },
  ds: Dataset,
  run: <T>(f: () => Promise<T>) => Promise<[T, unknown]>,
  settings: Record<string, string> = {},
): Promise<{ wallMs: number; cpuMs: number; profile: unknown }> {
  const dir = mkdtempSync(join(tmpdir(), `floe-bench-prof-`))
  const ctx: Ctx = { clients, counter: new RequestCounter(), controlTable: tables.control, catalogTable: tables.catalog, dir, stamp: `p${Date.now().toString(36)}` }
  try {
    await floeRun(ctx, firstEvents(ds, 1), -1, emptyIoCounts(), settings)
    const [r, profile] = await run(() => floeRun(ctx, ds, 0, emptyIoCounts(), settings))
    return { wallMs: round(r.wallMs), cpuMs: round(r.cpuMs), profile }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
