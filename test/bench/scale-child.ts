/**
 * One process of writer "containers" for the scale load test (scale.ts): runs BENCH_ROUNDS rounds,
 * each one writer invocation per owned partition, all owned partitions at once (like concurrent
 * Lambdas), through the real writer path, with every AWS request counted per DynamoDB key and S3
 * prefix. Prints one JSON line: the counts, invocations, failures and CPU time.
 */
import { loadConfig } from '../../lib/config.js'
import { createWriterDeps } from '../../lib/writer/deps.js'
import { buildEvent, type LogRecord } from '../../lib/local/kafka-log.js'
import { writeBatch } from '../../lib/writer/pipeline.js'
import { countedClients, dumpCounter, RequestCounter } from '../helpers/request-counter.js'
import { narrowRecord } from './data.js'

const env = process.env
const partitions = env.BENCH_PARTITIONS!.split(',').map(Number)
const rounds = Number(env.BENCH_ROUNDS)
const records = Number(env.BENCH_RECORDS)
const counter = new RequestCounter(Number(env.BENCH_EPOCH))
const clients = countedClients(counter, { s3: env.AWS_ENDPOINT_URL_S3!, dynamodb: env.AWS_ENDPOINT_URL_DYNAMODB! })
const config = loadConfig({}, JSON.parse(env.BENCH_ENV!) as Record<string, string>)
const deps = await createWriterDeps(config, clients)
const encoder = new TextEncoder()

let invocations = 0
let failures = 0
const errors = new Set<string>()
const cpu = process.cpuUsage()
const t0 = performance.now()
for (let round = 0; round < rounds; round++) {
  await Promise.all(
    partitions.map(async (p) => {
      const log: LogRecord[] = Array.from({ length: records }, (_, i) => {
        const n = round * records + i
        return { topic: 'events', partition: p, offset: BigInt(n), timestamp: 1_714_557_600_000 + n, key: null, value: encoder.encode(JSON.stringify(narrowRecord(p * 1_000_000 + n))) }
      })
      try {
        const r = await writeBatch(deps, buildEvent(log) as never)
        if (r.outcome === 'registered') invocations++
        else errors.add(`outcome ${r.outcome}`)
      } catch (err) {
        failures++
        errors.add((err as Error).message.slice(0, 200))
      }
    }),
  )
}
const used = process.cpuUsage(cpu)
process.stdout.write(
  `${JSON.stringify({ dump: dumpCounter(counter), invocations, failures, errors: [...errors], cpuMs: (used.user + used.system) / 1000, wallMs: performance.now() - t0 })}\n`,
)
process.exit(0)
