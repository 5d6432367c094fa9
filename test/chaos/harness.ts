/**
 * The exactly-once fault-injection harness. A schedule is a seeded plan: topics, partitions and
 * records (with poison mixed in), mapping settings, and faults. It runs the REAL writer and
 * committer handlers in child processes (test/chaos/containers.ts) behind fault proxies, drives
 * the writer through the event-source-mapping simulator, lets the system settle, and judges the
 * result with an independent reader (test/chaos/verify.ts).
 */
import { QueryCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { S3Client } from '@aws-sdk/client-s3'
import { createMaintenanceDeps } from '../../functions/maintenance.js'
import { createClients } from '../../lib/clients.js'
import { loadConfig } from '../../lib/config.js'
import { pendingIndexPk, shardRange } from '../../lib/control/keys.js'
import { rng } from '../../lib/local/demo.js'
import { removeOrphanFiles } from '../../lib/maintenance/orphans.js'
import { LOCAL_CREDENTIALS } from '../../lib/local/endpoints.js'
import { EventSourceMapping, type ClosedBy } from '../../lib/local/esm.js'
import { KafkaLog, buildEvent, type KafkaEvent, type LogRecord } from '../../lib/local/kafka-log.js'
import { Container, type InvokeResult } from './containers.js'
import type { Rule, Verdict as ProxyVerdict } from './proxy.js'
import { parkFailedBatch, parkedRecordIds } from './replay.js'
import { findDangling, findOrphans, judge, readCheckpoints, readDeadLetters, readTable, type TableContents, type Verdict } from './verify.js'

export const FAULTS = [
  'writer-kill-before-s3',
  'writer-kill-during-s3',
  'writer-kill-before-tx',
  'writer-kill-after-tx',
  'zombie-first-finishes',
  'zombie-second-finishes',
  'duplicate-delivery',
  'committer-kill-before-swap',
  'committer-kill-after-swap',
  'committer-kill-while-marking',
  'concurrent-committers',
  'lease-expiry-before-swap',
  'lease-expiry-after-swap',
  'foreign-append',
  'throttle-s3',
  'throttle-dynamodb',
  'poison',
  // Maintenance (compaction, snapshot expiry) under the committer's lease, with the committer and
  // writers running: a kill while compacting (writing the rewritten file, or around its swap), a
  // kill while deleting expired files, compaction racing a committer and a writer, and expiry
  // while batches are pending (some already in a snapshot, not yet marked).
  'maintenance-kill-during-compaction',
  'maintenance-kill-during-expiry',
  'compaction-races-committer',
  'expiry-with-pending',
  // An outage longer than the mapping's retry budget parks batches in the failed-batches store;
  // then `floe replay` (the replay Lambda in its own container) races the live writers, is
  // killed before or after its transaction and run again, or is run twice.
  'replay-racing-writers',
  'replay-killed',
  'replay-twice',
] as const
export type Fault = (typeof FAULTS)[number]
/** The faults a committer run injects: FAULTS from the committer kills to the foreign append. */
const COMMITTER_FAULTS: Fault[] = FAULTS.slice(FAULTS.indexOf('committer-kill-before-swap'), FAULTS.indexOf('foreign-append') + 1)
const MAINTENANCE_FAULTS: Fault[] = ['maintenance-kill-during-compaction', 'maintenance-kill-during-expiry', 'compaction-races-committer', 'expiry-with-pending']
/** What the maintenance container is asked to do in a schedule (orphans: the harness's own step). */
const MAINTAIN = { tasks: ['compact', 'manifests', 'expire'] }

export interface HarnessEnv {
  ddb: DynamoDBClient
  s3: S3Client
  endpoints: { s3: string; dynamodb: string }
  pipeline: string
  controlTable: string
  catalogTable: string
  bucket: string
  /** A foreign engine's append to a table (between a committer's load and swap). */
  foreignAppend?: (namespace: string, table: string) => Promise<void>
  /** The tables' partitionBy (default: unpartitioned), e.g. ["hour(ts)"]: a record's minute puts batches in one hour or across two. */
  partitionBy?: string[]
}

export interface ScheduleResult {
  seed: number
  index: number
  faults: Fault[]
  injected: Partial<Record<Fault, number>>
  verdict: Verdict
  /** Unreferenced data files after settling (killed and stale writers' files), before cleanup. */
  orphansFound: number
  /** Unreferenced data files after Floe's orphan cleanup: must be 0. */
  orphansLeft: number
  /** Files a kept snapshot names that do not exist (after compaction and expiry): must be 0. */
  dangling: number
  foreignRows: number
  invocations: number
  /** Records the writer's scanner lane read (its answers' recordsScanned; duplicate deliveries aside). */
  scanned: number
  /** Batches the mapping delivered (retries included), by what closed them. */
  batches: Record<ClosedBy, number>
  ok: boolean
}

const NAMESPACE = 'chaos'

/** Env shared by all containers of a harness run (config is parsed once per container). */
export function containerEnv(env: HarnessEnv): Record<string, string> {
  return {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    FLOE_PIPELINE: env.pipeline,
    FLOE_CONTROL_TABLE: env.controlTable,
    FLOE_CATALOG: 'dynamodb',
    FLOE_CATALOG_TABLE: env.catalogTable,
    FLOE_WAREHOUSE: `s3://${env.bucket}/warehouse`,
    FLOE_DLQ: `s3://${env.bucket}/dead-letters`,
    FLOE_FAILED_BATCHES: `s3://${env.bucket}/failed-batches/${env.pipeline}`,
    FLOE_ROUTES: JSON.stringify({
      defaultNamespace: NAMESPACE,
      // Snapshots expire as soon as maintenance runs (it only runs in maintenance schedules).
      // Manifests merge on append, and are rewritten by maintenance, from 4 small ones (not 100):
      // both happen within a schedule's few dozen commits.
      tableDefaults: {
        autoCreate: true,
        evolveSchema: true,
        kafkaMetadata: ['topic', 'partition', 'offset'],
        properties: { 'history.expire.max-snapshot-age-ms': '0', 'commit.manifest.min-count-to-merge': '4' },
        ...(env.partitionBy?.length ? { partitionBy: env.partitionBy } : {}),
      },
      routes: [{ table: '{topic}' }],
      unrouted: 'dead-letter',
    }),
    FLOE_LEASE_TTL_SECONDS: '2',
    // `FLOE_WRITER_WORKERS=2 npm run chaos`: the writer containers encode on worker threads.
    ...(process.env.FLOE_WRITER_WORKERS ? { FLOE_WRITER_WORKERS: process.env.FLOE_WRITER_WORKERS } : {}),
    // `FLOE_WRITER_SCAN=false npm run chaos`: every record takes the writer's present path (the scanner lane is on by default).
    ...(process.env.FLOE_WRITER_SCAN ? { FLOE_WRITER_SCAN: process.env.FLOE_WRITER_SCAN } : {}),
    FLOE_COMMIT_BACKOFF_MS: '10',
    FLOE_COMMIT_RETRIES: '20',
    FLOE_AWS_MAX_ATTEMPTS: '3',
    FLOE_MEMORY_BUDGET_MB: '16',
  }
}

/** A pool of warm containers: two writers (for zombies) and two committers (for races). */
export class Fleet {
  readonly writers: [Container, Container]
  readonly committers: [Container, Container]
  readonly maintainer: Container
  /** Runs functions/replay.ts (`floe replay` in AWS). */
  readonly replayer: Container

  constructor(env: HarnessEnv) {
    const vars = containerEnv(env)
    this.writers = [new Container('writer', vars, env.endpoints), new Container('writer', vars, env.endpoints)]
    this.committers = [new Container('committer', vars, env.endpoints), new Container('committer', vars, env.endpoints)]
    this.maintainer = new Container('maintenance', vars, env.endpoints)
    this.replayer = new Container('replay', vars, env.endpoints)
  }

  all(): Container[] {
    return [...this.writers, ...this.committers, this.maintainer, this.replayer]
  }

  async start(): Promise<void> {
    await Promise.all(this.all().map((c) => c.start()))
  }

  async stop(): Promise<void> {
    await Promise.all(this.all().map((c) => c.stop()))
  }

  reset(): void {
    for (const c of this.all()) c.setRules({})
  }
}

interface Plan {
  topics: { name: string; partitions: number }[]
  recordsPerPartition: number
  batchSize: number
  /** The mapping's MaximumBatchingWindow, in ms of its (virtual) clock. */
  batchingWindowMs: number
  /** Mean gap between a partition's records as produced (0: all there before the mapping starts). */
  arrivalGapMs: number
  poisonRate: number
  faults: Fault[]
  commitEvery: number
}

export function planSchedule(seed: number, index: number): Plan {
  const r = rng(seed * 1_000_003 + index)
  const forced = FAULTS[index % FAULTS.length]!
  const faults = new Set<Fault>([forced])
  const extra = Math.floor(r() * 3)
  for (let i = 0; i < extra; i++) faults.add(FAULTS[Math.floor(r() * FAULTS.length)]!)
  const topicCount = 1 + Math.floor(r() * 2)
  // Replay schedules: small batches, so batches follow the one the outage parks (live writers to race).
  const replaying = [...faults].some((f) => f.startsWith('replay-'))
  return {
    topics: Array.from({ length: topicCount }, (_, i) => ({ name: `s${seed}_${index}_t${i}`, partitions: 1 + Math.floor(r() * 3) })),
    recordsPerPartition: 10 + Math.floor(r() * 60),
    batchSize: replaying ? 2 + Math.floor(r() * 4) : 5 + Math.floor(r() * 40),
    poisonRate: faults.has('poison') ? 0.1 : 0.02,
    faults: [...faults],
    commitEvery: 1 + Math.floor(r() * 4),
    batchingWindowMs: [50, 200, 500][Math.floor(r() * 3)]!,
    arrivalGapMs: [0, 1, 4][Math.floor(r() * 3)]!,
  }
}

function produce(plan: Plan, r: () => number): { log: KafkaLog; produced: { id: string; poison: boolean }[]; ends: Map<string, bigint> } {
  const log = new KafkaLog()
  const produced: { id: string; poison: boolean }[] = []
  const ends = new Map<string, bigint>()
  const enc = new TextEncoder()
  for (const t of plan.topics) {
    for (let p = 0; p < t.partitions; p++) {
      let offset = BigInt(Math.floor(r() * 5))
      let at = 0
      for (let i = 0; i < plan.recordsPerPartition; i++) {
        // The producer writes over time, in bursts with pauses, so batches also close on the window.
        at += plan.arrivalGapMs * (r() < 0.1 ? 20 * r() : 2 * r())
        const poison = r() < plan.poisonRate
        // A wrong-typed record is only poison against an established schema: keep it out of the
        // batches (even a merged retry, at most 2 × batchSize) that auto-create the table.
        const typed = i > 2 * plan.batchSize && i >= plan.recordsPerPartition / 2
        const kind = Math.floor(r() * (typed ? 3 : 2))
        const value = poison
          ? kind === 0
            ? enc.encode('{"id": 1, "amount": ')
            : kind === 1
              ? enc.encode('"just a string"')
              : enc.encode(JSON.stringify({ id: i, amount: 'twelve', ts: '2026-11-29T10:00:00Z' }))
          : enc.encode(JSON.stringify({ id: i, amount: Math.round(r() * 10_000) / 100, ts: new Date(Date.UTC(2026, 10, 1) + i * 60_000).toISOString(), note: r() < 0.5 ? null : `n${i}` }))
        log.append({ topic: t.name, partition: p, offset, timestamp: Date.UTC(2026, 10, 1) + i * 60_000, key: enc.encode(`k${i}`), value, availableAt: Math.round(at) })
        produced.push({ id: `${t.name}-${p}@${offset}`, poison })
        ends.set(`${t.name}-${p}`, offset + 1n)
        offset += r() < 0.1 ? 3n : 1n // gaps, as after compaction or transaction markers
      }
    }
  }
  return { log, produced, ends }
}

const isDataPut = (req: { op: string; target: string }) => req.op === 'PutObject' && req.target.includes('/data/')
const isTx = (req: { op: string }) => req.op === 'TransactWriteItems'

/**
 * Run one schedule to completion and judge it. Never throws for a Floe failure: the verdict
 * says what went wrong, with the seed and index to replay it.
 */
export async function runSchedule(env: HarnessEnv, fleet: Fleet, seed: number, index: number): Promise<ScheduleResult> {
  const plan = planSchedule(seed, index)
  const r = rng(seed * 7919 + index)
  const { log, produced, ends } = produce(plan, r)
  const injected: Partial<Record<Fault, number>> = {}
  const forced = plan.faults[0]!
  const pending = new Set(plan.faults)
  const armed = new Set<Fault>()
  const fired = new Set<Fault>()
  /** Decide whether to arm a planned fault now; the forced fault is armed at its first chance. */
  const take = (f: Fault, p = 0.5) => {
    if (!pending.has(f) || (f !== forced && r() >= p)) return false
    pending.delete(f)
    armed.add(f)
    return true
  }
  /** A fault counts as injected only when it really happened (a rule fired). */
  const fire = (f: Fault) => {
    fired.add(f)
    injected[f] = (injected[f] ?? 0) + 1
  }
  /** Faults armed for an invocation that never fired go back to the plan. */
  const disarm = () => {
    for (const f of armed) if (!fired.has(f)) pending.add(f)
    armed.clear()
    fired.clear()
  }
  const [w1, w2] = fleet.writers
  const [c1, c2] = fleet.committers
  const m1 = fleet.maintainer
  const maintains = plan.faults.some((f) => MAINTENANCE_FAULTS.includes(f))
  let invocations = 0
  let writerCalls = 0
  let scanned = 0

  const killOn = (c: Container, f: Fault, match: (req: Parameters<Rule>[0]) => boolean, after = false): Rule => (req) => {
    if (!match(req)) return { action: 'forward' }
    fire(f)
    if (after) return { action: 'forward-then', after: () => c.kill() }
    setImmediate(() => c.kill())
    return { action: 'hang' }
  }
  const throttling = (f: Fault, p: number): Rule => () => {
    if (r() >= p) return { action: 'forward' }
    fire(f)
    return { action: r() < 0.5 ? 'throttle' : 'error5xx' }
  }
  const tick = (ms: number) => new Promise((res) => setTimeout(res, ms))
  const catalogSwap = (req: Parameters<Rule>[0]) => req.target === env.catalogTable && (req.op === 'UpdateItem' || req.op === 'PutItem')
  const swapTable = (req: Parameters<Rule>[0]) => {
    const body = JSON.parse(req.body) as { Key?: { identifier?: { S?: string } }; Item?: { identifier?: { S?: string } } }
    return (body.Key?.identifier?.S ?? body.Item?.identifier?.S ?? '').split('.') as [string, string]
  }

  const committerOnce = async (): Promise<void> => {
    fleet.reset()
    invocations++
    if (take('committer-kill-before-swap')) {
      c1.setRules({ dynamodb: killOn(c1, 'committer-kill-before-swap', catalogSwap) })
      await c1.invoke({})
      return
    }
    if (take('committer-kill-after-swap')) {
      c1.setRules({ dynamodb: killOn(c1, 'committer-kill-after-swap', catalogSwap, true) })
      await c1.invoke({})
      return
    }
    if (take('committer-kill-while-marking')) {
      let swapped = false
      c1.setRules({
        dynamodb: (req) => {
          if (catalogSwap(req)) swapped = true
          else if (swapped && req.target === env.controlTable && (isTx(req) || req.op === 'UpdateItem')) {
            fire('committer-kill-while-marking')
            setImmediate(() => c1.kill())
            return { action: 'hang' }
          }
          return { action: 'forward' }
        },
      })
      await c1.invoke({})
      return
    }
    if (take('compaction-races-committer')) {
      fire('compaction-races-committer')
      await Promise.all([c1.invoke({}), m1.invoke(MAINTAIN)])
      invocations++
      return
    }
    if (take('concurrent-committers')) {
      fire('concurrent-committers')
      await Promise.all([c1.invoke({}), c2.invoke({})])
      invocations++
      return
    }
    for (const order of ['lease-expiry-before-swap', 'lease-expiry-after-swap'] as const) {
      if (!take(order)) continue
      // c1 stalls (every request held) just before / just after its swap, longer than the lease
      // TTL; c2 takes the lease over and commits; then c1 wakes up as a zombie.
      let release!: () => void
      const released = new Promise<void>((res) => (release = res))
      let stalled = false
      c1.setRules({
        dynamodb: (req): ProxyVerdict => {
          if (stalled) return { action: 'hold', until: released }
          if (catalogSwap(req)) {
            stalled = true
            fire(order)
            return order === 'lease-expiry-before-swap' ? { action: 'hold', until: released } : { action: 'forward' }
          }
          return { action: 'forward' }
        },
      })
      const zombie = c1.invoke({})
      // `stalled` is set by the proxy rule, asynchronously.
      // oxlint-disable-next-line no-unmodified-loop-condition
      for (let i = 0; i < 150 && !stalled; i++) await tick(20)
      if (stalled) {
        await tick(2_300)
        await c2.invoke({})
        invocations++
      }
      release()
      await zombie
      return
    }
    if (env.foreignAppend && take('foreign-append')) {
      let release!: () => void
      const released = new Promise<void>((res) => (release = res))
      let held = false
      c1.setRules({
        dynamodb: (req): ProxyVerdict => {
          if (!held && catalogSwap(req)) {
            held = true
            fire('foreign-append')
            const [ns, name] = swapTable(req)
            void env.foreignAppend!(ns, name).finally(release)
            return { action: 'hold', until: released }
          }
          return { action: 'forward' }
        },
      })
      await c1.invoke({})
      return
    }
    c1.setRules({
      ...(plan.faults.includes('throttle-dynamodb') ? { dynamodb: throttling('throttle-dynamodb', 0.1) } : {}),
      ...(plan.faults.includes('throttle-s3') ? { s3: throttling('throttle-s3', 0.1) } : {}),
    })
    await c1.invoke({})
  }
  const runCommitter = async () => {
    try {
      await committerOnce()
    } finally {
      disarm()
    }
    if (maintains) {
      try {
        await maintenanceOnce()
      } finally {
        disarm()
      }
    }
  }

  /** One maintenance invocation (compaction, then expiry), maybe killed at a planned point. */
  const maintenanceOnce = async (): Promise<void> => {
    fleet.reset()
    if (take('maintenance-kill-during-compaction')) {
      const after = r() < 0.5
      const onSwap = r() < 0.5
      m1.setRules(
        onSwap
          ? { dynamodb: killOn(m1, 'maintenance-kill-during-compaction', catalogSwap, after) }
          : { s3: killOn(m1, 'maintenance-kill-during-compaction', (req) => req.op === 'PutObject' && req.target.includes('/compacted-'), after) },
      )
    } else if (take('maintenance-kill-during-expiry')) {
      m1.setRules({ s3: killOn(m1, 'maintenance-kill-during-expiry', (req) => req.op === 'DeleteObjects' || req.op === 'DeleteObject', r() < 0.5) })
    } else if (r() >= 0.5) return
    invocations++
    await m1.invoke(MAINTAIN)
  }

  // Replay schedules: an outage of the control table's transactions for the first invocations,
  // longer than the mapping's retry budget (maxRetries 1): it parks the batch as failed.
  const replaying = plan.faults.some((f) => f.startsWith('replay-'))
  let outage = replaying ? 2 : 0
  let parked = 0
  const refuseTx: Rule = (req) => (isTx(req) && req.target === env.controlTable ? { action: 'error5xx' } : { action: 'forward' })
  const replayOnce = async (what: 'failed-batches' | 'dead-letters'): Promise<void> => {
    invocations++
    // A replay that fails (or reports failed sources) leaves records out: the judge sees them lost.
    await fleet.replayer.invoke({ replay: what })
  }

  const writerOnce = async (event: KafkaEvent): Promise<InvokeResult> => {
    if (outage > 0) {
      outage--
      w1.setRules({ dynamodb: refuseTx })
      return w1.invoke(event)
    }
    if (take('compaction-races-committer', 0.3)) {
      // Maintenance commits to the table while a writer loads it and registers a batch.
      fire('compaction-races-committer')
      invocations++
      const [outcome] = await Promise.all([w1.invoke(event), m1.invoke(MAINTAIN)])
      return outcome
    }
    if (parked > 0 && take('replay-racing-writers')) {
      // Replay the parked batches while a live writer registers newer records of the same partitions.
      fire('replay-racing-writers')
      const race = replayOnce('failed-batches')
      const live = await w1.invoke(event)
      await race
      return live
    }
    const zombie = take('zombie-first-finishes', 0.3) ? 'first' : take('zombie-second-finishes', 0.3) ? 'second' : undefined
    if (zombie) {
      // The first container times out (from the mapping's view) and keeps running; the batch is
      // handed to a second container. Hold one side's transaction until the other has finished.
      // The mapping only sees the second (retry) invocation's outcome.
      fire(zombie === 'first' ? 'zombie-first-finishes' : 'zombie-second-finishes')
      let release!: () => void
      const released = new Promise<void>((res) => (release = res))
      const holdTx: Rule = (req) => (isTx(req) && req.target === env.controlTable ? { action: 'hold', until: released } : { action: 'forward' })
      invocations++
      if (zombie === 'first') {
        w2.setRules({ dynamodb: holdTx })
        const secondRun = w2.invoke(event)
        await w1.invoke(event)
        release()
        return secondRun
      }
      w1.setRules({ dynamodb: holdTx })
      const firstRun = w1.invoke(event)
      const outcome = await w2.invoke(event)
      release()
      await firstRun
      return outcome
    }
    if (take('writer-kill-before-s3', 0.3)) w1.setRules({ s3: killOn(w1, 'writer-kill-before-s3', isDataPut) })
    else if (take('writer-kill-during-s3', 0.3)) w1.setRules({ s3: killOn(w1, 'writer-kill-during-s3', isDataPut, true) })
    else if (take('writer-kill-before-tx', 0.3)) w1.setRules({ dynamodb: killOn(w1, 'writer-kill-before-tx', (req) => isTx(req) && req.target === env.controlTable) })
    else if (take('writer-kill-after-tx', 0.3)) w1.setRules({ dynamodb: killOn(w1, 'writer-kill-after-tx', (req) => isTx(req) && req.target === env.controlTable, true) })
    else {
      // Throttling and 5xx are a condition of the whole schedule, not a one-off: every request
      // of this invocation may be refused (the SDK retries FLOE_AWS_MAX_ATTEMPTS times).
      const rules: { s3?: Rule; dynamodb?: Rule } = {}
      if (plan.faults.includes('throttle-s3')) rules.s3 = throttling('throttle-s3', 0.1)
      if (plan.faults.includes('throttle-dynamodb')) rules.dynamodb = throttling('throttle-dynamodb', 0.1)
      w1.setRules(rules)
    }
    return w1.invoke(event)
  }

  const invokeWriter = async (event: KafkaEvent): Promise<void> => {
    fleet.reset()
    writerCalls++
    invocations++
    let outcome: InvokeResult
    try {
      outcome = await writerOnce(event)
    } finally {
      disarm()
    }
    if (outcome.ok) scanned += (outcome.result as { recordsScanned?: number } | undefined)?.recordsScanned ?? 0
    if (outcome.ok && take('duplicate-delivery', 0.4)) {
      fire('duplicate-delivery')
      disarm()
      fleet.reset()
      invocations++
      const again = await w2.invoke(event)
      if (!again.ok && !again.retryable) throw new Error(`duplicate delivery of an acknowledged batch failed: ${again.error}`)
    }
    if (take('expiry-with-pending', 0.5)) {
      // The writer's batch is pending (and, after a committer killed after its swap, maybe in a
      // snapshot but unmarked): expiry must delete none of its files.
      fire('expiry-with-pending')
      disarm()
      fleet.reset()
      invocations++
      await m1.invoke(MAINTAIN)
    }
    if (writerCalls % plan.commitEvery === 0) await runCommitter()
    if (!outcome.ok) throw new Error(outcome.error ?? 'writer failed')
  }

  const esm = new EventSourceMapping(log, invokeWriter, {
    batchSize: plan.batchSize,
    batchingWindowMs: plan.batchingWindowMs,
    rebatch: (attempt) => (['same', 'split', 'merge'] as const)[attempt % 3]!,
    ...(replaying
      ? {
          maxRetries: 1,
          onFailure: async (event: KafkaEvent, attempts: number) => {
            parked++
            await parkFailedBatch(env.s3, env.bucket, env.pipeline, event, attempts)
          },
        }
      : {}),
  })
  const batches: Record<ClosedBy, number> = { count: 0, payload: 0, window: 0 }
  await esm.drain({ concurrency: 1, maxInvocations: 500, onBatch: (o) => void (o.closedBy && batches[o.closedBy]++) })
  if (plan.faults.includes('poison')) injected.poison = produced.filter((p) => p.poison).length

  if (replaying) {
    fleet.reset()
    const rp = fleet.replayer
    if (parked > 0 && take('replay-killed')) {
      // Killed just before or just after its first registration transaction, then run again.
      rp.setRules({ dynamodb: killOn(rp, 'replay-killed', (req) => isTx(req) && req.target === env.controlTable, r() < 0.5) })
      invocations++
      await rp.invoke({ replay: 'failed-batches' })
      disarm()
      fleet.reset()
    }
    const twice = parked > 0 && take('replay-twice')
    if (twice) fire('replay-twice')
    for (let i = 0; i < (twice ? 2 : 1); i++) {
      await replayOnce('failed-batches')
      // Dead letters (poison) are replayed too: they fail again and stay, exactly once.
      await replayOnce('dead-letters')
    }
    disarm()
  }

  // A schedule with fewer writer calls than `commitEvery` ran no committer yet: its committer
  // faults get their chance here, while batches are certainly pending.
  const committerFaults = COMMITTER_FAULTS.filter((f) => pending.has(f))
  if (committerFaults.length > 0 && (await pendingBatches(env)) > 0) await runCommitter()

  // Settle: run committers without faults until nothing is pending.
  // A committer killed mid-commit leaves its lease until the TTL (2 s here) runs out, and a run
  // that finds the lease busy commits nothing: keep running committers, pausing between runs,
  // until nothing is pending (bounded, so a real hang shows up as lost records, not a stuck test).
  fleet.reset()
  const settleUntil = Date.now() + 60_000
  while ((await pendingBatches(env)) > 0 && Date.now() < settleUntil) {
    invocations++
    await c1.invoke({})
    if ((await pendingBatches(env)) > 0) await tick(250)
  }

  // Maintenance schedules end with maintenance and committers without faults until both are done:
  // a killed maintenance run holds the lease until its TTL, so `busy` is retried.
  if (maintains) {
    const until = Date.now() + 60_000
    // A maintenance kill that found nothing to hit during the schedule gets its chance here, where
    // the table certainly has small files to compact and snapshots to expire.
    const unfired = (['maintenance-kill-during-compaction', 'maintenance-kill-during-expiry'] as const).filter((f) => pending.has(f))
    if (unfired.length > 0) {
      fleet.reset()
      const f = unfired[0]!
      pending.delete(f)
      m1.setRules(
        f === 'maintenance-kill-during-compaction'
          ? { dynamodb: killOn(m1, f, catalogSwap, r() < 0.5) }
          : { s3: killOn(m1, f, (req) => req.op === 'DeleteObjects' || req.op === 'DeleteObject', r() < 0.5) },
      )
      invocations++
      await m1.invoke(MAINTAIN)
    }
    fleet.reset()
    // Committers drain first, then maintenance runs last: a batch committed after the last
    // expiry would leave the snapshot before it (and the files only it names) in the table.
    for (let settled = false; !settled && Date.now() < until; ) {
      while ((await pendingBatches(env)) > 0 && Date.now() < until) {
        invocations++
        await c1.invoke({})
        if ((await pendingBatches(env)) > 0) await tick(250)
      }
      invocations++
      const out = await m1.invoke(MAINTAIN)
      const unsettled = out.ok && (out.result as { results?: { status: string }[] }).results?.some((x) => x.status === 'busy' || x.status === 'failed')
      settled = out.ok && !unsettled && (await pendingBatches(env)) === 0
      if (!settled) await tick(250)
    }
  }

  // Orphans: files of killed or stale writers and failed commits. Count them, run Floe's orphan
  // cleanup (horizon 0: nothing of this schedule is still running), and count what is left.
  const tables: TableContents[] = []
  let orphansFound = 0
  let orphansLeft = 0
  let dangling = 0
  for (const t of plan.topics) {
    const name = t.name.toLowerCase()
    const before = await readTable(env.ddb, env.s3, env.catalogTable, NAMESPACE, name)
    if (!before) continue
    const location = before.metadataLocation.replace(/\/metadata\/[^/]+$/, '')
    orphansFound += (await findOrphans(env.s3, location, before.dataFiles)).length
    await removeOrphanFiles(await maintenanceDeps(env), `${NAMESPACE}.${name}`, { olderThanMs: 0 })
    const contents = (await readTable(env.ddb, env.s3, env.catalogTable, NAMESPACE, name))!
    tables.push(contents)
    orphansLeft += (await findOrphans(env.s3, location, contents.dataFiles)).length
    dangling += (await findDangling(env.s3, contents.metadataLocation)).length
  }
  // Dead letters of this schedule's topics only (keys are <dlq>/<pipeline>/<topic>/...): reading the
  // whole store would make every schedule slower than the one before.
  const dead = new Map<string, { count: number; reason: string }>()
  for (const t of plan.topics) {
    const prefix = `s3://${env.bucket}/dead-letters/${encodeURIComponent(env.pipeline)}/${encodeURIComponent(t.name)}`
    for (const [id, d] of await readDeadLetters(env.s3, prefix)) dead.set(id, d)
  }
  const ours = new Set(produced.map((p) => p.id))
  for (const id of [...dead.keys()]) if (!ours.has(id)) dead.delete(id)
  const checkpoints = await readCheckpoints(env.ddb, env.controlTable, env.pipeline, [...ends.keys()])
  const replayed = replaying ? await parkedRecordIds(env.s3, env.bucket, env.pipeline) : undefined
  const verdict = judge(produced, tables, dead, ends, env.pipeline, checkpoints, replayed)
  const poisonInTable = produced.filter((p) => p.poison && (tables.some((t) => t.rows.has(p.id)))).map((p) => p.id)
  if (poisonInTable.length) verdict.both.push(...poisonInTable.map((id) => `${id} (poison in table)`))
  const ok = !verdict.lost.length && !verdict.duplicated.length && !verdict.both.length && !verdict.offsetMismatches.length && orphansLeft === 0 && dangling === 0
  return {
    seed,
    index,
    faults: plan.faults,
    injected,
    verdict,
    orphansFound,
    orphansLeft,
    dangling,
    foreignRows: tables.reduce((s, t) => s + t.foreignRows, 0),
    invocations,
    scanned,
    batches,
    ok,
  }
}

const maintenance = new Map<string, ReturnType<typeof createMaintenanceDeps>>()
/** Orphan-cleanup dependencies per lane (pipeline), built once. */
function maintenanceDeps(env: HarnessEnv): ReturnType<typeof createMaintenanceDeps> {
  let deps = maintenance.get(env.pipeline)
  if (!deps) {
    deps = createMaintenanceDeps(loadConfig(containerEnv(env)), createClients({ endpoints: env.endpoints, maxAttempts: 3 }))
    maintenance.set(env.pipeline, deps)
  }
  return deps
}

/** Pending batches over every shard of the pending index (FLOE_PENDING_SHARDS, lib/control/keys.ts). */
async function pendingBatches(env: HarnessEnv): Promise<number> {
  let count = 0
  for (const shard of shardRange(loadConfig(containerEnv(env)).pendingShards)) {
    const out = await env.ddb.send(
      new QueryCommand({
        TableName: env.controlTable,
        IndexName: 'pending',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: pendingIndexPk(env.pipeline, shard) } },
        Select: 'COUNT',
      }),
    )
    count += out.Count ?? 0
  }
  return count
}

export { buildEvent, type LogRecord }
