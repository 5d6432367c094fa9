/**
 * Replay Lambda: `floe replay` in AWS, from the console or `aws lambda invoke` (no schedule: a
 * person runs it once the cause is fixed). Its own function, not the maintenance one: replay
 * writes tables (data files, registrations, new tables) and reads raw records, which orphan
 * cleanup must not be able to do. Thin: config and clients once per cold start; each invocation
 * runs lib/replay through the same writer dependencies as the writer Lambda.
 *
 * Event: `{ "replay": "failed-batches", "since"?: ISO time, "dryRun"?: bool }` or
 * `{ "replay": "dead-letters", "topic"?, "partition"?, "stage"?, "reasonMatch"?, "dryRun"? }`
 * (`"action": "replay"` is accepted and ignored). Returns the run's result (lib/replay).
 */
import middy from '@middy/core'
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware'
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware'
import { createClients } from '../lib/clients.js'
import { loadConfig, type FloeConfig } from '../lib/config.js'
import { ConfigError } from '../lib/errors.js'
import { emitMetrics, logger, metrics } from '../lib/log.js'
import { replayDeadLetters, replayFailedBatches, type ReplayDeps, type ReplayRunResult } from '../lib/replay/index.js'
import { createWriterDeps } from '../lib/writer/index.js'

export interface ReplayEvent {
  action?: 'replay'
  replay: 'failed-batches' | 'dead-letters'
  since?: string
  topic?: string
  partition?: number
  stage?: string
  reasonMatch?: string
  dryRun?: boolean
}

/** One replay run from an event; a bad option throws ConfigError naming it. */
export async function runReplayEvent(deps: ReplayDeps, event: unknown): Promise<ReplayRunResult> {
  const e = (event && typeof event === 'object' ? event : {}) as ReplayEvent
  const dryRun = e.dryRun === true
  if (e.replay === 'failed-batches') {
    const since = e.since === undefined ? undefined : new Date(e.since)
    if (since && Number.isNaN(since.getTime())) throw new ConfigError('since', `expected an ISO 8601 time; got ${JSON.stringify(e.since)}`)
    return replayFailedBatches(deps, { since, dryRun })
  }
  if (e.replay === 'dead-letters') {
    if (e.partition !== undefined && !(Number.isInteger(e.partition) && e.partition >= 0)) throw new ConfigError('partition', `expected a partition number; got ${JSON.stringify(e.partition)}`)
    let reasonMatch: RegExp | undefined
    try {
      reasonMatch = e.reasonMatch === undefined ? undefined : new RegExp(e.reasonMatch)
    } catch (err) {
      throw new ConfigError('reasonMatch', `not a regular expression: ${(err as Error).message}`)
    }
    return replayDeadLetters(deps, { topic: e.topic, partition: e.partition, stage: e.stage, reasonMatch, dryRun })
  }
  throw new ConfigError('replay', `expected "failed-batches" or "dead-letters"; got ${JSON.stringify(e.replay)}`)
}

export function createReplayHandler(deps: ReplayDeps | (() => Promise<ReplayDeps>)) {
  let ready: Promise<ReplayDeps> | undefined
  const resolve = () => (ready ??= typeof deps === 'function' ? deps() : Promise.resolve(deps))
  return middy(async (event: unknown): Promise<ReplayRunResult> => {
    const d = await resolve()
    logger.appendKeys({ pipeline: d.config.pipeline })
    const run = await runReplayEvent(d, event)
    emitMetrics({ ReplayedSources: run.replayed, ReplayFailures: run.failures, ReplayedRows: run.rows })
    logger.info('replay run', { kind: run.kind, dryRun: run.dryRun, sources: run.sources, replayed: run.replayed, alreadyReplayed: run.alreadyReplayed, failures: run.failures, rows: run.rows, deadLetters: run.deadLetters })
    return run
  })
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics))
}

const build = (config: FloeConfig): Promise<ReplayDeps> => createWriterDeps(config, createClients({ region: config.region, maxAttempts: config.awsMaxAttempts }))
// In Lambda, a bad FLOE_* setting fails the init phase with a ConfigError naming the key.
const lambdaConfig = process.env.AWS_LAMBDA_FUNCTION_NAME ? loadConfig(process.env) : undefined
const initial = lambdaConfig ? build(lambdaConfig) : undefined
initial?.catch(() => undefined)

export const handler = createReplayHandler(() => initial ?? build(loadConfig(process.env)))
