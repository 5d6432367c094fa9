/**
 * Committer Lambda, run on a schedule (EventBridge Scheduler, every minute by default). Thin:
 * config, clients, FileIO and catalog once per cold start; each invocation runs lib/commit's
 * `runCommitter` over every table with pending batches. One table's failure is reported in the
 * result (and as metric and log), never thrown: the other tables are committed regardless, and
 * the next run resumes the failed one.
 *
 * `createCommitterHandler(deps)` builds the same handler against any dependencies (tests, the
 * chaos harness); lib/commit's `createCommitterDeps(config, clients)` builds the real ones.
 */
import middy from '@middy/core'
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware'
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware'
import type { Context } from 'aws-lambda'
import { createClients } from '../lib/clients.js'
import { createCommitterDeps, runCommitter, summarizeRun, type CommitterSummary, type CommitDeps } from '../lib/commit/index.js'
import { loadConfig, type FloeConfig } from '../lib/config.js'
import { logger, metrics } from '../lib/log.js'

export function createCommitterHandler(deps: CommitDeps | (() => Promise<CommitDeps>)) {
  let ready: Promise<CommitDeps> | undefined
  const resolve = () => (ready ??= typeof deps === 'function' ? deps() : Promise.resolve(deps))
  return middy(async (_event: unknown, context: Context): Promise<CommitterSummary> => {
    const d = await resolve()
    logger.appendKeys({ pipeline: d.config.pipeline })
    return summarizeRun(await runCommitter(d, { deadline: deadlineOf(context) }))
  })
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics))
}

/**
 * No new table commit starts in the last 20% of the invocation's time (at least 10 s): a commit cut
 * off by the timeout is safe (the protocol survives crashes) but leaves its lease held until it
 * expires, delaying that table by FLOE_LEASE_TTL_SECONDS.
 */
export function deadlineOf(context: Pick<Context, 'getRemainingTimeInMillis'> | undefined, now = Date.now()): number | undefined {
  const remaining = context?.getRemainingTimeInMillis?.()
  if (remaining === undefined || !Number.isFinite(remaining)) return undefined
  return now + remaining - Math.max(10_000, remaining * 0.2)
}

const build = (config: FloeConfig): Promise<CommitDeps> =>
  createCommitterDeps(config, createClients({ region: config.region, maxAttempts: config.awsMaxAttempts }))
// In Lambda, a bad FLOE_* setting fails the init phase with a ConfigError naming the key.
const lambdaConfig = process.env.AWS_LAMBDA_FUNCTION_NAME ? loadConfig(process.env) : undefined
const initial = lambdaConfig ? build(lambdaConfig) : undefined
initial?.catch(() => undefined)

export const handler = createCommitterHandler(() => initial ?? build(loadConfig(process.env)))
