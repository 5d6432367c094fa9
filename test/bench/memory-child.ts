/**
 * One writer invocation in its own process, for peak RSS (run by memory.ts, one child per
 * budget): a ≤ 6 MB MSK event of 200-column records fanned out to TABLES dynamic tables ×
 * SLOTS identity-partition values, written with FLOE_MEMORY_BUDGET_MB = BUDGET. Prints one JSON
 * line. The tables exist already (memory.ts creates them), as in a steady-state pipeline.
 */
import { readFileSync } from 'node:fs'
import { getHeapStatistics, writeHeapSnapshot } from 'node:v8'
import { wasmMemory } from 'parquet-wasm/node'
import { createClients } from '../../lib/clients.js'
import { loadConfig } from '../../lib/config.js'
import { createWriterDeps } from '../../lib/writer/deps.js'
import { writeBatch } from '../../lib/writer/pipeline.js'
import { memoryEvent, memoryRoutes } from './memory-data.js'
import { peakRssBytes, residentByMapping } from './peak-rss.js'

const env = process.env
/** RSS (after a full GC) at each step before the invocation: what the process holds without the writer. */
const baseline: Record<string, number> = {}
const mark = (step: string) => {
  global.gc?.()
  baseline[step] = Math.round(process.memoryUsage().rss / 2 ** 20)
}
mark('modules')
const budget = Number(env.BENCH_BUDGET_MB)
const tables = Number(env.BENCH_TABLES)
const slots = Number(env.BENCH_SLOTS)
const clients = createClients({ maxAttempts: 3 })
const config = loadConfig(
  {},
  {
    FLOE_PIPELINE: env.BENCH_PIPELINE!,
    FLOE_WAREHOUSE: env.BENCH_WAREHOUSE!,
    FLOE_CONTROL_TABLE: env.BENCH_CONTROL!,
    FLOE_CATALOG_TABLE: env.BENCH_CATALOG!,
    FLOE_MEMORY_BUDGET_MB: String(budget),
    // 50 tables x 24 files x 200-column metrics is ~4.2 MB of file lists: over DynamoDB's 4 MB
    // transaction payload with the default 300 KB spill threshold (a writer bug this bench found;
    // see docs/benchmarks.md). Spilling lists above 64 KB keeps the transaction small.
    FLOE_SPILL_THRESHOLD_KB: env.BENCH_SPILL_KB ?? '64',
    FLOE_ROUTES: JSON.stringify(memoryRoutes(env.BENCH_NAMESPACE!)),
    // Settings under study, passed through from the bench's environment (default: Floe's).
    ...Object.fromEntries(['FLOE_GC_HEADROOM_MB', 'FLOE_WRITER_WORKERS'].flatMap((k) => (env[k] ? [[k, env[k]]] : []))),
  },
)
const deps = await createWriterDeps(config, clients)
mark('deps')
// The event as Lambda's runtime hands it over: JSON parsed from its text (memory.ts writes it
// once), so the generator's garbage is not in this process's RSS.
const { event, records, jsonBytes } = env.BENCH_EVENT_FILE ? (JSON.parse(readFileSync(env.BENCH_EVENT_FILE, 'utf8')) as ReturnType<typeof memoryEvent>) : memoryEvent(tables, slots)
mark('event')
const mb = (x: number) => Math.round(x / 2 ** 20)
/** process.memoryUsage() in MB, parquet-wasm's linear memory beside it. */
const usageMB = (m: NodeJS.MemoryUsage) => ({ ...Object.fromEntries(Object.entries(m).map(([k, v]) => [k, mb(v)])), wasm: mb(wasmMemory().buffer.byteLength) })
const before = process.memoryUsage()
/** What the RSS before the invocation is made of. */
const usageBefore = usageMB(before)
const rssBefore = before.rss
// The process's highest RSS so far (module loading, the event's JSON.parse): the peak after the run counts it too.
const maxRssBeforeMB = mb(peakRssBytes())
// Where the peak is: process.memoryUsage() sampled every 5 ms during the invocation (the timer
// fires between the writer's awaits), the highest of each part kept.
const peak = { rss: 0, heapUsed: 0, heapTotal: 0, external: 0, arrayBuffers: 0, wasm: 0 }
/** When (ms into the invocation) the sampled RSS was highest, and the process's memory then: the RSS beyond the JS heap, external memory and wasm is native (malloc, code, stacks). */
let peakRssAtMs = 0
let usageAtPeak: ReturnType<typeof usageMB> | undefined
const sample = () => {
  const m = process.memoryUsage()
  if (m.rss > peak.rss) {
    peakRssAtMs = Math.round(performance.now() - t0)
    usageAtPeak = usageMB(m)
  }
  peak.rss = Math.max(peak.rss, m.rss)
  peak.heapUsed = Math.max(peak.heapUsed, m.heapUsed)
  peak.heapTotal = Math.max(peak.heapTotal, m.heapTotal)
  peak.external = Math.max(peak.external, m.external)
  peak.arrayBuffers = Math.max(peak.arrayBuffers, m.arrayBuffers)
  peak.wasm = Math.max(peak.wasm, wasmMemory().buffer.byteLength)
}
// BENCH_SNAPSHOT_MB=n: a heap snapshot (v8.writeHeapSnapshot, in the working directory) the
// first time the JS heap in use passes n MB, to see what the peak is made of.
let snapshotAt = Number(env.BENCH_SNAPSHOT_MB ?? Infinity)
// Read before the clock starts (and after it stops): /proc/self/smaps takes a few ms.
const residentBefore = residentByMapping()
const t0 = performance.now()
/** Each rise of the process's peak RSS (peak-rss.ts) by ≥ 4 MB between two ticks: [ms into the invocation, ms since the tick before, MB]. */
const rises: number[][] = []
let lastMax = 0
let lastTick = 0
const sampler = setInterval(() => {
  sample()
  const now = performance.now() - t0
  const max = mb(peakRssBytes())
  if (max - lastMax >= 4) rises.push([Math.round(now), Math.round(now - lastTick), max])
  lastMax = Math.max(lastMax, max)
  lastTick = now
  if (process.memoryUsage().heapUsed > snapshotAt * 2 ** 20) {
    snapshotAt = Infinity
    console.error(`heap snapshot: ${writeHeapSnapshot()}`)
  }
}, 5)
const result = await writeBatch(deps, event)
const ms = performance.now() - t0
const residentAfter = residentByMapping()
clearInterval(sampler)
sample()
// Where the memory is after the invocation (before any GC): JS heap, and outside it (wasm, buffers).
const after = process.memoryUsage()
const files = result.tables.reduce((n, t) => n + t.files, 0)
console.log(
  JSON.stringify({
    budgetMB: budget,
    records,
    jsonBytes,
    tables: result.tables.length,
    files,
    outcome: result.outcome,
    deadLetters: result.deadLetters,
    flushes: result.flushes,
    peakBufferedBytes: result.peakBufferedBytes,
    rssBeforeMB: mb(rssBefore),
    maxRssBeforeMB,
    peakRssMB: mb(peakRssBytes()),
    ms: Math.round(ms),
    peakRssAtMs,
    maxRssRises: rises.slice(-8),
    // parquet-wasm's linear memory (never shrinks): ~20 MB once a 200-column file is encoded.
    wasmMB: mb(wasmMemory().buffer.byteLength),
    baselineMB: baseline,
    sampledPeakMB: Object.fromEntries(Object.entries(peak).map(([k, v]) => [k, mb(v)])),
    heapLimitMB: mb(getHeapStatistics().heap_size_limit),
    usageBeforeMB: usageBefore,
    usageAtPeakMB: usageAtPeak,
    // Resident memory by mapping (peak-rss.ts) before the invocation and right after it (the peak is at its end).
    residentMB: { before: residentBefore, after: residentAfter },
    execArgv: process.execArgv.join(' '),
    after: { heapUsedMB: mb(after.heapUsed), heapTotalMB: mb(after.heapTotal), externalMB: mb(after.external), arrayBuffersMB: mb(after.arrayBuffers), rssMB: mb(after.rss) },
  }),
)
clients.ddb.destroy()
clients.s3.destroy()
