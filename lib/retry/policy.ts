/**
 * The one retry loop (iceberg-rust's `Transaction::commit` shape: a policy of attempts and
 * exponential backoff with full jitter, `.when(|e| e.retryable())`). `retryable` on the error
 * (isRetryable, lib/errors.ts) is the single decision whether an error may be retried; a loop
 * may narrow that to the errors it handles (`when`), never widen it.
 */
import { FloeError, isRetryable } from '../errors.js'

export interface RetryPolicy {
  /** Tries in all, the first included (≥ 1). */
  attempts: number
  /** Ceiling of the first wait; the ceiling doubles per retry (0: retry at once). */
  baseMs: number
  /** No wait's ceiling exceeds this. */
  capMs: number
}

export interface RetryInfo {
  /** The failed attempt, 0-based. */
  attempt: number
  /** How long the loop waits before the next attempt. */
  delayMs: number
}

export interface RetryOptions {
  /** Of the retryable errors, the ones this loop retries (default: all of them). */
  when?: (err: FloeError) => boolean
  /** Called before each wait (metrics, logs, re-reading state for the next attempt). */
  onRetry?: (err: FloeError, info: RetryInfo) => void | Promise<void>
  /** The error thrown when the attempts run out (default: the last error itself). */
  exhausted?: (err: FloeError, attempts: number) => Error
  /** Epoch ms: no wait that would end after it (the last error is thrown instead). */
  deadline?: number
  /** Aborting stops the loop before its next attempt (the last error is thrown). */
  signal?: AbortSignal
  /** Source of the jitter in [0, 1) (tests). */
  random?: () => number
}

/** Full jitter: a uniform wait in [0, min(cap, base · 2^retry)), `retryIndex` counting from 0. */
export function backoffMs(policy: RetryPolicy, retryIndex: number, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** retryIndex)
  return ceiling > 0 ? ceiling * random() : 0
}

export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise<void>((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve()
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
  })

/**
 * Runs `fn(attempt)` (attempt 0-based) until it returns, a non-retryable error (or one `when`
 * refuses) is thrown — at once, unchanged — or the policy's attempts, the deadline or the
 * signal run out: then the last error (or `exhausted(err, attempts)`) is thrown.
 */
export async function retry<T>(fn: (attempt: number) => Promise<T>, policy: RetryPolicy, opts: RetryOptions = {}): Promise<T> {
  if (!(policy.attempts >= 1)) throw new FloeError(`retry policy: attempts must be at least 1, got ${policy.attempts}`)
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(attempt)
    } catch (err) {
      if (!isRetryable(err)) throw err
      const e = err as FloeError
      if (opts.when && !opts.when(e)) throw e
      const giveUp = () => (opts.exhausted ? opts.exhausted(e, attempt + 1) : e)
      if (attempt + 1 >= policy.attempts || opts.signal?.aborted) throw giveUp()
      const delayMs = backoffMs(policy, attempt, opts.random)
      if (opts.deadline !== undefined && Date.now() + delayMs > opts.deadline) throw giveUp()
      await opts.onRetry?.(e, { attempt, delayMs })
      await sleep(delayMs, opts.signal)
      if (opts.signal?.aborted) throw giveUp()
    }
  }
}
