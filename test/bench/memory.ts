/**
 * Writer memory: peak RSS of one writer invocation (a child process per budget, so its peak,
 * VmHWM (peak-rss.ts), is that invocation's alone) handling one 6 MB event of 200-column records fanned out to
 * `tables` × `slots` (table, partition) buffers, at each FLOE_MEMORY_BUDGET_MB. The tables are
 * created first by a warm-up invocation in this process, as a running pipeline would have them.
 *
 * The child runs BUNDLED, as Lambda runs the writer: esbuild with the options `cdk synth` gives
 * every FloeFunction (infra/constructs/floe-function.ts: ESM, node22, minified, keepNames,
 * everything bundled, parquet-wasm's .wasm beside the bundle), not under tsx (whose compiler
 * and module graph add ~150 MB of their own).
 */
import { execFile } from 'node:child_process'
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { build } from 'esbuild'
import { ENCODE_WORKER, ENCODE_WORKER_BUILD, ESM_BANNER, nodeOptions, PARQUET_WASM, processEnvironment } from '../../infra/constructs/floe-function.js'
import type { AwsClients } from '../../lib/clients.js'
import { loadConfig } from '../../lib/config.js'
import { createWriterDeps } from '../../lib/writer/deps.js'
import { writeBatch } from '../../lib/writer/pipeline.js'
import { median } from './common.js'
import { memoryEvent, memoryRoutes } from './memory-data.js'

export interface MemoryResult {
  budgetMB: number
  records: number
  jsonBytes: number
  tables: number
  files: number
  flushes: Record<string, number>
  peakBufferedBytes: number
  rssBeforeMB: number
  peakRssMB: number
  ms: number
  runs: number
  /** How the child's Node ran (lambdaNode): Floe's NODE_OPTIONS or the runtime's own heap sizes. */
  mode?: NodeMode
  functionMb?: number
  nodeArgs?: string
  /** RSS after a full GC at each step before the invocation (modules loaded, clients, event parsed). */
  baselineMB?: Record<string, number>
  /** process.memoryUsage() parts (and parquet-wasm's memory) at their highest during the invocation. */
  sampledPeakMB?: Record<string, number>
  heapLimitMB?: number
  /** parquet-wasm's linear memory after the invocation. */
  wasmMB?: number
  /** Resident memory by mapping before and right after the invocation (first run; peak-rss.ts residentByMapping). */
  residentMB?: { before?: Record<string, unknown>; after?: Record<string, unknown> }
  /** process.memoryUsage() right after the invocation (first run). */
  after?: { heapUsedMB: number; heapTotalMB: number; externalMB: number; arrayBuffersMB: number; rssMB: number }
}

/** The function memory the child runs as (2 vCPUs; the worker_threads size of issue 20). */
export const LAMBDA_FUNCTION_MB = 1_769

/**
 * How the child's Node is started: as Lambda's nodejs22.x runtime starts it for a function of
 * `memoryMb` — its bootstrap runs `node --expose-gc --max-http-header-size 81920` and, when
 * NODE_OPTIONS names neither heap flag, adds --max-semi-space-size of 5 % and
 * --max-old-space-size of 90 % of the memory (docs/benchmarks.md cites it) — with NODE_OPTIONS
 * either what FloeFunction sets (`floe`: infra nodeOptions(), FLOE_V8_* defaults) or the
 * runtime's own sizes (`lambda`: NODE_OPTIONS without heap flags, as before Floe set them).
 */
export type NodeMode = 'floe' | 'lambda'

export function lambdaNode(memoryMb: number, mode: NodeMode): { args: string[]; nodeOptions: string; env: Record<string, string> } {
  // floe: FLOE_SOURCE_MAPS / FLOE_V8_SEMI_SPACE_MB / FLOE_MALLOC_MMAP_THRESHOLD_KB from the bench's environment, else their defaults.
  const options = mode === 'floe' ? nodeOptions(memoryMb, process.env) : '--enable-source-maps'
  const env = mode === 'floe' ? processEnvironment(process.env) : {}
  const args = ['--expose-gc', '--max-http-header-size', '81920']
  if (!/--max[-_](semi|old)[-_]space[-_]size/.test(options)) {
    const newSpace = Math.floor(memoryMb / 10)
    args.push(`--max-semi-space-size=${Math.floor(newSpace / 2)}`, `--max-old-space-size=${memoryMb - newSpace}`)
  }
  return { args, nodeOptions: options, env }
}

const child = fileURLToPath(new URL('./memory-child.ts', import.meta.url))
const run = promisify(execFile)

/** The child as one ESM bundle in `dir` (cdk's NodejsFunction options), its path. */
export async function bundleChild(dir: string): Promise<string> {
  const outfile = join(dir, 'memory-child.mjs')
  await build({
    entryPoints: [child],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    mainFields: ['module', 'main'],
    banner: { js: ESM_BANNER },
    minify: true,
    keepNames: true,
    sourcemap: true,
    sourcesContent: false,
    logLevel: 'error',
  })
  copyFileSync(PARQUET_WASM, join(dir, 'parquet_wasm_bg.wasm'))
  // FLOE_WRITER_WORKERS: the encode worker beside the bundle, as FloeFunction ships it.
  await build({ ...ENCODE_WORKER_BUILD, entryPoints: [ENCODE_WORKER], outfile: join(dir, 'encode-worker.cjs') })
  return outfile
}

export async function benchMemory(
  clients: AwsClients,
  tables: { control: string; catalog: string },
  opts: { budgets: number[]; tables: number; slots: number; runs: number; functionMb?: number; modes?: NodeMode[]; nodeFlags?: string[] },
  log: (s: string) => void = () => undefined,
): Promise<MemoryResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'floe-bench-mem-'))
  const stamp = Date.now().toString(36)
  const namespace = `mem${stamp}`
  const base = {
    FLOE_WAREHOUSE: `file://${join(dir, 'warehouse')}`,
    FLOE_CONTROL_TABLE: tables.control,
    FLOE_CATALOG_TABLE: tables.catalog,
    FLOE_ROUTES: JSON.stringify(memoryRoutes(namespace)),
    FLOE_SPILL_THRESHOLD_KB: '64',
  }
  try {
    // Create the tables: one record per (table), full width, so every child finds them all.
    const config = loadConfig({}, { ...base, FLOE_PIPELINE: `mem-${stamp}-init` })
    const deps = await createWriterDeps(config, clients)
    const warm = await writeBatch(deps, memoryEvent(opts.tables, opts.slots, opts.tables).event)
    if (warm.tables.length !== opts.tables) throw new Error(`memory bench: created ${warm.tables.length} tables, expected ${opts.tables}`)

    const bundle = await bundleChild(dir)
    const eventFile = join(dir, 'event.json')
    writeFileSync(eventFile, JSON.stringify(memoryEvent(opts.tables, opts.slots), (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)))
    const out: MemoryResult[] = []
    for (const budget of opts.budgets) {
      const results: MemoryResult[] = []
      for (const mode of opts.modes ?? ['floe'])
      for (let r = 0; r < opts.runs; r++) {
        const lambda = lambdaNode(opts.functionMb ?? LAMBDA_FUNCTION_MB, mode)
        // Flags under study (memory-run.ts --node-flags) after the runtime's own.
        lambda.args.push(...(opts.nodeFlags ?? []))
        const { stdout } = await run(process.execPath, [...lambda.args, bundle], {
          env: {
            ...process.env,
            ...lambda.env,
            NODE_OPTIONS: lambda.nodeOptions,
            BENCH_BUDGET_MB: String(budget),
            BENCH_TABLES: String(opts.tables),
            BENCH_SLOTS: String(opts.slots),
            BENCH_PIPELINE: `mem-${stamp}-${budget}-${mode}-${r}`,
            BENCH_WAREHOUSE: base.FLOE_WAREHOUSE,
            BENCH_CONTROL: tables.control,
            BENCH_CATALOG: tables.catalog,
            BENCH_NAMESPACE: namespace,
            BENCH_EVENT_FILE: eventFile,
            POWERTOOLS_LOG_LEVEL: 'ERROR',
          },
          maxBuffer: 16 * 1024 * 1024,
        })
        const line = stdout.trim().split('\n').filter((l) => l.startsWith('{"budgetMB"')).at(-1)
        if (!line) throw new Error(`memory child printed no result: ${stdout.slice(-500)}`)
        const res = JSON.parse(line) as MemoryResult & { outcome: string; deadLetters: number }
        if (res.outcome !== 'registered' || res.deadLetters > 0) throw new Error(`memory child: outcome ${res.outcome}, dead letters ${res.deadLetters}`)
        // The writer's own accounting is bounded by the budget whatever the process's RSS does.
        if (res.peakBufferedBytes > budget * 2 ** 20) throw new Error(`memory child: accounting peak ${res.peakBufferedBytes} bytes over the ${budget} MB budget`)
        results.push({ ...res, mode, functionMb: opts.functionMb ?? LAMBDA_FUNCTION_MB, nodeArgs: `${lambda.args.join(' ')}; NODE_OPTIONS=${lambda.nodeOptions}${Object.entries(lambda.env).map(([k, v]) => `; ${k}=${v}`).join('')}` })
        log(`  budget ${budget} MB, ${mode}, run ${r + 1}/${opts.runs}: peak RSS ${res.peakRssMB} MB, ${res.files} files, ${res.ms} ms`)
      }
      for (const mode of opts.modes ?? ['floe']) {
        const mine = results.filter((x) => x.mode === mode)
        const m = (f: (x: MemoryResult) => number) => median(mine.map(f))
        out.push({ ...mine[0]!, peakRssMB: m((x) => x.peakRssMB), rssBeforeMB: m((x) => x.rssBeforeMB), ms: m((x) => x.ms), runs: opts.runs })
      }
    }
    return out
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
