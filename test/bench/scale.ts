/**
 * The scale load test behind `npm run bench -- --scale` (docs/scale.md): many concurrent writer
 * invocations in worker processes (scale-child.ts) plus committer runs in this process, on the
 * local endpoints, with every request counted per DynamoDB partition key and S3 prefix by SDK
 * middleware (test/helpers/request-counter.ts). From the counts per registration it models the
 * per-key rates at N partitions of 1 MB/s into one table and compares them with the published
 * per-key limits.
 */
import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { createCommitterDeps } from '../../lib/commit/index.js'
import { createWriterDeps } from '../../lib/writer/index.js'
import { parseTableId } from '../../lib/catalog/index.js'
import { runCommitter } from '../../lib/commit/committer.js'
import { loadConfig } from '../../lib/config.js'
import { listPendingTables } from '../../lib/control/pending.js'
import { countPendingExactly } from '../../lib/control/backlog.js'
import { BATCHES_PER_TRANSACTION, FENCE_COPIES } from '../../lib/control/lease.js'
import { currentSnapshot } from '../../lib/iceberg/metadata.js'
import { buildEvent } from '../../lib/local/kafka-log.js'
import { ensureBucket, ensureCatalogTable, ensureControlTable } from '../../lib/local/init.js'
import { writeBatch } from '../../lib/writer/pipeline.js'
import { countedClients, mergeCounter, RequestCounter, type CounterDump } from '../helpers/request-counter.js'
import { narrowRecord } from './data.js'

/** Published per-key limits (docs/scale.md cites the pages). */
export const LIMITS = { partitionWcu: 1_000, partitionRcu: 3_000, prefixPut: 3_500, prefixGet: 5_500 }

export interface ScaleOptions {
  label: string
  workers: number
  partitionsPerWorker: number
  rounds: number
  records: number
  /** FLOE_* overrides: the layout under test. */
  settings: Record<string, string>
}

/** The key classes the model scales: how many keys each has at N partitions. */
export type KeyClass = 'batch' | 'index' | 'checkpoint' | 'backlog' | 'lease' | 'catalog'

export interface ClassFigures {
  keys: number
  /** Per registration, summed over the class's keys. */
  wcu: number
  rcu: number
  requests: number
  /** The hottest key's share of the class's units. */
  hottestShare: number
  hottestKey: string
}

export interface ScaleRun {
  label: string
  settings: Record<string, string>
  /** FLOE_PENDING_SHARDS of the run. */
  shards: number
  registrations: number
  failures: number
  errors: string[]
  recordsWritten: number
  recordsCommitted: number
  /** Pending batches left after the final commits (should be 0). */
  leftPending: number
  wallMs: number
  writerCpuMsPerRegistration: number
  committer: { runs: number; snapshots: number; batches: number; msPerBatch: number; cpuMsPerRun: number }
  itemBytesPerRegistration: number
  metadataBytes: number
  classes: Record<KeyClass, ClassFigures>
  /**
   * The lease key's work is the committer's, per round, not per registration: each round takes
   * the lease (one transaction: the lease item and its FENCE_COPIES fence copies) and releases
   * it; each fenced mark transaction checks the lease item or a fence copy.
   */
  lease: LeaseFigures
  s3: { prefixes: number; putsPerRegistration: number; hottestPrefix: string; hottestPutShare: number; getsPerRegistration: number }
  /** Highest per-second rate any single key saw during the run (not scaled). */
  peakPerSecond: { key: string; wcu: number; rcu: number }
  consumed: { wcu: number; rcu: number }
}

export interface LeaseFigures {
  /** Lease acquisitions (committer rounds) counted in the run. */
  rounds: number
  /** Fenced mark transactions (each one ConditionCheck on the lease key). */
  markTransactions: number
  /** Lease-key units per round besides the marks' checks (acquisition, release, renewals, reads). */
  wcuPerRound: number
  rcuPerRound: number
  /** Lease-key units per mark transaction (its ConditionCheck). */
  wcuPerMark: number
  rcuPerMark: number
  /** FLOE_COMMIT_MAX_BATCHES of the run: the most batches one round takes. */
  maxBatchesPerRound: number
}

/** Counts lease acquisitions and fenced mark transactions on a committer's DynamoDB client. */
function countLeaseWork(ddb: ReturnType<typeof countedClients>['ddb']): { rounds: number; markTransactions: number } {
  const seen = { rounds: 0, markTransactions: 0 }
  ddb.middlewareStack.add(
    (next) => async (args) => {
      const items = (args.input as { TransactItems?: Record<string, { Key?: Record<string, unknown> }>[] }).TransactItems
      if (items) {
        // The document client marshals at this step too: the key is plain or in AttributeValue form.
        const pk = (k?: Record<string, unknown>) => (typeof k?.pk === 'string' ? k.pk : (k?.pk as { S?: string } | undefined)?.S)
        const onLease = (k?: Record<string, unknown>) => pk(k)?.startsWith('lease#') === true
        if (items.length === 1 + FENCE_COPIES && onLease(items[0]!.Update?.Key)) seen.rounds++
        else if (items.some((t) => onLease(t.ConditionCheck?.Key))) seen.markTransactions++
      }
      return next(args)
    },
    { step: 'initialize', name: 'floeLeaseWorkCounter' },
  )
  return seen
}

const child = fileURLToPath(new URL('./scale-child.ts', import.meta.url))
const exec = promisify(execFile)

export async function benchScale(clients: ReturnType<typeof countedClients>, opts: ScaleOptions, log: (s: string) => void = () => undefined): Promise<ScaleRun> {
  const stamp = randomUUID().slice(0, 8)
  const bucket = `scale-${stamp}`
  await ensureBucket(clients.s3, bucket)
  const control = `scale-control-${stamp}`
  const catalog = `scale-catalog-${stamp}`
  await ensureControlTable(clients.ddb, control)
  await ensureCatalogTable(clients.ddb, catalog)
  const env: Record<string, string> = {
    FLOE_PIPELINE: `scale-${stamp}`,
    FLOE_WAREHOUSE: `s3://${bucket}/warehouse`,
    FLOE_CONTROL_TABLE: control,
    FLOE_CATALOG_TABLE: catalog,
    FLOE_ROUTES: JSON.stringify({ defaultNamespace: 'bench', routes: [{ topic: 'events', table: 'events' }] }),
    FLOE_MAX_PENDING_BATCHES: '100000',
    ...opts.settings,
  }
  const config = loadConfig({}, env)
  const partitions = opts.workers * opts.partitionsPerWorker
  // Create the table first (one record on a partition of its own), as in a running pipeline.
  const warm = buildEvent([{ topic: 'events', partition: partitions, offset: 0n, timestamp: 1_714_557_600_000, key: null, value: new TextEncoder().encode(JSON.stringify(narrowRecord(0))) }])
  await writeBatch(await createWriterDeps(config, clients), warm as never)

  const epoch = Date.now()
  const counter = new RequestCounter(epoch)
  const counted = countedClients(counter, { s3: process.env.AWS_ENDPOINT_URL_S3!, dynamodb: process.env.AWS_ENDPOINT_URL_DYNAMODB! })
  const leaseWork = countLeaseWork(counted.ddb)
  const commitDeps = await createCommitterDeps(config, counted)
  const t0 = performance.now()
  const children = Array.from({ length: opts.workers }, (_, w) =>
    exec(process.execPath, ['--import', 'tsx', child], {
      env: {
        ...process.env,
        BENCH_PARTITIONS: Array.from({ length: opts.partitionsPerWorker }, (_x, i) => String(w * opts.partitionsPerWorker + i)).join(','),
        BENCH_ROUNDS: String(opts.rounds),
        BENCH_RECORDS: String(opts.records),
        BENCH_EPOCH: String(epoch),
        BENCH_ENV: JSON.stringify(env),
        POWERTOOLS_LOG_LEVEL: 'ERROR',
      },
      maxBuffer: 256 * 1024 * 1024,
    }),
  )
  const state = { done: false }
  const all = Promise.all(children).finally(() => (state.done = true))
  const committer = { runs: 0, snapshots: 0, batches: 0, ms: 0, cpuMs: 0 }
  const commitOnce = async () => {
    const cpu = process.cpuUsage()
    const started = performance.now()
    const run = await runCommitter(commitDeps)
    const used = process.cpuUsage(cpu)
    committer.runs++
    committer.cpuMs += (used.user + used.system) / 1000
    committer.batches += run.batches
    committer.snapshots += run.results.reduce((n, r) => n + (r.status === 'committed' ? (r.snapshots ?? 1) : 0), 0)
    if (run.batches > 0) committer.ms += performance.now() - started
    if (run.failures > 0) log(`committer: ${run.results.find((r) => r.error)?.error?.message}`)
  }
  while (!state.done) {
    await commitOnce()
    await new Promise((r) => setTimeout(r, 500))
  }
  const outputs = (await all).map((o) => JSON.parse(o.stdout.trim().split('\n').at(-1)!) as { dump: CounterDump; invocations: number; failures: number; errors: string[]; cpuMs: number; wallMs: number })
  for (let i = 0; i < 20 && (await listPendingTables(commitDeps.control, config.pipeline)).length > 0; i++) await commitOnce()
  const wallMs = performance.now() - t0
  for (const o of outputs) mergeCounter(counter, o.dump)
  counter.settle()

  const registrations = outputs.reduce((n, o) => n + o.invocations, 0)
  const loaded = await commitDeps.catalog.loadTable(parseTableId('bench.events'))
  const total = Number(currentSnapshot(loaded.metadata)?.summary?.['total-records'] ?? 0) - 1
  const metadataBytes = (await commitDeps.io.stat(loaded.metadataLocation))?.size ?? 0
  const leftPending = await countPendingExactly(commitDeps.control, config.pipeline, 'bench.events')
  log(`${opts.label}: ${registrations} registrations, ${committer.snapshots} snapshots, ${Math.round(wallMs)} ms`)
  return {
    label: opts.label,
    settings: opts.settings,
    shards: config.pendingShards,
    registrations,
    failures: outputs.reduce((n, o) => n + o.failures, 0),
    errors: [...new Set(outputs.flatMap((o) => o.errors))].slice(0, 5),
    recordsWritten: registrations * opts.records,
    recordsCommitted: total,
    leftPending,
    wallMs,
    writerCpuMsPerRegistration: outputs.reduce((n, o) => n + o.cpuMs, 0) / Math.max(1, registrations),
    committer: {
      runs: committer.runs,
      snapshots: committer.snapshots,
      batches: committer.batches,
      msPerBatch: committer.ms / Math.max(1, committer.batches),
      cpuMsPerRun: committer.cpuMs / Math.max(1, committer.runs),
    },
    itemBytesPerRegistration: counter.itemBytesWritten / Math.max(1, registrations),
    metadataBytes,
    classes: classify(counter, registrations),
    lease: leaseFigures(counter, leaseWork, config.commitMaxBatches),
    s3: s3Figures(counter, registrations),
    peakPerSecond: peak(counter),
    consumed: counter.consumed,
  }
}

export function keyClass(key: string): KeyClass | undefined {
  if (key.startsWith('batch#') || key.startsWith('bshard#')) return 'batch'
  if (key.startsWith('pending:')) return 'index'
  if (key.startsWith('ckpt#')) return 'checkpoint'
  if (key.startsWith('backlog#')) return 'backlog'
  if (key.startsWith('lease#')) return 'lease'
  if (key.startsWith('bench.') || key === 'NAMESPACE') return 'catalog'
  return undefined
}

function classify(counter: RequestCounter, registrations: number): Record<KeyClass, ClassFigures> {
  const out = {} as Record<KeyClass, ClassFigures>
  for (const c of ['batch', 'index', 'checkpoint', 'backlog', 'lease', 'catalog'] as KeyClass[]) {
    const keys = [...counter.ddbKeys].filter(([k]) => keyClass(k) === c)
    const units = (s: { wcu: number; rcu: number }) => s.wcu + s.rcu
    const total = keys.reduce((n, [, s]) => n + units(s), 0)
    const hottest = keys.sort((a, b) => units(b[1]) - units(a[1]))[0]
    out[c] = {
      keys: keys.length,
      wcu: keys.reduce((n, [, s]) => n + s.wcu, 0) / Math.max(1, registrations),
      rcu: keys.reduce((n, [, s]) => n + s.rcu, 0) / Math.max(1, registrations),
      requests: keys.reduce((n, [, s]) => n + s.requests, 0) / Math.max(1, registrations),
      hottestShare: hottest && total > 0 ? units(hottest[1]) / total : 0,
      hottestKey: hottest?.[0] ?? '',
    }
  }
  return out
}

/**
 * The lease key's units split into per round and per mark transaction: the counter charges a
 * transaction's ConditionCheck 2 read units (request-counter.ts) and the rest of the key's units
 * are the rounds' (acquisition, release, renewal, the read after a lost race).
 */
function leaseFigures(counter: RequestCounter, work: { rounds: number; markTransactions: number }, maxBatchesPerRound: number): LeaseFigures {
  const keys = [...counter.ddbKeys].filter(([k]) => keyClass(k) === 'lease')
  const wcu = keys.reduce((n, [, s]) => n + s.wcu, 0)
  const rcu = keys.reduce((n, [, s]) => n + s.rcu, 0)
  const rcuPerMark = 2
  const rounds = Math.max(1, work.rounds)
  return {
    rounds: work.rounds,
    markTransactions: work.markTransactions,
    wcuPerRound: wcu / rounds,
    rcuPerRound: Math.max(0, rcu - rcuPerMark * work.markTransactions) / rounds,
    wcuPerMark: 0,
    rcuPerMark,
    maxBatchesPerRound,
  }
}

function s3Figures(counter: RequestCounter, registrations: number): ScaleRun['s3'] {
  const prefixes = [...counter.s3Prefixes].filter(([k]) => k.includes('/data/') || k.endsWith('/data/'))
  const puts = prefixes.reduce((n, [, s]) => n + s.put, 0)
  const hottest = prefixes.sort((a, b) => b[1].put - a[1].put)[0]
  const gets = [...counter.s3Prefixes].reduce((n, [, s]) => n + s.get, 0)
  return {
    prefixes: prefixes.length,
    putsPerRegistration: puts / Math.max(1, registrations),
    hottestPrefix: hottest?.[0] ?? '',
    hottestPutShare: hottest && puts > 0 ? hottest[1].put / puts : 0,
    getsPerRegistration: gets / Math.max(1, registrations),
  }
}

function peak(counter: RequestCounter): ScaleRun['peakPerSecond'] {
  let best = { key: '', wcu: 0, rcu: 0 }
  for (const [key, s] of counter.ddbKeys) for (const [, b] of s.perSecond) if (b.wcu + b.rcu > best.wcu + best.rcu) best = { key, wcu: b.wcu, rcu: b.rcu }
  return best
}

export interface ModelRow {
  partitions: number
  registrationsPerSecond: number
  /** Modelled units per second on the hottest key of each class. */
  perKey: Record<KeyClass, { wcu: number; rcu: number }>
  hottestDataPrefixPut: number
  over: string[]
}

/**
 * Per-key rates at `partitions` partitions of 1 MB/s into one table, `mbPerInvocation` MB per
 * writer invocation (the mapping's batching: 1 MB = one invocation per partition per second, the
 * worst case for per-key rates). Shard classes keep the measured hottest share; checkpoints have
 * one key per partition; backlog and catalog are one key per table; the lease key's rate comes
 * from the commit schedule (leaseRate), not from the registrations.
 */
export function model(run: ScaleRun, partitions: number, mbPerInvocation = 1): ModelRow {
  if (partitions < 1) throw new Error(`model: ${partitions} partitions`)
  const r = partitions / mbPerInvocation
  const perKey = {} as ModelRow['perKey']
  for (const [c, f] of Object.entries(run.classes) as [KeyClass, ClassFigures][]) {
    // Checkpoints: one key per partition, one registration per partition per invocation. Shard
    // keys: batch ids hash evenly, so a shard's batches in one second are Binomial(r, 1/N); the
    // busiest second is modelled as the mean plus three standard deviations.
    const shards = c === 'batch' || c === 'index' ? run.shards : 0
    const perShard = shards > 1 ? (r / shards + 3 * Math.sqrt((r / shards) * (1 - 1 / shards))) / r : 0
    const share = c === 'checkpoint' ? 1 / partitions : shards > 1 ? perShard : f.hottestShare || 1
    perKey[c] = { wcu: r * f.wcu * share, rcu: r * f.rcu * share }
  }
  perKey.lease = leaseRate(run.lease, r)
  const hottestDataPrefixPut = r * run.s3.putsPerRegistration * Math.max(run.s3.hottestPutShare, 1 / 2 ** 20)
  const over: string[] = []
  for (const [c, u] of Object.entries(perKey)) {
    if (u.wcu > LIMITS.partitionWcu) over.push(`${c} key ${Math.round(u.wcu)} WCU/s`)
    if (u.rcu > LIMITS.partitionRcu) over.push(`${c} key ${Math.round(u.rcu)} RCU/s`)
  }
  if (hottestDataPrefixPut > LIMITS.prefixPut) over.push(`data prefix ${Math.round(hottestDataPrefixPut)} PUT/s`)
  return { partitions, registrationsPerSecond: r, perKey, hottestDataPrefixPut, over }
}

/** A minute of the committer's schedule (rate(1 minute), infra/config.ts `commitSchedule`). */
const SCHEDULE_SECONDS = 60

/**
 * The lease key's units per second for one table receiving `batchesPerSecond` batches (one per
 * registration), from the commit schedule: the committer runs once a minute and takes the
 * table's backlog in rounds of at most FLOE_COMMIT_MAX_BATCHES batches, each round one lease
 * acquisition and release, its batches marked BATCHES_PER_TRANSACTION per fenced transaction.
 */
export function leaseRate(lease: LeaseFigures, batchesPerSecond: number): { wcu: number; rcu: number } {
  const perMinute = batchesPerSecond * SCHEDULE_SECONDS
  const rounds = Math.max(1, Math.ceil(perMinute / lease.maxBatchesPerRound))
  const marks = rounds * Math.ceil(perMinute / rounds / BATCHES_PER_TRANSACTION)
  return {
    wcu: (rounds * lease.wcuPerRound + marks * lease.wcuPerMark) / SCHEDULE_SECONDS,
    rcu: (rounds * lease.rcuPerRound + marks * lease.rcuPerMark) / SCHEDULE_SECONDS,
  }
}

export function formatScale(runs: ScaleRun[], partitions = [10, 100, 1_000, 10_000]): string {
  const lines: string[] = []
  for (const run of runs) {
    lines.push(`## ${run.label} (${Object.entries(run.settings).map(([k, v]) => `${k}=${v}`).join(' ') || 'defaults'})`)
    lines.push(
      `${run.registrations} registrations (${run.failures} failed), ${run.recordsCommitted}/${run.recordsWritten} records committed, ${run.committer.snapshots} snapshots in ${run.committer.runs} committer runs, ${Math.round(run.wallMs)} ms`,
    )
    lines.push(
      `writer CPU ${run.writerCpuMsPerRegistration.toFixed(1)} ms/registration; committer ${run.committer.msPerBatch.toFixed(1)} ms/batch, CPU ${run.committer.cpuMsPerRun.toFixed(0)} ms/run; ${Math.round(run.itemBytesPerRegistration)} item bytes/registration; metadata.json ${run.metadataBytes} bytes`,
    )
    lines.push('| key class | keys | WCU/reg | RCU/reg | req/reg | hottest share | hottest key |')
    lines.push('|---|---|---|---|---|---|---|')
    for (const [c, f] of Object.entries(run.classes)) {
      lines.push(`| ${c} | ${f.keys} | ${f.wcu.toFixed(2)} | ${f.rcu.toFixed(2)} | ${f.requests.toFixed(2)} | ${f.hottestShare.toFixed(3)} | ${f.hottestKey.slice(0, 60)} |`)
    }
    const l = run.lease
    lines.push(`lease: ${l.rounds} rounds, ${l.markTransactions} mark transactions; ${l.wcuPerRound.toFixed(1)} WCU + ${l.rcuPerRound.toFixed(1)} RCU per round, ${l.rcuPerMark} RCU per mark transaction; ≤ ${l.maxBatchesPerRound} batches per round`)
    lines.push(`S3: ${run.s3.putsPerRegistration.toFixed(2)} data PUT/registration over ${run.s3.prefixes} prefixes, hottest share ${run.s3.hottestPutShare.toFixed(3)}; ${run.s3.getsPerRegistration.toFixed(2)} GET+HEAD/registration`)
    lines.push(`peak second on one key: ${run.peakPerSecond.key} ${run.peakPerSecond.wcu} WCU, ${run.peakPerSecond.rcu} RCU`)
    lines.push('')
    lines.push('| partitions (1 MB/s each) | registrations/s | batch key WCU/s | batch key RCU/s | index key WCU/s | checkpoint key WCU/s | lease key WCU/s / RCU/s | backlog key RCU/s | catalog key RCU/s | hottest data prefix PUT/s | over a per-key limit |')
    lines.push('|---|---|---|---|---|---|---|---|---|---|---|')
    for (const p of partitions) {
      const m = model(run, p)
      lines.push(
        `| ${p} | ${m.registrationsPerSecond} | ${Math.round(m.perKey.batch.wcu)} | ${Math.round(m.perKey.batch.rcu)} | ${Math.round(m.perKey.index.wcu)} | ${m.perKey.checkpoint.wcu.toFixed(1)} | ${m.perKey.lease.wcu.toFixed(1)} / ${m.perKey.lease.rcu.toFixed(1)} | ${Math.round(m.perKey.backlog.rcu)} | ${Math.round(m.perKey.catalog.rcu)} | ${Math.round(m.hottestDataPrefixPut)} | ${m.over.join('; ') || 'none'} |`,
      )
    }
    lines.push('')
  }
  return lines.join('\n')
}
