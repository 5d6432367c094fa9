/**
 * A bounded run of the scale load test (scale.ts): writer invocations in 2 worker processes and
 * committer runs, every request counted per DynamoDB key and S3 prefix. Not timed: it asserts the
 * distribution — the shard keys are all used and none carries much more than its share — and
 * that the model built from these counts keeps every key under its published limit at 1,000
 * partitions of 1 MB/s after the change, where the unsharded layout was over.
 */
import { describe, expect, it } from 'vitest'
import { testAws } from '../helpers/aws.js'
import { BEFORE } from './scale-run.js'
import { benchScale, formatScale, leaseRate, model } from './scale.js'

const size = { workers: 2, partitionsPerWorker: 6, rounds: 3, records: 20 }

describe('scale load test (bounded)', () => {
  it('spreads pending batches over the shard keys and keeps every key under its limit at the modelled 1 GB/s', { timeout: 240_000 }, async () => {
    const clients = testAws().clients
    const before = await benchScale(clients, { label: 'before', ...size, settings: BEFORE })
    const after = await benchScale(clients, { label: 'after', ...size, settings: { FLOE_PENDING_SHARDS: '4' } })
    console.log(formatScale([before, after], [1_000]))
    for (const run of [before, after]) {
      expect(run.failures, run.errors.join('; ')).toBe(0)
      expect(run.registrations).toBe(size.workers * size.partitionsPerWorker * size.rounds)
      // Every record written is in the table exactly once.
      expect({ label: run.label, committed: run.recordsCommitted, left: run.leftPending }).toEqual({ label: run.label, committed: run.recordsWritten, left: 0 })
    }
    expect(before.classes.batch.keys).toBe(1)
    expect(before.classes.index.keys).toBe(1)
    expect(after.classes.batch.keys).toBe(4)
    expect(after.classes.index.keys).toBe(4)
    // 36 batches over 4 keys: no key with more than twice its share.
    expect(after.classes.batch.hottestShare).toBeLessThanOrEqual(0.5)
    expect(after.classes.index.hottestShare).toBeLessThanOrEqual(0.5)
    // Hash directories: the data PUTs spread over (nearly) one prefix each.
    expect(before.s3.hottestPutShare).toBe(1)
    expect(after.s3.hottestPutShare).toBeLessThan(0.1)
    // One small read per invocation instead of counting the pending items.
    expect(after.classes.backlog.requests).toBeGreaterThan(0.9)
    expect(model(before, 1_000).over.length).toBeGreaterThan(0)
    // The lease key is charged per committer round: every run took it at least once.
    for (const run of [before, after]) {
      expect(run.lease.rounds).toBeGreaterThan(0)
      expect(run.lease.wcuPerRound).toBeGreaterThan(0)
    }
  })

  it('charges the lease per committer round from the commit schedule, not per registration', () => {
    const lease = { rounds: 10, markTransactions: 10, wcuPerRound: 34, rcuPerRound: 1, wcuPerMark: 0, rcuPerMark: 2, maxBatchesPerRound: 5_000 }
    // 1 batch a second: one round a minute, two mark transactions (60 batches, 49 per transaction).
    expect(leaseRate(lease, 1)).toEqual({ wcu: 34 / 60, rcu: (1 + 2 * 2) / 60 })
    // 10,000 batches a second: 600,000 a minute in 120 rounds of 5,000, 103 mark transactions each.
    const busy = leaseRate(lease, 10_000)
    expect(busy.wcu).toBeCloseTo((120 * 34) / 60)
    expect(busy.rcu).toBeCloseTo((120 * 1 + 120 * 103 * 2) / 60)
  })
})
