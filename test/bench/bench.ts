/**
 * The benchmark suite behind `npm run bench`: writer throughput against DuckDB, writer memory
 * per budget, commit cost against history size, the cost model and a CPU profile of the writer
 * path. `runBench(sizes)` returns one JSON-able result; `formatResults` renders the tables.
 */
import { loadavg } from 'node:os'
import { benchCommit, type CommitResult } from './commit.js'
import { machine, round, withBenchTables, type Machine } from './common.js'
import { costModel, PRICES, type CostModel } from './cost.js'
import { makeDataset, narrowRecord, wideRecord, type Dataset } from './data.js'
import type { AwsClients } from '../../lib/clients.js'
import { benchCompactMemory, benchHistory, type CompactMemoryOptions, type CompactMemoryResult, type HistoryRow } from './maintenance.js'
import { benchMemory, type MemoryResult } from './memory.js'
import { profile, type ProfileSummary } from './profile.js'
import { benchThroughput, profileWriter, type ThroughputResult } from './throughput.js'
import { benchWorkers, workersTable, type WorkersResult } from './workers.js'
import { benchPartitioned, partitionedTable, type PartitionedResult } from './partitioned.js'

export interface BenchSizes {
  mode: 'full' | 'quick' | 'smoke'
  narrowRecords: number
  wideRecords: number
  runs: number
  memory: { budgets: number[]; tables: number; slots: number; runs: number }
  commit: { snapshots: number[]; batches: number[]; runs: number }
  profileRecords: number
  /** Compaction memory (maintenance.ts): input ≥ 10× the bound. */
  compactMemory: CompactMemoryOptions
  /** Commit counts of the table-history row (`--history 10,1000,10000` for the long one). */
  history: number[]
  /** Where to keep the raw .cpuprofile (undefined: not kept). */
  profileFile?: string
}

export const SIZES: Record<'full' | 'quick' | 'smoke', BenchSizes> = {
  full: {
    mode: 'full',
    narrowRecords: 1_000_000,
    wideRecords: 100_000,
    runs: 3,
    memory: { budgets: [16, 64, 256], tables: 50, slots: 24, runs: 3 },
    commit: { snapshots: [10, 1000, 10_000], batches: [1, 100, 1000], runs: 3 },
    profileRecords: 200_000,
    compactMemory: { boundMB: 96, targetMB: 256, chunkMB: 2, fileMB: 48, inputMB: 960 },
    history: [10, 1000],
  },
  quick: {
    mode: 'quick',
    narrowRecords: 100_000,
    wideRecords: 10_000,
    runs: 3,
    memory: { budgets: [16, 64, 256], tables: 10, slots: 24, runs: 1 },
    commit: { snapshots: [10, 1000], batches: [1, 100], runs: 3 },
    profileRecords: 50_000,
    compactMemory: { boundMB: 32, targetMB: 64, chunkMB: 1, fileMB: 16, inputMB: 352 },
    history: [10, 1000],
  },
  smoke: {
    mode: 'smoke',
    narrowRecords: 2_000,
    wideRecords: 200,
    runs: 1,
    memory: { budgets: [16], tables: 2, slots: 3, runs: 1 },
    commit: { snapshots: [3], batches: [2], runs: 1 },
    profileRecords: 1_000,
    compactMemory: { boundMB: 32, targetMB: 16, chunkMB: 1, fileMB: 4, inputMB: 40 },
    history: [10],
  },
}

export interface BenchResults {
  mode: string
  machine: Machine
  loadAverageAtEnd: number[]
  sizes: BenchSizes
  throughput: ThroughputResult[]
  /** FLOE_WRITER_WORKERS 0 and 2 over the same events (workers.ts). */
  workers?: WorkersResult[]
  /** The narrow events into partitioned tables (PARTITION_SPECS), scanner lane on and off (partitioned.ts). */
  partitioned?: PartitionedResult[]
  memory: MemoryResult[]
  commit: CommitResult[]
  cost: CostModel
  prices: typeof PRICES
  profile: ProfileSummary & { records: number; wallMs: number; cpuMs: number }
  compactMemory: CompactMemoryResult
  history: HistoryRow[]
  elapsedSeconds: number
}

export async function runBench(
  sizes: BenchSizes,
  log: (s: string) => void = () => undefined,
  /** Called after each section with what is done so far (run.ts saves it: a long run that dies keeps its sections). */
  partial: (done: Partial<BenchResults>) => void = () => undefined,
): Promise<BenchResults> {
  const started = performance.now()
  const m = machine()
  log(`machine: ${m.cpuModel}, ${m.cores} cores, ${m.memoryGiB} GiB, node ${m.node}, load ${m.loadAverage.join(' ')}`)
  // The handlers' structured logs would drown the output: withBenchTables quiets them.
  return withBenchTables('bench', async (clients, tables) => {

    log(`throughput: ${sizes.narrowRecords} narrow records, ${sizes.wideRecords} wide (200-column) records, ${sizes.runs} runs each`)
    const throughput: ThroughputResult[] = []
    const workers: WorkersResult[] = []
    let partitioned: PartitionedResult[] | undefined
    for (const [name, count, make] of [
      ['narrow', sizes.narrowRecords, narrowRecord],
      ['wide', sizes.wideRecords, (i: number) => wideRecord(i)],
    ] as const) {
      const ds = makeDataset(name, count, make, { partitions: 4 })
      throughput.push(await benchThroughput(clients, tables, ds, sizes.runs, log))
      workers.push(await benchWorkers(clients, tables, ds, sizes.runs, [0, 2], log))
      if (name === 'narrow') partitioned = await benchSpecs(clients, tables, ds, sizes.runs, log)
      partial({ mode: sizes.mode, machine: m, sizes, throughput, workers, partitioned })
    }

    log(`memory: budgets ${sizes.memory.budgets.join(', ')} MB, ${sizes.memory.tables} tables × ${sizes.memory.slots} partition values`)
    const memory = await benchMemory(clients, tables, sizes.memory, log)
    partial({ mode: sizes.mode, machine: m, sizes, throughput, memory })

    log(`commit: ${sizes.commit.batches.join(', ')} batches × ${sizes.commit.snapshots.join(', ')} snapshots`)
    const commit = await benchCommit(clients, tables, sizes.commit, log)
    partial({ mode: sizes.mode, machine: m, sizes, throughput, memory, commit, cost: costModel(throughput[0]!, commit) })

    log(`profile: ${sizes.profileRecords} narrow records through the writer`)
    const pds = makeDataset('profile', sizes.profileRecords, narrowRecord, { partitions: 4 })
    const prof = await profileWriter(clients, tables, pds, (f) => profile(f, sizes.profileFile))

    const cost = costModel(throughput[0]!, commit)
    partial({ mode: sizes.mode, machine: m, sizes, throughput, memory, commit, cost })
    const maintenance = await runMaintenanceBench(sizes, log)
    return {
      mode: sizes.mode,
      machine: m,
      loadAverageAtEnd: loadavg().map((l) => round(l, 2)),
      sizes,
      throughput,
      workers,
      partitioned,
      memory,
      commit,
      cost,
      prices: PRICES,
      profile: { ...(prof.profile as ProfileSummary), records: sizes.profileRecords, wallMs: prof.wallMs, cpuMs: prof.cpuMs },
      ...maintenance,
      elapsedSeconds: round((performance.now() - started) / 1000, 1),
    }
  })
}

/** The maintenance rows alone (file:// only, no endpoints): `npm run bench -- --only maintenance`. */
export async function runMaintenanceBench(sizes: BenchSizes, log: (s: string) => void = () => undefined): Promise<{ compactMemory: CompactMemoryResult; history: HistoryRow[] }> {
  const c = sizes.compactMemory
  log(`compaction memory: ${c.inputMB} MB of input, FLOE_COMPACT_MEMORY_MB=${c.boundMB}`)
  const compactMemory = await benchCompactMemory(c, log)
  log(`table history: ${sizes.history.join(', ')} commits through real appends`)
  const history = await benchHistory(sizes.history)
  return { compactMemory, history }
}

/** Markdown of the throughput rows. */
export function formatThroughput(throughput: ThroughputResult[]): string {
  const out: string[] = []
  out.push('', '#### Writer throughput (median of runs; per core: Floe is one JS thread, DuckDB `SET threads=1`)', '')
  const t: (string | number)[][] = [['input', 'records', 'JSON MB', 'engine', 'wall s', 'CPU s', 'records/s', 'JSON MB/s', 'records/CPU-s', 'Floe/DuckDB (wall)', 'Floe/DuckDB (CPU)']]
  for (const x of throughput) {
    const cpuRatio = round(x.duckdb.cpuMs / x.floe.cpuMs, 3)
    t.push([x.dataset, x.records, x.jsonMB, 'Floe writeBatch (file:// + DynamoDB Local)', round(x.floe.wallMs / 1000, 2), round(x.floe.cpuMs / 1000, 2), x.floe.recordsPerSec, x.floe.jsonMBPerSec, x.floe.recordsPerCpuSec, x.ratio.floeToDuckdb, cpuRatio])
    t.push([x.dataset, x.records, x.jsonMB, 'Floe encode only (no I/O)', round(x.encodeOnly.wallMs / 1000, 2), '', x.encodeOnly.recordsPerSec, x.encodeOnly.jsonMBPerSec, '', x.ratio.encodeOnlyToDuckdb, ''])
    t.push([x.dataset, x.records, x.jsonMB, 'DuckDB NDJSON → Parquet ZSTD', round(x.duckdb.wallMs / 1000, 2), round(x.duckdb.cpuMs / 1000, 2), x.duckdb.recordsPerSec, x.duckdb.jsonMBPerSec, x.duckdb.recordsPerCpuSec, 1, 1])
  }
  out.push(pad(t))
  out.push('', 'Encode-only stages (ms, median): ' + throughput.map((x) => `${x.dataset}: ${Object.entries(x.encodeOnly.stagesMs).map(([k, v]) => `${k} ${v}`).join(', ')}`).join('; '))
  out.push('Parquet bytes: ' + throughput.map((x) => `${x.dataset}: Floe ${x.floe.parquetBytes} in ${x.floe.files} files (${x.events} events), DuckDB ${x.duckdb.parquetBytes}`).join('; '))
  return out.join('\n')
}

/**
 * The partition specs the narrow events are written into: `day(ts)`, where each event's records
 * fall in one day (the scanner lane writes them as one file of it, found from the least and
 * greatest `ts`), and `city, day(ts)`, where each event holds all 8 cities, interleaved (each
 * row's tuple, and each city's rows gathered from the columns into its own file).
 */
export const PARTITION_SPECS = [['day(ts)'], ['city', 'day(ts)']]

function benchSpecs(clients: AwsClients, tables: { control: string; catalog: string }, ds: Dataset, runs: number, log: (s: string) => void): Promise<PartitionedResult[]> {
  return PARTITION_SPECS.reduce(async (done, spec) => [...(await done), await benchPartitioned(clients, tables, ds, runs, log, spec)], Promise.resolve([] as PartitionedResult[]))
}

/** Markdown of the partitioned rows. */
export function formatPartitioned(r: PartitionedResult[]): string {
  const rows = r.map(partitionedTable)
  return ['#### A partitioned table (writeBatch as above; lane on: a file per event and partition value, as off)', '', pad([rows[0]![0]!, ...rows.flatMap((t) => t.slice(1))])].join('\n')
}

/** The partitioned rows alone (`npm run bench -- --only partitioned`): the narrow input into each of PARTITION_SPECS, lane on and off. */
export async function runPartitionedBench(sizes: BenchSizes, log: (s: string) => void = () => undefined): Promise<PartitionedResult[]> {
  return withBenchTables('bench', (clients, tables) => benchSpecs(clients, tables, makeDataset('narrow', sizes.narrowRecords, narrowRecord, { partitions: 4 }), sizes.runs, log))
}

/** The throughput rows alone (`npm run bench -- --only throughput`): endpoints up, the narrow and wide inputs, nothing else. */
export async function runThroughputBench(sizes: BenchSizes, log: (s: string) => void = () => undefined): Promise<ThroughputResult[]> {
  const m = machine()
  log(`machine: ${m.cpuModel}, ${m.cores} cores, ${m.memoryGiB} GiB, node ${m.node}, load ${m.loadAverage.join(' ')}`)
  return withBenchTables('bench', async (clients, tables) => {
    const throughput: ThroughputResult[] = []
    for (const [name, count, make] of [
      ['narrow', sizes.narrowRecords, narrowRecord],
      ['wide', sizes.wideRecords, (i: number) => wideRecord(i)],
    ] as const) {
      log(`throughput: ${count} ${name} records, ${sizes.runs} runs`)
      throughput.push(await benchThroughput(clients, tables, makeDataset(name, count, make, { partitions: 4 }), sizes.runs, log))
    }
    return throughput
  })
}

/** Markdown of the maintenance rows. */
export function formatMaintenance(r: { compactMemory?: CompactMemoryResult; history?: HistoryRow[] }): string {
  const out: string[] = []
  const c = r.compactMemory
  if (c) {
    out.push('#### Compaction memory (child process; ledger = compaction\'s own accounting, FLOE_COMPACT_MEMORY_MB)', '')
    const t: (string | number)[][] = [['bound MB', 'input MB', 'input / bound', 'files in → out', 'largest in / out MB', 'target / chunk MB', 'ledger peak MB', 'RSS baseline MB', 'peak RSS MB', 'RSS growth MB', 's']]
    t.push([c.boundMB, c.inputMB, c.inputToBound, `${c.inputFiles} → ${c.groups}`, `${c.largestInputMB} / ${c.largestOutputMB}`, `${c.targetMB} / ${c.chunkMB}`, c.ledgerPeakMB, c.rssBaselineMB, c.peakRssMB, c.rssGrowthMB, c.seconds])
    out.push(pad(t), '', `Ledger peak by kind (MB): ${Object.entries(c.ledgerPeakByKindMB as Record<string, number>).map(([k, v]) => `${k} ${v}`).join(', ')}`)
  }
  if (r.history) {
    out.push('', '#### Table history through real appends (metadata.json, writer table load parsed / cached by location; before and after expiry)', '')
    const t: (string | number)[][] = [['commits', 'metadata KB', 'load parsed ms', 'load cached ms', 'snapshots after expiry', 'metadata after KB', 'load parsed after ms', 'load cached after ms']]
    for (const h of r.history) t.push([h.commits, round(h.metadataBytesBefore / 1024, 1), h.loadParsedMs, h.loadCachedMs, h.snapshotsAfter, round(h.metadataBytesAfter / 1024, 1), h.loadParsedAfterMs, h.loadCachedAfterMs])
    out.push(pad(t))
  }
  return out.join('\n')
}

const pad = (rows: (string | number)[][]): string => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)))
  const line = (r: (string | number)[]) => `| ${r.map((c, i) => (typeof c === 'number' ? String(c).padStart(widths[i]!) : String(c).padEnd(widths[i]!))).join(' | ')} |`
  return [line(rows[0]!), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)].join('\n')
}

/** Markdown tables of a result (what run.ts prints and docs/benchmarks.md shows). */
export function formatResults(r: BenchResults): string {
  const out: string[] = []
  const mm = r.machine
  out.push(`Machine: ${mm.cpuModel}, ${mm.cores} cores, ${mm.memoryGiB} GiB, Node ${mm.node}, ${mm.platform}; ${mm.date}; load average ${mm.loadAverage.join(' / ')} at start, ${r.loadAverageAtEnd.join(' / ')} at end. Mode: ${r.mode}; ${r.elapsedSeconds} s.`)
  out.push(formatThroughput(r.throughput))
  if (r.workers?.length) {
    out.push('', '#### Two workers (FLOE_WRITER_WORKERS; writeBatch as above; CPU of every thread of the process; one event = one ≤ 6 MB invocation, DuckDB over that event\'s records)', '')
    out.push(pad(workersTable(r.workers)))
  }
  if (r.partitioned) out.push('', formatPartitioned(r.partitioned))
  out.push('', '#### Writer memory (one 6 MB event, 200 columns; child process per run)', '')
  const mt: (string | number)[][] = [['budget MB', 'records', 'tables', 'files', 'flushes budget/end', 'peakBufferedBytes MB', 'RSS before MB', 'peak RSS MB', 'after: JS heap / external MB', 'ms']]
  for (const x of r.memory) mt.push([x.budgetMB, x.records, x.tables, x.files, `${x.flushes.budget ?? 0}/${x.flushes.end ?? 0}`, round(x.peakBufferedBytes / 2 ** 20, 1), x.rssBeforeMB, x.peakRssMB, x.after ? `${x.after.heapUsedMB} / ${x.after.externalMB}` : '', x.ms])
  out.push(pad(mt))
  out.push('', '#### Commit cost (one committer run; median wall time; requests of the median run)', '')
  const ct: (string | number)[][] = [['snapshots', 'batches', 'ms', 'S3 requests', 'DynamoDB requests', 'DynamoDB WRU (est.)', 'DynamoDB RRU', 'metadata KB', 'S3 detail', 'DynamoDB detail']]
  for (const x of r.commit) ct.push([x.snapshots, x.batches, x.ms, x.s3Requests, x.ddbRequests, x.wcu, x.rcu, round(x.metadataBytes / 1024), Object.entries(x.s3).map(([k, v]) => `${k} ${v}`).join(', '), Object.entries(x.ddb).map(([k, v]) => `${k} ${v}`).join(', ')])
  out.push(pad(ct))
  out.push('', `#### Cost per GB of JSON (${PRICES.region}, prices as of ${PRICES.asOf})`, '')
  const kt: (string | number)[][] = [['item', 'USD per GB']]
  for (const [k, v] of Object.entries(r.cost.perGb)) kt.push([k, v])
  kt.push(['**Floe total**', r.cost.totalPerGb], ['Amazon Data Firehose → Iceberg', r.cost.firehosePerGb], ['Floe / Firehose', r.cost.floeToFirehose])
  out.push(pad(kt))
  out.push('', 'Assumptions: ' + Object.entries(r.cost.assumptions).map(([k, v]) => `${k}=${v}`).join(', '))
  out.push('', `#### Writer profile (${r.profile.records} records, ${r.profile.totalMs} ms sampled): self time by module`, '')
  const pt: (string | number)[][] = [['module', 'self ms', '%']]
  for (const x of r.profile.byModule.slice(0, 12)) pt.push([x.module, x.selfMs, x.share])
  out.push(pad(pt), '')
  const ft: (string | number)[][] = [['function', 'module', 'self ms', '%']]
  for (const x of r.profile.byFunction.slice(0, 15)) ft.push([x.fn, x.module, x.selfMs, x.share])
  out.push(pad(ft))
  out.push('', formatMaintenance(r))
  return out.join('\n')
}

/**
 * The commit rows alone: `npm run bench -- --only commit --batches 1000,5000,10000` (one table with
 * 10 snapshots of history, FLOE_COMMIT_MAX_BATCHES raised to the largest B so each is one snapshot).
 */
export async function runCommitBench(batches: number[], log: (s: string) => void = () => undefined): Promise<CommitResult[]> {
  return withBenchTables('bench', async (clients, tables) => {
    const env = { FLOE_COMMIT_MAX_BATCHES: String(Math.max(1000, ...batches)) }
    return benchCommit(clients, tables, { snapshots: [10], batches, runs: 1, env }, log)
  })
}
