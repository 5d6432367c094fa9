/**
 * The whole pipeline on one machine: the event-source-mapping simulator feeds the REAL writer
 * handler, and the REAL committer handler runs on a (time-compressed) schedule beside it, until
 * every record is delivered and nothing is pending. Used by `floe start` and its test.
 */
import type { Context } from 'aws-lambda'
import { createCommitterHandler } from '../../functions/committer.js'
import { createWriterHandler } from '../../functions/writer.js'
import { createWriterDeps, type WriterSummary } from '../writer/index.js'
import { createCommitterDeps, type CommitterSummary } from '../commit/index.js'
import type { AwsClients } from '../clients.js'
import type { FloeConfig } from '../config.js'
import { listCheckpoints, createControlContext, listPendingTables } from '../control/index.js'
import type { FileIO } from '../io/index.js'
import { EventSourceMapping } from './esm.js'
import type { KafkaLog } from './kafka-log.js'

export interface Progress {
  delivered: number
  total: number
  batches: number
  failedBatches: number
  files: number
  rows: number
  deadLetters: number
  dropped: number
  commits: number
  committedBatches: number
  elapsedMs: number
}

export interface RunOptions {
  batchSize?: number
  batchingWindowMs?: number
  /** Parallel invocations over disjoint partition sets (the mapping scales per partition). */
  concurrency?: number
  /** How often the committer runs: the Lambda schedule (1 minute) compressed. */
  commitEveryMs?: number
  onProgress?: (p: Progress) => void
}

/** Consumer positions to resume from: the writer checkpoints a previous run left. */
export async function resumePositions(config: FloeConfig, clients: AwsClients, io: FileIO): Promise<Map<string, bigint>> {
  const ctx = createControlContext(config, clients.doc, io)
  const out = new Map<string, bigint>()
  for (const c of await listCheckpoints(ctx, config.pipeline)) out.set(`${c.topic}-${c.partition}`, c.next)
  return out
}

function fakeContext(name: string, n: number): Context {
  return {
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${name}`,
    memoryLimitInMB: '1024',
    awsRequestId: `local-${name}-${Date.now().toString(36)}-${n}`,
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    callbackWaitsForEmptyEventLoop: false,
    getRemainingTimeInMillis: () => 900_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  }
}

/** Deliver everything in `log` from `positions`, committing on a schedule, then settle. */
export async function runLocalPipeline(
  config: FloeConfig,
  clients: AwsClients,
  io: FileIO,
  log: KafkaLog,
  positions: Map<string, bigint>,
  opts: RunOptions = {},
): Promise<Progress> {
  return runWithHandlers(config, clients, io, opts, async (invoke, progress) => {
    const esm = new EventSourceMapping(log, invoke, { batchSize: opts.batchSize ?? 500, batchingWindowMs: opts.batchingWindowMs ?? 500 })
    for (const [k, v] of positions) esm.positions.set(k, v)
    progress.total = esm.lag()
    await esm.drain({
      concurrency: opts.concurrency ?? 2,
      onBatch: (o) => {
        progress.batches++
        if (o.ok) progress.delivered += o.records
        else progress.failedBatches++
      },
      sleep: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 200))),
    })
  })
}

/**
 * The real writer and committer handlers around a source of events: `deliver` feeds events to
 * `invoke` (the writer, counting into `progress`) while the committer runs on its compressed
 * schedule; once `deliver` returns, commits until nothing is pending. The simulator and the
 * Kafka poller (kafka-pipeline.ts) are the two sources.
 */
export async function runWithHandlers(
  config: FloeConfig,
  clients: AwsClients,
  io: FileIO,
  opts: Pick<RunOptions, 'commitEveryMs' | 'onProgress'>,
  deliver: (invoke: (event: unknown) => Promise<void>, progress: Progress) => Promise<void>,
): Promise<Progress> {
  const writer = createWriterHandler(await createWriterDeps(config, clients))
  const committer = createCommitterHandler(await createCommitterDeps(config, clients))
  const started = Date.now()
  const progress: Progress = { delivered: 0, total: 0, batches: 0, failedBatches: 0, files: 0, rows: 0, deadLetters: 0, dropped: 0, commits: 0, committedBatches: 0, elapsedMs: 0 }
  let invocation = 0
  const report = () => opts.onProgress?.({ ...progress, elapsedMs: Date.now() - started })
  const invoke = async (event: unknown) => {
    const summary = (await writer(event as Parameters<typeof writer>[0], fakeContext('floe-writer', ++invocation))) as WriterSummary
    progress.deadLetters += summary.deadLetters
    progress.dropped += summary.dropped
    for (const t of summary.tables) {
      progress.files += t.files
      progress.rows += t.rows
    }
  }

  let commitRun = 0
  const commitOnce = async () => {
    const s = (await committer({}, fakeContext('floe-committer', ++commitRun))) as CommitterSummary
    progress.commits += s.committed
    progress.committedBatches += s.batches
    if (s.failures > 0) {
      const errors = s.results.filter((r) => r.error).map((r) => `${r.table}: ${r.error}`)
      throw new Error(`committer failed for ${s.failures} table(s): ${errors.join('; ')}`)
    }
  }

  // The committer runs on its schedule while the source delivers.
  let stop = false
  let committing: Promise<void> = Promise.resolve()
  const every = opts.commitEveryMs ?? 2_000
  const scheduler = (async () => {
    // `stop` is set by the code below once the source has drained.
    // oxlint-disable-next-line no-unmodified-loop-condition
    while (!stop) {
      await new Promise((r) => setTimeout(r, every))
      if (stop) break
      committing = commitOnce()
      await committing
    }
  })()
  const ticker = setInterval(report, 250)
  try {
    await deliver(invoke, progress)
  } finally {
    stop = true
    await scheduler.catch(() => undefined)
    await committing.catch(() => undefined)
    clearInterval(ticker)
  }
  // Settle: commit until nothing is pending (a few rounds at most; each takes up to the limit per commit).
  const ctx = createControlContext(config, clients.doc, io)
  for (let round = 0; round < 50 && (await listPendingTables(ctx, config.pipeline)).length > 0; round++) await commitOnce()
  report()
  return { ...progress, elapsedMs: Date.now() - started }
}
