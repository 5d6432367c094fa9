import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../lib/config.js'
import { CommitConflictError, CommitStateUnknownError, FloeError, RecordError, ThrottledError } from '../../lib/errors.js'
import { backoffMs, commitPolicy, controlReadPolicy, immediately, markPolicy, retry, tableCommitPolicy } from '../../lib/retry/index.js'

const failing = (errors: unknown[], value = 'ok') => {
  const calls: number[] = []
  const fn = async (attempt: number) => {
    calls.push(attempt)
    if (attempt < errors.length) throw errors[attempt]
    return value
  }
  return { fn, calls }
}

describe('retry', () => {
  it('retries a retryable error until an attempt succeeds, passing the 0-based attempt', async () => {
    const { fn, calls } = failing([new CommitConflictError('a'), new ThrottledError('b')])
    await expect(retry(fn, immediately(3))).resolves.toBe('ok')
    expect(calls).toEqual([0, 1, 2])
  })

  it('makes exactly `attempts` tries and surfaces the last error', async () => {
    const errors = [1, 2, 3, 4].map((i) => new CommitConflictError(`conflict ${i}`))
    const { fn, calls } = failing(errors)
    await expect(retry(fn, immediately(3))).rejects.toBe(errors[2])
    expect(calls).toEqual([0, 1, 2])
  })

  it('never retries an error whose retryable is false, nor a foreign error', async () => {
    for (const err of [new RecordError('bad'), new CommitStateUnknownError('maybe'), new FloeError('plain'), new TypeError('bug'), 'a string']) {
      const { fn, calls } = failing([err])
      await expect(retry(fn, immediately(5))).rejects.toBe(err)
      expect(calls).toEqual([0])
    }
  })

  it('`when` narrows the retryable errors, never widens to the others', async () => {
    const throttled = new ThrottledError('slow down')
    const narrow = failing([throttled])
    await expect(retry(narrow.fn, immediately(5), { when: (e) => e instanceof CommitConflictError })).rejects.toBe(throttled)
    expect(narrow.calls).toEqual([0])
    const bad = new RecordError('bad')
    const wide = failing([bad])
    await expect(retry(wide.fn, immediately(5), { when: () => true })).rejects.toBe(bad)
    expect(wide.calls).toEqual([0])
  })

  it('`exhausted` names the attempts in the final error', async () => {
    const { fn } = failing([new CommitConflictError('x'), new CommitConflictError('y')])
    const err = await retry(fn, immediately(2), { exhausted: (e, n) => new FloeError(`gave up after ${n} attempts: ${e.message}`) }).catch((e: Error) => e)
    expect((err as Error).message).toBe('gave up after 2 attempts: y')
  })

  it('waits full-jitter backoff, doubling from the base up to the cap, reported to onRetry', async () => {
    const delays: number[] = []
    const { fn } = failing(Array.from({ length: 6 }, () => new CommitConflictError('c')))
    await retry(fn, { attempts: 7, baseMs: 1, capMs: 8 }, { random: () => 0.999, onRetry: (_e, { delayMs }) => void delays.push(delayMs) })
    expect(delays.map((d) => Math.round(d * 1000) / 1000)).toEqual([0.999, 1.998, 3.996, 7.992, 7.992, 7.992])
  })

  it('stops before a wait that would pass the deadline, and when the signal is aborted', async () => {
    const slow = failing([new CommitConflictError('a'), new CommitConflictError('b')])
    await expect(retry(slow.fn, { attempts: 5, baseMs: 60_000, capMs: 60_000 }, { random: () => 0.5, deadline: Date.now() + 1_000 })).rejects.toThrow('a')
    expect(slow.calls).toEqual([0])
    const ctl = new AbortController()
    const aborted = failing([new CommitConflictError('a'), new CommitConflictError('b')])
    const run = retry(aborted.fn, { attempts: 5, baseMs: 60_000, capMs: 60_000 }, { random: () => 0.5, signal: ctl.signal, onRetry: () => ctl.abort() })
    await expect(run).rejects.toThrow('a')
    expect(aborted.calls).toEqual([0])
  })

  it('refuses a policy without attempts', async () => {
    await expect(retry(async () => 1, immediately(0))).rejects.toThrow('attempts must be at least 1, got 0')
  })
})

describe('backoffMs', () => {
  it('stays within [0, min(cap, base · 2^retry)) over many draws', () => {
    const policy = { attempts: 10, baseMs: 100, capMs: 1_000 }
    for (let retryIndex = 0; retryIndex < 8; retryIndex++) {
      const ceiling = Math.min(1_000, 100 * 2 ** retryIndex)
      const draws = Array.from({ length: 500 }, () => backoffMs(policy, retryIndex))
      expect(Math.min(...draws)).toBeGreaterThanOrEqual(0)
      expect(Math.max(...draws)).toBeLessThan(ceiling)
      // Full jitter: the draws spread over the whole range, not bunched at the ceiling.
      expect(Math.min(...draws)).toBeLessThan(ceiling / 4)
      expect(Math.max(...draws)).toBeGreaterThan((ceiling * 3) / 4)
    }
    expect(backoffMs({ attempts: 3, baseMs: 0, capMs: 0 }, 2)).toBe(0)
  })
})

describe('named policies', () => {
  const config = loadConfig({ FLOE_WAREHOUSE: 's3://bucket/warehouse', FLOE_CONTROL_TABLE: 'control', FLOE_PIPELINE: 'p', FLOE_ROUTES: JSON.stringify({ routes: [{ table: '{topic}' }] }) })

  it('come from the FLOE_* settings with their defaults (the caps the loops had hard-coded)', () => {
    expect(commitPolicy(config)).toEqual({ attempts: 11, baseMs: 100, capMs: 30_000 })
    expect(controlReadPolicy(config)).toEqual({ attempts: 8, baseMs: 50, capMs: 1_000 })
    expect(markPolicy(config)).toEqual({ attempts: 6, baseMs: 50, capMs: 1_000 })
    expect([config.writerGroupAttempts, config.orphanPendingReadAttempts, config.replayRaceRetries]).toEqual([3, 5, 3])
  })

  it('data commits honour Iceberg commit.retry.* table properties over the settings', () => {
    const now = 1_000_000
    expect(tableCommitPolicy(config, {}, 't', now)).toEqual({ policy: commitPolicy(config) })
    const props = { 'commit.retry.num-retries': '2', 'commit.retry.min-wait-ms': '5', 'commit.retry.max-wait-ms': '50', 'commit.retry.total-timeout-ms': '9000' }
    expect(tableCommitPolicy(config, props, 't', now)).toEqual({ policy: { attempts: 3, baseMs: 5, capMs: 50 }, deadline: now + 9000 })
  })

  it('an invalid commit.retry property is ignored, not a commit failure', () => {
    const t = tableCommitPolicy(config, { 'commit.retry.num-retries': 'many', 'commit.retry.min-wait-ms': '-1' }, 't')
    expect(t).toEqual({ policy: commitPolicy(config) })
  })

  it('a bad setting fails config and names the key', () => {
    expect(() => loadConfig({ FLOE_WAREHOUSE: 's3://bucket/warehouse', FLOE_CONTROL_TABLE: 'control', FLOE_ROUTES: JSON.stringify({ routes: [{ table: '{topic}' }] }), FLOE_CONTROL_READ_ROUNDS: '0' })).toThrow(/FLOE_CONTROL_READ_ROUNDS/)
  })
})
