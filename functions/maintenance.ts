/**
 * Maintenance Lambda, run on a schedule (EventBridge Scheduler, daily by default). Thin: config,
 * clients, FileIO and catalog once per cold start; each invocation runs lib/maintenance's
 * `runMaintenance`: orphan cleanup (DESIGN.md invariant 7) for every table this pipeline writes
 * — tables its committer has ever leased or with pending batches, NOT every table of the
 * catalog (other engines' tables are left alone) — then the spilled file lists. Tables are
 * cleaned in parallel (FLOE_COMMIT_CONCURRENCY); one table's failure is reported in the result,
 * log and `MaintenanceFailures` metric, never thrown, so the others are cleaned regardless.
 *
 * The event may narrow or rehearse a run: `{ "tables": ["ns.t"], "dryRun": true,
 * "olderThanHours": 48 }` (all optional; the horizon is never shorter than one hour here).
 *
 * `{ "action": "replay", "replay": "failed-batches" | "dead-letters", ... }` runs `floe replay`
 * instead (lib/replay), from the console or `aws lambda invoke`: options `since` (ISO time, failed
 * batches), `topic`, `partition`, `stage`, `reasonMatch` (dead letters), `dryRun`.
 *
 * `createMaintenanceHandler(deps)` builds the same handler against any dependencies (tests, the
 * chaos harness); `createMaintenanceDeps(config, clients)` builds the real ones.
 */
import middy from '@middy/core'
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware'
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware'
import { createCatalog } from '../lib/catalog/index.js'
import { createClients, type AwsClients } from '../lib/clients.js'
import { loadConfig, type FloeConfig } from '../lib/config.js'
import { createControlContext } from '../lib/control/context.js'
import { createFileIO } from '../lib/io/index.js'
import { logger, metrics } from '../lib/log.js'
import { runMaintenance, type MaintenanceRunResult } from '../lib/maintenance/run.js'
import type { MaintenanceDeps } from '../lib/maintenance/types.js'
import { replayDeadLetters, replayFailedBatches, type ReplayDeps, type ReplayRunResult } from '../lib/replay/index.js'
import { ConfigError } from '../lib/errors.js'
import { createWriterDeps } from './writer.js'

export async function createMaintenanceDeps(config: FloeConfig, clients: AwsClients): Promise<MaintenanceDeps> {
  const io = createFileIO(clients)
  return { config, io, catalog: await createCatalog(config, clients, io), control: createControlContext(config, clients.doc, io) }
}

export interface MaintenanceEvent {
  tables?: string[]
  dryRun?: boolean
  olderThanHours?: number
}

export interface MaintenanceSummary {
  tables: number
  failures: number
  orphans: number
  deleted: number
  dryRun: boolean
  results: { table: string; status: string; scanned?: number; orphans?: number; deleted?: number; young?: number; error?: string }[]
}

export function summarizeMaintenance(run: MaintenanceRunResult, dryRun: boolean): MaintenanceSummary {
  const rows = [...run.results]
  if (run.spills || run.spillError) rows.push({ table: '_spill', status: run.spillError ? 'failed' : 'cleaned', orphans: run.spills, error: run.spillError })
  return {
    tables: run.tables,
    failures: run.failures,
    orphans: run.orphans,
    deleted: run.deleted,
    dryRun,
    results: rows.map((r) => ({
      table: r.table,
      status: r.status,
      ...(r.orphans ? { scanned: r.orphans.scanned, orphans: r.orphans.orphans.length, deleted: r.orphans.deleted, young: r.orphans.young } : {}),
      ...(r.error ? { error: `${r.error.name}: ${r.error.message}` } : {}),
    })),
  }
}

const MIN_EVENT_HORIZON_HOURS = 1

/** Options from a scheduled (`{}`) or hand-made event; anything else in the event is ignored. */
export function eventOptions(event: unknown): { tables?: string[]; dryRun: boolean; olderThanMs?: number } {
  const e = (event && typeof event === 'object' ? event : {}) as MaintenanceEvent
  const tables = Array.isArray(e.tables) && e.tables.every((t) => typeof t === 'string') ? e.tables : undefined
  const hours = typeof e.olderThanHours === 'number' && Number.isFinite(e.olderThanHours) ? Math.max(MIN_EVENT_HORIZON_HOURS, e.olderThanHours) : undefined
  return { tables, dryRun: e.dryRun === true, olderThanMs: hours === undefined ? undefined : hours * 3_600_000 }
}

export interface ReplayEvent {
  action: 'replay'
  replay: 'failed-batches' | 'dead-letters'
  since?: string
  topic?: string
  partition?: number
  stage?: string
  reasonMatch?: string
  dryRun?: boolean
}

const isReplayEvent = (e: unknown): e is ReplayEvent => typeof e === 'object' && e !== null && (e as { action?: unknown }).action === 'replay'

/** A replay action's run; a bad option throws ConfigError naming it. */
export async function runReplayEvent(deps: ReplayDeps, e: ReplayEvent): Promise<ReplayRunResult> {
  const dryRun = e.dryRun === true
  if (e.replay === 'failed-batches') {
    const since = e.since === undefined ? undefined : new Date(e.since)
    if (since && Number.isNaN(since.getTime())) throw new ConfigError('since', `expected an ISO 8601 time; got ${JSON.stringify(e.since)}`)
    return replayFailedBatches(deps, { since, dryRun })
  }
  if (e.replay === 'dead-letters') {
    if (e.partition !== undefined && !(Number.isInteger(e.partition) && e.partition >= 0)) throw new ConfigError('partition', `expected a partition number; got ${JSON.stringify(e.partition)}`)
    return replayDeadLetters(deps, { topic: e.topic, partition: e.partition, stage: e.stage, reasonMatch: e.reasonMatch === undefined ? undefined : new RegExp(e.reasonMatch), dryRun })
  }
  throw new ConfigError('replay', `expected "failed-batches" or "dead-letters"; got ${JSON.stringify((e as { replay?: unknown }).replay)}`)
}

/** The replay action's handler (the exported `handler` sends `{ "action": "replay" }` events here). */
export function createReplayHandler(deps: () => Promise<ReplayDeps>) {
  let ready: Promise<ReplayDeps> | undefined
  return middy(async (event: ReplayEvent): Promise<ReplayRunResult> => {
    const d = await (ready ??= deps())
    logger.appendKeys({ pipeline: d.config.pipeline, action: 'replay' })
    const run = await runReplayEvent(d, event)
    logger.info('replay run', { kind: run.kind, sources: run.sources, replayed: run.replayed, failures: run.failures, rows: run.rows, deadLetters: run.deadLetters })
    return run
  })
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics))
}

export function createMaintenanceHandler(deps: MaintenanceDeps | (() => Promise<MaintenanceDeps>)) {
  let ready: Promise<MaintenanceDeps> | undefined
  const resolve = () => (ready ??= typeof deps === 'function' ? deps() : Promise.resolve(deps))
  return middy(async (event: unknown): Promise<MaintenanceSummary> => {
    const d = await resolve()
    logger.appendKeys({ pipeline: d.config.pipeline })
    const opts = eventOptions(event)
    return summarizeMaintenance(await runMaintenance(d, opts), opts.dryRun)
  })
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics))
}

const build = (config: FloeConfig): Promise<MaintenanceDeps> =>
  createMaintenanceDeps(config, createClients({ region: config.region, maxAttempts: config.awsMaxAttempts }))
// In Lambda, a bad FLOE_* setting fails the init phase with a ConfigError naming the key.
const lambdaConfig = process.env.AWS_LAMBDA_FUNCTION_NAME ? loadConfig(process.env) : undefined
const initial = lambdaConfig ? build(lambdaConfig) : undefined
initial?.catch(() => undefined)

const maintenanceHandler = createMaintenanceHandler(() => initial ?? build(loadConfig(process.env)))
const replayHandler = createReplayHandler(() => {
  const config = lambdaConfig ?? loadConfig(process.env)
  return createWriterDeps(config, createClients({ region: config.region, maxAttempts: config.awsMaxAttempts }))
})
export const handler = (event: unknown, context: Parameters<typeof maintenanceHandler>[1]) =>
  isReplayEvent(event) ? replayHandler(event, context) : maintenanceHandler(event, context)
