/**
 * Writer Lambda: what the MSK event source mapping invokes. Thin: config, clients, FileIO,
 * catalog and decoders are built once per cold start; each invocation calls lib/writer's
 * `writeBatch`. Infrastructure errors propagate — the mapping retries the batch, and fencing
 * (DESIGN.md invariant 2) makes the retry safe. Back pressure is a retryable BackpressureError.
 *
 * `createWriterHandler(deps)` builds the same handler against any dependencies (tests, the local
 * simulator, the chaos harness); lib/writer's `createWriterDeps(config, clients)` builds the real ones.
 */
import middy from '@middy/core'
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware'
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware'
import type { Context } from 'aws-lambda'
import { createClients } from '../lib/clients.js'
import { loadConfig, type FloeConfig } from '../lib/config.js'
import { BackpressureError, BatchDeferredError } from '../lib/errors.js'
import { logger, metrics, MetricUnit } from '../lib/log.js'
import { createWriterDeps, compileRoutes, writeBatch, type WriteResult, type WriterDeps } from '../lib/writer/index.js'

export type WriterHandlerDeps = Omit<WriterDeps, 'router'> & { router?: WriterDeps['router'] }

/** A middy handler around writeBatch with logging and metrics. */
export function createWriterHandler(deps: WriterHandlerDeps | (() => Promise<WriterDeps>)) {
  let ready: Promise<WriterDeps> | undefined
  const resolve = () =>
    (ready ??= typeof deps === 'function' ? deps() : Promise.resolve({ ...deps, router: deps.router ?? compileRoutes(deps.config.routes, deps.config.limits) }))
  return middy(async (event: unknown, context: Context): Promise<WriterSummary> => {
    const d = await resolve()
    const started = Date.now()
    logger.appendKeys({ pipeline: d.config.pipeline, partitions: describePartitions(event) })
    try {
      const result = await writeBatch(d, event, { writerId: context?.awsRequestId })
      record(result, Date.now() - started)
      logger.info('batch written', { result: summarize(result) })
      return summarize(result)
    } catch (err) {
      metrics.addMetric('WriteDuration', MetricUnit.Milliseconds, Date.now() - started)
      if (err instanceof BackpressureError) {
        metrics.addMetric('BackpressureRejections', MetricUnit.Count, 1)
        logger.warn('back pressure: the batch waits in Kafka', { error: err.message })
      } else if (err instanceof BatchDeferredError) {
        metrics.addMetric('BatchesDeferred', MetricUnit.Count, 1)
        logger.warn('part of the batch registered; the rest waits for the next delivery', { error: err.message })
      } else logger.error('batch failed', { error: err as Error })
      throw err
    }
  })
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics))
}

export interface WriterSummary {
  outcome: WriteResult['outcome']
  recordsIn: number
  deadLetters: number
  dropped: number
  belowCheckpoint: number
  tables: { table: string; rows: number; files: number }[]
}

function summarize(r: WriteResult): WriterSummary {
  return {
    outcome: r.outcome,
    recordsIn: r.recordsIn,
    deadLetters: r.deadLetters,
    dropped: r.dropped,
    belowCheckpoint: r.belowCheckpoint,
    tables: r.tables.map((t) => ({ table: t.table, rows: t.rows, files: t.files })),
  }
}

function record(r: WriteResult, ms: number): void {
  metrics.addMetric('RecordsIn', MetricUnit.Count, r.recordsIn)
  metrics.addMetric('RecordsWritten', MetricUnit.Count, r.tables.reduce((n, t) => n + t.rows, 0))
  metrics.addMetric('BytesWritten', MetricUnit.Bytes, r.bytesWritten)
  metrics.addMetric('FilesWritten', MetricUnit.Count, r.tables.reduce((n, t) => n + t.files, 0))
  metrics.addMetric('DeadLetters', MetricUnit.Count, r.deadLetters)
  metrics.addMetric('RecordsDropped', MetricUnit.Count, r.dropped)
  metrics.addMetric('RecordsBelowCheckpoint', MetricUnit.Count, r.belowCheckpoint)
  metrics.addMetric('FlushesBudget', MetricUnit.Count, r.flushes.budget)
  metrics.addMetric('FlushesTargetSize', MetricUnit.Count, r.flushes['target-size'])
  metrics.addMetric('FlushesEnd', MetricUnit.Count, r.flushes.end)
  metrics.addMetric('PeakBufferedBytes', MetricUnit.Bytes, r.peakBufferedBytes)
  metrics.addMetric('WriteDuration', MetricUnit.Milliseconds, ms)
}

/**
 * `{ "topic-0": "15..42" }` for the log, read from the raw event without decoding it (the
 * records are sorted by writeBatch, not here); never throws — a bad event is reported by writeBatch.
 */
function describePartitions(event: unknown): Record<string, string> | undefined {
  const records = (event as { records?: unknown } | null)?.records
  if (typeof records !== 'object' || records === null) return undefined
  const out: Record<string, string> = {}
  for (const [key, list] of Object.entries(records as Record<string, unknown>)) {
    if (!Array.isArray(list) || list.length === 0) continue
    const offsets = list.map((r) => String((r as { offset?: unknown })?.offset ?? '?'))
    out[key] = `${offsets[0]}..${offsets.at(-1)} (${list.length})`
  }
  return out
}

const build = (config: FloeConfig): Promise<WriterDeps> =>
  createWriterDeps(config, createClients({ region: config.region, maxAttempts: config.awsMaxAttempts }))
// Synchronous at import: a bad FLOE_* setting throws ConfigError during the init phase.
const lambdaConfig = process.env.AWS_LAMBDA_FUNCTION_NAME ? loadConfig(process.env) : undefined
const initial = lambdaConfig ? build(lambdaConfig) : undefined
// Keep an init failure from being an unhandled rejection before the first invocation awaits it.
initial?.catch(() => undefined)

export const handler = createWriterHandler(() => initial ?? build(loadConfig(process.env)))
