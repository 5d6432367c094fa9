/**
 * The writer's worker threads (FLOE_WRITER_WORKERS): a fixed pool that encodes Arrow IPC streams
 * as Parquet off the main thread (encode-worker.cjs), created once per container — at the first
 * invocation that needs it — and reused by every invocation after; never a thread per record or
 * per batch. A job is one file: its Arrow IPC bytes go in and its Parquet bytes come back, both
 * transferred (no copy, no structured clone of rows), with plain writer settings beside them.
 *
 * A job goes to the thread with the fewest jobs in flight. A thread that dies (an uncaught error,
 * an exit, being terminated) rejects every job it held with a retryable WorkerCrashedError — the
 * invocation fails before its registration, so nothing partial is ever registered, and the
 * mapping retries the batch — and is replaced by a fresh thread on the next job.
 *
 * Threads start when a job finds none idle (at most `size`), and are unref'd while idle, so a
 * pool never keeps a process (a test, the CLI, a bundle's smoke test) alive.
 */
import { existsSync } from 'node:fs'
import { Worker } from 'node:worker_threads'
import { WorkerCrashedError } from '../../errors.js'
import type { ParquetSettings } from '../columnar/index.js'

/** The worker script beside this module (source tree) or beside the bundle (Lambda: index.mjs). */
export const WORKER_SCRIPT = new URL('./encode-worker.cjs', import.meta.url)

interface Job {
  resolve: (bytes: Uint8Array) => void
  reject: (err: Error) => void
}

interface Slot {
  worker: Worker
  jobs: Map<number, Job>
  dead: boolean
}

export class EncodePool {
  readonly size: number
  readonly #script: URL
  readonly #slots: (Slot | undefined)[]
  #next = 0
  /** Threads started over the pool's life (a replaced thread counts again). */
  started = 0

  constructor(size: number, script: URL = WORKER_SCRIPT) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`an encode pool needs at least one thread, got ${size}`)
    if (!existsSync(script)) throw new Error(`the writer's worker script is missing: ${script.href} (a bundle must ship encode-worker.cjs beside index.mjs)`)
    this.size = size
    this.#script = script
    this.#slots = Array.from({ length: size }, () => undefined)
  }

  /** The live threads (tests, metrics). */
  get threads(): Worker[] {
    return this.#slots.flatMap((s) => (s && !s.dead ? [s.worker] : []))
  }

  /** Parquet bytes of one Arrow IPC stream. `ipc`'s buffer is transferred: the caller must not use it after. */
  encode(ipc: Uint8Array, settings: ParquetSettings): Promise<Uint8Array> {
    const slot = this.#pick()
    const id = this.#next++
    return new Promise<Uint8Array>((resolve, reject) => {
      slot.jobs.set(id, { resolve, reject })
      if (slot.jobs.size === 1) slot.worker.ref()
      const transfer = ipc.byteOffset === 0 && ipc.byteLength === ipc.buffer.byteLength ? ipc : ipc.slice()
      try {
        slot.worker.postMessage({ id, ipc: transfer, settings }, [transfer.buffer as ArrayBuffer])
      } catch (err) {
        slot.jobs.delete(id)
        if (slot.jobs.size === 0) slot.worker.unref()
        reject(err as Error)
      }
    })
  }

  /** Stop every thread (tests; a Lambda container just ends). */
  async close(): Promise<void> {
    const slots = this.#slots.splice(0, this.#slots.length, ...this.#slots.map(() => undefined))
    await Promise.all(slots.map((s) => s?.worker.terminate()))
  }

  /** An idle live thread, else a new one while the pool has room, else the live thread with the fewest jobs in flight. */
  #pick(): Slot {
    let best: Slot | undefined
    let free = -1
    for (let i = 0; i < this.#slots.length; i++) {
      const slot = this.#slots[i]
      if (slot === undefined || slot.dead) {
        if (free < 0) free = i
        continue
      }
      if (slot.jobs.size === 0) return slot
      if (best === undefined || slot.jobs.size < best.jobs.size) best = slot
    }
    if (free >= 0) return (this.#slots[free] = this.#start())
    return best!
  }

  #start(): Slot {
    const worker = new Worker(this.#script)
    this.started++
    worker.unref()
    const slot: Slot = { worker, jobs: new Map(), dead: false }
    // An unref() before the thread is online does not hold: apply it again once it is.
    worker.once('online', () => {
      if (slot.jobs.size === 0) worker.unref()
    })
    worker.on('message', (m: { id: number; bytes?: Uint8Array; error?: string }) => {
      const job = slot.jobs.get(m.id)
      if (!job) return
      slot.jobs.delete(m.id)
      if (slot.jobs.size === 0) worker.unref()
      if (m.error !== undefined) job.reject(new Error(`Parquet encoding failed on a writer worker thread: ${m.error}`))
      else job.resolve(m.bytes!)
    })
    const die = (why: string, cause?: unknown) => {
      if (slot.dead) return
      slot.dead = true
      const jobs = [...slot.jobs.values()]
      slot.jobs.clear()
      for (const job of jobs) job.reject(new WorkerCrashedError(`a writer worker thread (FLOE_WRITER_WORKERS) ${why} with ${jobs.length} file(s) in flight: the batch fails before registration and is retried`, { cause }))
    }
    worker.on('error', (err) => die(`failed (${err.message})`, err))
    worker.on('messageerror', (err) => die(`could not read a message (${err.message})`, err))
    worker.on('exit', (code) => die(`exited with code ${code}`))
    return slot
  }
}

const pools = new Map<number, EncodePool>()

/** The process's pool of `size` threads (one per container), or undefined when `size` is 0 (workers off). */
export function encodePool(size: number): EncodePool | undefined {
  if (size <= 0) return undefined
  let pool = pools.get(size)
  if (!pool) pools.set(size, (pool = new EncodePool(size)))
  return pool
}
