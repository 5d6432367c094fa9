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
import { describeEventPartitions } from '../lib/kafka/index.js'
import { emitMetrics, logger, metrics } from '../lib/log.js'
import { compileRoutes, createWriterDeps, reportWriteFailure, summarizeWrite, writeBatch, writeMetrics, type WriterDeps, type WriterSummary } from '../lib/writer/index.js'

export type WriterHandlerDeps = Omit<WriterDeps, 'router'> & { router?: WriterDeps['router'] }

/** A middy handler around writeBatch with logging and metrics. */
export function createWriterHandler(deps: WriterHandlerDeps | (() => Promise<WriterDeps>)) {
  let ready: Promise<WriterDeps> | undefined
  const resolve = () =>
    (ready ??= typeof deps === 'function' ? deps() : Promise.resolve({ ...deps, router: deps.router ?? compileRoutes(deps.config.routes, deps.config.limits) }))
  return middy(async (event: unknown, context: Context): Promise<WriterSummary> => {
    const d = await resolve()
    const started = Date.now()
    logger.appendKeys({ pipeline: d.config.pipeline, partitions: describeEventPartitions(event) })
    try {
      const result = await writeBatch(d, event, { writerId: context?.awsRequestId })
      emitMetrics(writeMetrics(result, Date.now() - started))
      const summary = summarizeWrite(result)
      logger.info('batch written', { result: summary })
      return summary
    } catch (err) {
      reportWriteFailure(err, Date.now() - started)
      throw err
    }
  })
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics))
}

const build = (config: FloeConfig): Promise<WriterDeps> =>
  createWriterDeps(config, createClients({ region: config.region, maxAttempts: config.awsMaxAttempts }))
// Synchronous at import: a bad FLOE_* setting throws ConfigError during the init phase.
const lambdaConfig = process.env.AWS_LAMBDA_FUNCTION_NAME ? loadConfig(process.env) : undefined
const initial = lambdaConfig ? build(lambdaConfig) : undefined
// Keep an init failure from being an unhandled rejection before the first invocation awaits it.
initial?.catch(() => undefined)

export const handler = createWriterHandler(() => initial ?? build(loadConfig(process.env)))
