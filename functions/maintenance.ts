/**
 * Maintenance Lambda, run on a schedule (EventBridge Scheduler, hourly by default). Thin: config,
 * clients, FileIO and catalog once per cold start; each invocation runs lib/maintenance's
 * `runMaintenance`: compaction, manifest rewrite, snapshot expiry (under the committer's per-table lease) and
 * orphan cleanup (DESIGN.md invariants 7 and 10) for every table this pipeline writes
 * — tables its committer has ever leased or with pending batches, NOT every table of the
 * catalog (other engines' tables are left alone) — then the spilled file lists. Tables are
 * cleaned in parallel (FLOE_COMMIT_CONCURRENCY); one table's failure is reported in the result,
 * log and `MaintenanceFailures` metric, never thrown, so the others are cleaned regardless.
 *
 * The event may narrow or rehearse a run: `{ "tables": ["ns.t"], "dryRun": true,
 * "olderThanHours": 48, "tasks": ["compact", "manifests", "expire", "orphans"] }` (all optional: the default
 * is every task; the horizon is never shorter than one hour here). Compaction starts no new group
 * in the last 20 % of the invocation (at least 30 s), so a unit never runs into the timeout.
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
import { createControlContext } from '../lib/control/index.js'
import { createFileIO } from '../lib/io/index.js'
import { logger, metrics } from '../lib/log.js'
import { eventOptions, maintenanceDeadline, summarizeMaintenance, type MaintenanceSummary, runMaintenance, type MaintenanceDeps } from '../lib/maintenance/index.js'

export async function createMaintenanceDeps(config: FloeConfig, clients: AwsClients): Promise<MaintenanceDeps> {
  const io = createFileIO(clients)
  return { config, io, catalog: await createCatalog(config, clients, io), control: createControlContext(config, clients.doc, io) }
}

export function createMaintenanceHandler(deps: MaintenanceDeps | (() => Promise<MaintenanceDeps>)) {
  let ready: Promise<MaintenanceDeps> | undefined
  const resolve = () => (ready ??= typeof deps === 'function' ? deps() : Promise.resolve(deps))
  return middy(async (event: unknown, context?: { getRemainingTimeInMillis?: () => number }): Promise<MaintenanceSummary> => {
    const d = await resolve()
    logger.appendKeys({ pipeline: d.config.pipeline })
    const opts = eventOptions(event)
    const deadline = maintenanceDeadline(context?.getRemainingTimeInMillis?.())
    return summarizeMaintenance(await runMaintenance(d, { ...opts, deadline }), opts.dryRun)
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

export const handler = createMaintenanceHandler(() => initial ?? build(loadConfig(process.env)))
