/**
 * Shared bench plumbing: machine details, medians, local endpoints and request counting.
 * Not a test: used by `npm run bench` (test/bench/run.ts) and the smoke test.
 */
import { randomUUID } from 'node:crypto'
import { cpus, loadavg, totalmem } from 'node:os'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { S3Client } from '@aws-sdk/client-s3'
import { createClients, type AwsClients } from '../../lib/clients.js'
import { LOCAL_CREDENTIALS, LOCAL_REGION, startLocalEndpoints, type LocalEndpoints } from '../../lib/local/endpoints.js'
import { ensureCatalogTable, ensureControlTable } from '../../lib/local/init.js'
import { logger } from '../../lib/log.js'

export interface Machine {
  cpuModel: string
  cores: number
  memoryGiB: number
  node: string
  platform: string
  date: string
  loadAverage: number[]
}

export function machine(): Machine {
  return {
    cpuModel: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    date: new Date().toISOString(),
    loadAverage: loadavg().map((l) => Math.round(l * 100) / 100),
  }
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

export const round = (x: number, digits = 0): number => {
  const f = 10 ** digits
  return Math.round(x * f) / f
}

/** Local DynamoDB + S3 (started unless the environment names endpoints), with clients on them. */
export async function localAws(): Promise<{ endpoints: LocalEndpoints; clients: AwsClients }> {
  const endpoints = await startLocalEndpoints()
  // s3rver only accepts its own key pair; DynamoDB Local accepts any.
  if (endpoints.started.length > 0) {
    process.env.AWS_REGION ??= LOCAL_REGION
    process.env.AWS_ACCESS_KEY_ID ??= LOCAL_CREDENTIALS.accessKeyId
    process.env.AWS_SECRET_ACCESS_KEY ??= LOCAL_CREDENTIALS.secretAccessKey
  }
  process.env.AWS_ENDPOINT_URL_S3 = endpoints.s3
  process.env.AWS_ENDPOINT_URL_DYNAMODB = endpoints.dynamodb
  const clients = createClients({ endpoints: { s3: endpoints.s3, dynamodb: endpoints.dynamodb }, maxAttempts: 3 })
  return { endpoints, clients }
}

/** Per-command request counts, and DynamoDB capacity units as the server reports them. */
export class RequestCounter {
  readonly counts = new Map<string, number>()
  wcu = 0
  rcu = 0

  reset(): void {
    this.counts.clear()
    this.wcu = 0
    this.rcu = 0
  }

  total(prefix: string): number {
    let n = 0
    for (const [k, v] of this.counts) if (k.startsWith(prefix)) n += v
    return n
  }

  snapshot(): Record<string, number> {
    return Object.fromEntries([...this.counts].sort(([a], [b]) => a.localeCompare(b)))
  }

  /** Count every request sent through these clients (`s3:PutObject`, `ddb:TransactWriteItems`...). */
  attach(clients: { s3: S3Client; ddb: DynamoDBClient; doc?: { middlewareStack: unknown } }): void {
    const stacks: [string, { add: (...a: never[]) => void }][] = [
      ['s3', clients.s3.middlewareStack as never],
      ['ddb', clients.ddb.middlewareStack as never],
    ]
    if (clients.doc && clients.doc.middlewareStack !== clients.ddb.middlewareStack) stacks.push(['ddb', clients.doc.middlewareStack as never])
    for (const [service, stack] of stacks) {
      const count =
        (next: (args: unknown) => Promise<{ output: Record<string, unknown> }>, context: { commandName?: string }) =>
        async (args: { input?: Record<string, unknown> }) => {
          const name = `${service}:${(context.commandName ?? 'unknown').replace(/Command$/, '')}`
          this.counts.set(name, (this.counts.get(name) ?? 0) + 1)
          // Ask DynamoDB for the capacity it charged (DynamoDB Local computes it like the service).
          if (service === 'ddb' && args.input && typeof args.input === 'object' && !('ReturnConsumedCapacity' in args.input)) {
            args.input.ReturnConsumedCapacity = 'TOTAL'
          }
          if (service === 'ddb') this.wcu += estimateWriteUnits(name, args.input)
          const out = await next(args)
          if (service === 'ddb') this.#capacity(name, out.output?.ConsumedCapacity)
          return out
        }
      stack.add(count as never, { step: 'initialize', name: `benchCount-${service}-${Math.random()}` } as never)
    }
  }

  /**
   * Read units as DynamoDB Local reports them (ReturnConsumedCapacity TOTAL gives CapacityUnits
   * only). Write units are estimated from the request instead (estimateWriteUnits): DynamoDB
   * Local reports a TransactWriteItems of 100 items as a few units, the service charges ≥ 200.
   */
  #capacity(command: string, c: unknown): void {
    if (/:(Put|Update|Delete|BatchWrite|TransactWrite)/.test(command)) return
    const list = Array.isArray(c) ? c : c ? [c] : []
    for (const x of list as { CapacityUnits?: number }[]) this.rcu += x.CapacityUnits ?? 0
  }
}

/** Wall-clock milliseconds of an async function. */
export async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now()
  const out = await f()
  return [out, performance.now() - t0]
}

const jsonSize = (v: unknown): number => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x instanceof Uint8Array ? 'x'.repeat(x.byteLength) : x))?.length ?? 0
const kb = (v: unknown) => Math.max(1, Math.ceil(jsonSize(v) / 1024))

/**
 * On-demand write request units a write would be charged on the service: 1 per KB of item
 * (the item's JSON size as an upper estimate; 1 KB assumed for updates and deletes, whose item
 * size the request does not show), doubled inside transactions.
 */
export function estimateWriteUnits(command: string, input: Record<string, unknown> | undefined): number {
  if (!input) return 0
  switch (command.replace(/^ddb:/, '')) {
    case 'PutItem':
    case 'Put':
      return kb(input.Item)
    case 'UpdateItem':
    case 'DeleteItem':
    case 'Update':
    case 'Delete':
      return 1
    case 'BatchWriteItem': {
      let n = 0
      for (const reqs of Object.values((input.RequestItems ?? {}) as Record<string, { PutRequest?: { Item: unknown } }[]>))
        for (const r of reqs) n += r.PutRequest ? kb(r.PutRequest.Item) : 1
      return n
    }
    case 'TransactWriteItems': {
      let n = 0
      for (const it of (input.TransactItems ?? []) as Record<string, { Item?: unknown }>[]) {
        if (it.Put) n += 2 * kb(it.Put.Item)
        else n += 2
      }
      return n
    }
    default:
      return 0
  }
}

/**
 * Local endpoints, fresh control and catalog tables named `<prefix>-control-<id>` /
 * `<prefix>-iceberg-<id>`, then `fn`; afterwards the clients are destroyed and the endpoints stopped.
 * Quiets the handlers' logs (children read POWERTOOLS_LOG_LEVEL) unless BENCH_VERBOSE is set.
 */
export async function withBenchTables<T>(prefix: string, fn: (clients: AwsClients, tables: { control: string; catalog: string }) => Promise<T>): Promise<T> {
  process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR'
  if (!process.env.BENCH_VERBOSE) logger.setLogLevel('ERROR')
  const { endpoints, clients } = await localAws()
  const id = randomUUID().slice(0, 8)
  const tables = { control: `${prefix}-control-${id}`, catalog: `${prefix}-iceberg-${id}` }
  try {
    await Promise.all([ensureControlTable(clients.ddb, tables.control), ensureCatalogTable(clients.ddb, tables.catalog)])
    return await fn(clients, tables)
  } finally {
    clients.ddb.destroy()
    clients.s3.destroy()
    // endpoints.stop() waits for unref'd children to exit: with nothing else holding the event
    // loop, Node would exit 13 (unsettled top-level await) before they do. Hold it, briefly.
    const hold = setInterval(() => undefined, 1000)
    await Promise.race([endpoints.stop(), new Promise((r) => setTimeout(r, 15_000))])
    clearInterval(hold)
  }
}

/**
 * A full garbage collection, not timed, before each measured pass, so each pass starts from a
 * heap without the garbage of the one before it — a Lambda process runs the writer alone. The
 * encode path's pass leaves a 1M-record heap behind: without this, the two-worker rows (run after
 * the throughput rows) measured the narrow 1M pass at 4.73 s of CPU in the full bench, against
 * 3.72 s in a process of their own. `gc` without --expose-gc on the command line: the flag set at
 * run time, the function taken from a new context.
 */
export function collectGarbage(): void {
  fullGc ??= exposedGc()
  fullGc()
}

let fullGc: (() => void) | undefined
function exposedGc(): () => void {
  setFlagsFromString('--expose-gc')
  return runInNewContext('gc') as () => void
}
