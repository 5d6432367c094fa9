/**
 * Lambda-container stand-ins: each is a child process running test/chaos/worker.ts behind its own
 * pair of fault proxies, so the harness can tell which container sent a request and kill exactly
 * that one at the moment a request is seen.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { copyFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { WORKER_SCRIPT } from '../../lib/writer/workers/pool.js'
import { FaultProxy, type Rule } from './proxy.js'

const SOURCE = fileURLToPath(new URL('./worker.ts', import.meta.url))
const BUNDLE = fileURLToPath(new URL('../../node_modules/.cache/floe-chaos/worker.mjs', import.meta.url))
let bundled: Promise<string> | undefined

/** Longest one container start or one invocation may take before the step fails (not hangs). */
const STEP_TIMEOUT_MS = Number(process.env.CHAOS_STEP_TIMEOUT_MS ?? 120_000)

/**
 * Containers start from an esbuild bundle of the worker (our TypeScript compiled once, packages
 * loaded from node_modules), so a cold start after a kill costs what a Lambda cold start costs,
 * not a TypeScript compile.
 */
export function workerBundle(): Promise<string> {
  bundled ??= build({
    entryPoints: [SOURCE],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outfile: BUNDLE,
    logLevel: 'warning',
  }).then(() => {
    // FLOE_WRITER_WORKERS: the writer's encode worker beside the bundle (packages load from node_modules, so as it is).
    copyFileSync(WORKER_SCRIPT, join(dirname(BUNDLE), 'encode-worker.cjs'))
    return BUNDLE
  })
  return bundled
}

export interface InvokeResult {
  ok: boolean
  /** The container was killed before answering. */
  killed?: boolean
  result?: unknown
  error?: string
  retryable?: boolean
}

export class Container {
  private child?: ChildProcess
  private nextId = 1
  private readonly waiting = new Map<number, (r: InvokeResult) => void>()
  readonly s3Proxy: FaultProxy
  readonly ddbProxy: FaultProxy
  invocations = 0
  kills = 0

  constructor(
    readonly kind: 'writer' | 'committer' | 'maintenance' | 'replay',
    private readonly env: Record<string, string>,
    upstream: { s3: string; dynamodb: string },
  ) {
    this.s3Proxy = new FaultProxy(upstream.s3, 's3')
    this.ddbProxy = new FaultProxy(upstream.dynamodb, 'dynamodb')
  }

  async start(): Promise<void> {
    const [s3, ddb] = await Promise.all([this.s3Proxy.start(), this.ddbProxy.start()])
    this.endpoints = { s3, ddb }
    await this.spawn()
  }

  private endpoints?: { s3: string; ddb: string }

  private async spawn(): Promise<void> {
    const child = fork(await workerBundle(), [this.kind], {
      env: {
        ...process.env,
        ...this.env,
        AWS_ENDPOINT_URL: undefined,
        AWS_ENDPOINT_URL_S3: this.endpoints!.s3,
        AWS_ENDPOINT_URL_DYNAMODB: this.endpoints!.ddb,
        POWERTOOLS_LOG_LEVEL: process.env.CHAOS_LOG_LEVEL ?? 'SILENT',
        POWERTOOLS_METRICS_DISABLED: 'true',
      } as NodeJS.ProcessEnv,
      stdio: ['ignore', process.env.CHAOS_VERBOSE ? 'inherit' : 'ignore', process.env.CHAOS_VERBOSE ? 'inherit' : 'pipe', 'ipc'],
    })
    let stderr = ''
    child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)))
    // A send on a channel that closed under us (the child was just killed) reports here; the
    // exit handler below answers the invocations that were waiting.
    child.on('error', () => undefined)
    // Death is handled from the first moment, not only after "ready": a container killed during
    // its cold start must not stay behind as this.child, or the next invoke() would wait forever.
    child.once('exit', () => this.onDeath(child))
    this.child = child
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL')
        reject(new Error(`${this.kind} container was not ready within ${STEP_TIMEOUT_MS} ms (CHAOS_STEP_TIMEOUT_MS): ${stderr}`))
      }, STEP_TIMEOUT_MS)
      const onExit = (code: number | null, signal: string | null) => {
        clearTimeout(timer)
        reject(new Error(`${this.kind} container exited (${code ?? signal}) before it was ready: ${stderr}`))
      }
      child.once('exit', onExit)
      child.on('message', (msg: { ready?: boolean; id?: number } & InvokeResult) => {
        if (msg.ready) {
          clearTimeout(timer)
          child.off('exit', onExit)
          resolve()
          return
        }
        const done = this.waiting.get(msg.id!)
        this.waiting.delete(msg.id!)
        done?.({ ok: msg.ok, result: msg.result, error: msg.error, retryable: msg.retryable })
      })
    })
  }

  private onDeath(child: ChildProcess): void {
    if (this.child !== child) return
    for (const done of this.waiting.values()) done({ ok: false, killed: true, error: 'container killed' })
    this.waiting.clear()
    this.child = undefined
  }

  /** Set what the proxies do with this container's next requests. */
  setRules(rules: { s3?: Rule; dynamodb?: Rule }): void {
    this.s3Proxy.rule = rules.s3 ?? (() => ({ action: 'forward' }))
    this.ddbProxy.rule = rules.dynamodb ?? (() => ({ action: 'forward' }))
  }

  /**
   * One invocation. A container that dies before it is ready, or while the invocation runs, fails
   * the invocation at once (`killed`); one that does not answer within CHAOS_STEP_TIMEOUT_MS is
   * killed and the invocation rejects, so a stuck step fails its schedule instead of hanging it.
   */
  async invoke(event: unknown): Promise<InvokeResult> {
    if (!this.child) {
      try {
        await this.spawn()
      } catch (err) {
        return { ok: false, killed: true, error: (err as Error).message }
      }
    }
    const child = this.child
    if (!child?.connected) return { ok: false, killed: true, error: 'container died before the invocation was sent' }
    this.invocations++
    const id = this.nextId++
    let timer: NodeJS.Timeout | undefined
    const answer = new Promise<InvokeResult>((resolve, reject) => {
      this.waiting.set(id, resolve)
      timer = setTimeout(() => {
        this.waiting.delete(id)
        child.kill('SIGKILL')
        reject(new Error(`${this.kind} invocation ${id} did not answer within ${STEP_TIMEOUT_MS} ms (CHAOS_STEP_TIMEOUT_MS)`))
      }, STEP_TIMEOUT_MS)
    })
    child.send({ id, event }, (err) => {
      if (!err) return
      const done = this.waiting.get(id)
      this.waiting.delete(id)
      done?.({ ok: false, killed: true, error: `container died before the invocation was sent (${err.message})` })
    })
    return answer.finally(() => clearTimeout(timer))
  }

  /** SIGKILL: no cleanup runs, in-flight requests are abandoned, as when Lambda kills a sandbox. */
  kill(): void {
    if (!this.child) return
    this.kills++
    this.child.kill('SIGKILL')
  }

  async stop(): Promise<void> {
    const child = this.child
    if (child) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGKILL')
      await exited
    }
    await Promise.all([this.s3Proxy.stop(), this.ddbProxy.stop()])
  }
}
