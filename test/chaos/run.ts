/**
 * `npm run chaos -- --schedules N --seed S [--only I] [--parallel L] [--partition-by 'hour(ts)']`:
 * run N fault-injection schedules against DynamoDB Local and s3rver, over L lanes (default: cores
 * + 1, at most 4), and print what was injected and what the independent reader found. Tables are
 * unpartitioned in even lanes and partitioned by `hour(ts)` in odd ones (a schedule's records span
 * 70 minutes: a batch's rows fall in one hour or across two), or by `--partition-by` in every lane.
 * Exits non-zero if any record was lost or duplicated; a failure prints its seed and schedule
 * index so it can be replayed exactly with --only.
 */
// oxlint-disable-next-line no-unassigned-import -- imported for its side effect, before lib/log.js builds Metrics
import './quiet.js'
import { availableParallelism } from 'node:os'
import { parseArgs } from 'node:util'
import { createClients } from '../../lib/clients.js'
import { logger } from '../../lib/log.js'
import { LOCAL_CREDENTIALS, LOCAL_REGION, startLocalEndpoints } from '../../lib/local/endpoints.js'
import { ensureBucket, ensureCatalogTable, ensureControlTable } from '../../lib/local/init.js'
import { FAULTS, Fleet, runSchedule, type HarnessEnv, type ScheduleResult } from './harness.js'
import { makeForeignAppender } from './foreign.js'

// Orphan cleanup logs every table at INFO in this process: keep the output to the harness's own lines.
logger.setLogLevel('WARN')

const { values } = parseArgs({
  options: {
    schedules: { type: 'string', default: '100' },
    seed: { type: 'string', default: '1' },
    only: { type: 'string' },
    // Start at this index (runs from..schedules-1): a long run in pieces, each piece a fresh
    // process, so no lane accumulates every earlier schedule's tables.
    from: { type: 'string', default: '0' },
    // Lanes of containers: schedules spend much of their time waiting on the emulators, so one
    // lane more than there are cores keeps the CPUs busy (3 on a 2-core machine).
    parallel: { type: 'string', default: String(Math.min(4, availableParallelism() + 1)) },
    'partition-by': { type: 'string', multiple: true },
  },
})
const seed = Number(values.seed)
const count = Number(values.schedules)
const from = Number(values.from)
const indexes = values.only !== undefined ? [Number(values.only)] : Array.from({ length: Math.max(0, count - from) }, (_, i) => from + i)

const endpoints = await startLocalEndpoints()
// Local emulators: s3rver only accepts its own key pair; DynamoDB Local accepts any.
process.env.AWS_REGION ??= LOCAL_REGION
process.env.AWS_ACCESS_KEY_ID ??= LOCAL_CREDENTIALS.accessKeyId
process.env.AWS_SECRET_ACCESS_KEY ??= LOCAL_CREDENTIALS.secretAccessKey
const clients = createClients({ endpoints: { s3: endpoints.s3, dynamodb: endpoints.dynamodb }, maxAttempts: 3 })
const stamp = Date.now().toString(36)
const env: HarnessEnv = {
  ddb: clients.ddb,
  s3: clients.s3,
  endpoints: { s3: endpoints.s3, dynamodb: endpoints.dynamodb },
  pipeline: `chaos${stamp}`,
  controlTable: `chaos-control-${stamp}`,
  catalogTable: `chaos-iceberg-${stamp}`,
  bucket: `chaos-${stamp}`,
}
await Promise.all([ensureControlTable(clients.ddb, env.controlTable), ensureCatalogTable(clients.ddb, env.catalogTable), ensureBucket(clients.s3, env.bucket)])
env.foreignAppend = makeForeignAppender(env, clients)

// Independent lanes: each has its own containers and its own pipeline (so its committers see
// only its own tables); schedules are spread over the lanes.
const lanes = Array.from({ length: Math.max(1, Number(values.parallel)) }, (_, i) => {
  const partitionBy = values['partition-by'] ?? (i % 2 === 1 ? ['hour(ts)'] : [])
  const laneEnv = { ...env, pipeline: `${env.pipeline}l${i}`, partitionBy }
  return { env: laneEnv, fleet: new Fleet(laneEnv) }
})
let exitCode = 0
const totals = { schedules: 0, produced: 0, inTable: 0, inDeadLetters: 0, lost: 0, duplicated: 0, both: 0, offsetMismatches: 0, orphansFound: 0, orphansLeft: 0, dangling: 0, foreignRows: 0, invocations: 0 }
/** Records the writer's scanner lane read, in unpartitioned and in partitioned lanes. */
const scanned = { unpartitioned: 0, partitioned: 0 }
const batches = { count: 0, payload: 0, window: 0 }
const injected: Record<string, number> = Object.fromEntries(FAULTS.map((f) => [f, 0]))
const started = Date.now()
const stop = async () => {
  await Promise.all(lanes.map((l) => l.fleet.stop().catch(() => undefined)))
  await endpoints.stop()
}
process.once('SIGINT', () => void stop().then(() => process.exit(130)))
try {
  await Promise.all(lanes.map((l) => l.fleet.start()))
  const queue = [...indexes]
  /** The command that runs schedule `index` again, in a lane like the one it ran in. */
  const replay = (index: number, partitionBy: string[]) => `replay: npm run chaos -- --seed ${seed} --only ${index}${partitionBy.map((p) => ` --partition-by '${p}'`).join('')}`
  const record = (index: number, result: ScheduleResult, partitionBy: string[]) => {
    totals.schedules++
    totals.produced += result.verdict.produced
    totals.inTable += result.verdict.inTable
    totals.inDeadLetters += result.verdict.inDeadLetters
    totals.lost += result.verdict.lost.length
    totals.duplicated += result.verdict.duplicated.length
    totals.both += result.verdict.both.length
    totals.offsetMismatches += result.verdict.offsetMismatches.length
    totals.orphansFound += result.orphansFound
    totals.orphansLeft += result.orphansLeft
    totals.dangling += result.dangling
    totals.foreignRows += result.foreignRows
    totals.invocations += result.invocations
    scanned[partitionBy.length ? 'partitioned' : 'unpartitioned'] += result.scanned
    for (const [k, n] of Object.entries(result.batches)) batches[k as keyof typeof batches] += n
    for (const [f, n] of Object.entries(result.injected)) injected[f] = (injected[f] ?? 0) + (n ?? 0)
    if (!result.ok) {
      exitCode = 1
      console.error(`FAILED seed=${seed} index=${index} faults=${result.faults.join(',')} partitionBy=${JSON.stringify(partitionBy)}`)
      console.error(JSON.stringify({ lost: result.verdict.lost.slice(0, 10), duplicated: result.verdict.duplicated.slice(0, 10), both: result.verdict.both.slice(0, 10), offsets: result.verdict.offsetMismatches, orphansLeft: result.orphansLeft, dangling: result.dangling }, null, 2))
      console.error(replay(index, partitionBy))
    }
    if (totals.schedules % 10 === 0 || indexes.length < 10) {
      const s = ((Date.now() - started) / 1000).toFixed(0)
      console.log(`[${s}s] ${totals.schedules}/${indexes.length} schedules, ${totals.produced} records, lost ${totals.lost}, duplicated ${totals.duplicated}`)
    }
  }
  await Promise.all(
    lanes.map(async ({ env: laneEnv, fleet }) => {
      for (let index = queue.shift(); index !== undefined; index = queue.shift()) {
        try {
          record(index, await runSchedule(laneEnv, fleet, seed, index), laneEnv.partitionBy)
        } catch (err) {
          console.error(`schedule seed=${seed} index=${index} crashed: ${(err as Error).stack}`)
          console.error(replay(index, laneEnv.partitionBy))
          exitCode = 1
        }
      }
    }),
  )
} finally {
  await stop()
}
console.log('\nchaos summary')
console.log(`  seed                 ${seed}`)
console.log(`  schedules run        ${totals.schedules}`)
console.log(`  invocations          ${totals.invocations}`)
console.log(`  batches closed by    count ${batches.count}, window ${batches.window}, payload ${batches.payload}`)
console.log(`  records produced     ${totals.produced}`)
console.log(`  in table             ${totals.inTable}`)
console.log(`  in dead-letter store ${totals.inDeadLetters}`)
console.log(`  lost                 ${totals.lost}`)
console.log(`  duplicated           ${totals.duplicated}`)
console.log(`  in both              ${totals.both}`)
console.log(`  offset mismatches    ${totals.offsetMismatches}`)
console.log(`  orphan files found   ${totals.orphansFound} (left after orphan cleanup: ${totals.orphansLeft})`)
console.log(`  dangling references  ${totals.dangling} (files a kept snapshot names that do not exist)`)
console.log(`  foreign rows         ${totals.foreignRows}`)
console.log(`  records scanned      ${scanned.unpartitioned} in unpartitioned lanes, ${scanned.partitioned} in partitioned ones (the writer's scanner lane)`)
console.log(`  elapsed              ${((Date.now() - started) / 1000).toFixed(1)} s`)
console.log('  faults injected by kind')
for (const f of FAULTS) console.log(`    ${f.padEnd(30)} ${injected[f]}`)
process.exit(exitCode)
