/**
 * A local stand-in for the Lambda event source mapping (ESM) of an MSK topic: it polls a
 * KafkaLog (kafka-log.ts) and invokes a handler with real-shaped `aws:kafka` events. It keeps the
 * properties Floe's exactly-once argument depends on:
 * - per-partition order: a partition has at most one batch in flight, and its position only
 *   advances when the invocation that carried it succeeded;
 * - a batch opens when its first record is readable and closes at `batchSize` records, before
 *   the 6 MB payload limit, or when the batching window has passed — whichever comes first;
 * - a failed batch is retried from the partition's position — possibly re-batched differently
 *   (split, or merged with newer records), as the real mapping may.
 * Time is a virtual clock in ms: records become readable at their `availableAt`, and the window
 * is measured on that clock, so a producer writing over time is simulated exactly and replayably
 * (a schedule never waits for real). Used by `floe start`, the chaos harness and tests.
 */
import { MAX_PAYLOAD_BYTES, buildEvent, eventRecordBytes, tpKey, type KafkaEvent, type KafkaLog, type LogRecord } from './kafka-log.js'

export interface EsmOptions {
  /** Most records per batch (the mapping's BatchSize; MSK allows 1-10,000). */
  batchSize?: number
  /** Longest a batch waits for more records (MaximumBatchingWindowInSeconds), in ms of the mapping's clock. */
  batchingWindowMs?: number
  /** The invocation payload limit: 6 MB for synchronous Lambda invocations. */
  maxPayloadBytes?: number
  /** Attempts per batch before the mapping gives up (-1 = forever, the MSK default). */
  maxRetries?: number
  /** Re-batch a retried batch differently: 'same' | 'split' | 'merge' | a chooser. */
  rebatch?: 'same' | 'split' | 'merge' | ((attempt: number) => 'same' | 'split' | 'merge')
  eventSourceArn?: string
  /**
   * The on-failure destination: called with the batch the mapping gives up on (after
   * `maxRetries`), before it moves on — e.g. to put `onFailureRecord(...)` in a failed-batches store.
   */
  onFailure?: (event: KafkaEvent, attempts: number, error: unknown) => Promise<void>
}

/** Why a batch closed: it reached its record limit, the next record would pass the payload limit, or the window ran out. */
export type ClosedBy = 'count' | 'payload' | 'window'

export interface Batch {
  records: LogRecord[]
  /** When the mapping invokes the function with it, on the mapping's clock. */
  closedAt: number
  closedBy: ClosedBy
}

export interface BatchOutcome {
  records: number
  attempt: number
  ok: boolean
  error?: unknown
  closedBy?: ClosedBy
}

const availableAt = (r: LogRecord) => r.availableAt ?? 0

/**
 * Polls a KafkaLog and delivers batches to `invoke`. Positions are the consumer group's
 * committed offsets: they move only after a successful invocation.
 */
export class EventSourceMapping {
  readonly positions = new Map<string, bigint>()
  /** The mapping's clock, in ms: when the next batch may open. */
  clock = 0
  private readonly opts: Required<Omit<EsmOptions, 'rebatch' | 'onFailure'>> & Pick<EsmOptions, 'rebatch' | 'onFailure'>
  /** Partition keys with an uncommitted failure, and how many times they failed. */
  private readonly failures = new Map<string, number>()

  constructor(
    private readonly log: KafkaLog,
    private readonly invoke: (event: KafkaEvent) => Promise<unknown>,
    opts: EsmOptions = {},
  ) {
    this.opts = {
      batchSize: opts.batchSize ?? 100,
      batchingWindowMs: opts.batchingWindowMs ?? 500,
      maxPayloadBytes: opts.maxPayloadBytes ?? MAX_PAYLOAD_BYTES,
      maxRetries: opts.maxRetries ?? -1,
      rebatch: opts.rebatch,
      onFailure: opts.onFailure,
      eventSourceArn: opts.eventSourceArn ?? 'arn:aws:kafka:us-east-1:000000000000:cluster/local/00000000-0000-0000-0000-000000000000-1',
    }
  }

  /** Records not yet delivered successfully (including those not yet readable). */
  lag(): number {
    let n = 0
    for (const key of this.log.partitionKeys()) n += this.log.records(key).length - this.log.indexOf(key, this.positions.get(key) ?? 0n)
    return n
  }

  /**
   * The next batch over the given partitions (all by default), as the mapping closes it from
   * `clock`: records in arrival order (offset order within a partition), opened by the first
   * readable record and closed by count, payload or window. Does not deliver it.
   */
  nextBatch(keys = this.log.partitionKeys(), limit = this.opts.batchSize): Batch {
    const cursors = keys.map((key) => ({ list: this.log.records(key), i: this.log.indexOf(key, this.positions.get(key) ?? 0n) }))
    /** The cursor whose next record arrives first (ties: key order). */
    const earliest = () => {
      let best: (typeof cursors)[number] | undefined
      for (const c of cursors) if (c.i < c.list.length && (!best || availableAt(c.list[c.i]!) < availableAt(best.list[best.i]!))) best = c
      return best
    }
    const first = earliest()
    const opensAt = Math.max(this.clock, first ? availableAt(first.list[first.i]!) : this.clock)
    const deadline = opensAt + this.opts.batchingWindowMs
    const records: LogRecord[] = []
    let bytes = 1024
    for (let c = first; c; c = earliest()) {
      const r = c.list[c.i]!
      const at = Math.max(opensAt, availableAt(r))
      if (at > deadline) break
      const size = eventRecordBytes(r)
      // A record larger than the payload limit still goes alone (the function then fails on it).
      if (records.length > 0 && bytes + size > this.opts.maxPayloadBytes) return { records, closedAt: at, closedBy: 'payload' }
      records.push(r)
      bytes += size
      c.i++
      if (records.length >= limit) return { records, closedAt: at, closedBy: 'count' }
    }
    return { records, closedAt: deadline, closedBy: 'window' }
  }

  /** Deliver one batch: on success advance positions; on failure leave them (the batch is retried). */
  async deliver(batch: LogRecord[]): Promise<BatchOutcome> {
    if (batch.length === 0) return { records: 0, attempt: 0, ok: true }
    const keys = [...new Set(batch.map((r) => tpKey(r.topic, r.partition)))]
    const attempt = Math.max(0, ...keys.map((k) => this.failures.get(k) ?? 0)) + 1
    const event = buildEvent(batch, this.opts.eventSourceArn)
    try {
      await this.invoke(event)
    } catch (error) {
      for (const k of keys) this.failures.set(k, (this.failures.get(k) ?? 0) + 1)
      if (this.opts.maxRetries >= 0 && attempt > this.opts.maxRetries) {
        // The real mapping sends the batch to its on-failure destination and moves on.
        await this.opts.onFailure?.(event, attempt, error)
        this.commit(batch)
        for (const k of keys) this.failures.delete(k)
      }
      return { records: batch.length, attempt, ok: false, error }
    }
    this.commit(batch)
    for (const k of keys) this.failures.delete(k)
    return { records: batch.length, attempt, ok: true }
  }

  private commit(batch: LogRecord[]): void {
    for (const r of batch) {
      const key = tpKey(r.topic, r.partition)
      const next = r.offset + 1n
      if ((this.positions.get(key) ?? 0n) < next) this.positions.set(key, next)
    }
  }

  /** How the next attempt of a failed partition set is batched. */
  private retryLimit(attempt: number): number {
    const mode = typeof this.opts.rebatch === 'function' ? this.opts.rebatch(attempt) : (this.opts.rebatch ?? 'same')
    if (mode === 'split') return Math.max(1, Math.ceil(this.opts.batchSize / 2 ** Math.min(attempt, 10)))
    if (mode === 'merge') return Math.min(10_000, this.opts.batchSize * 2)
    return this.opts.batchSize
  }

  /**
   * Deliver until every record is delivered or `maxInvocations` is reached. Partitions are
   * spread over up to `concurrency` parallel invocations, each owning a disjoint set of
   * partitions (so per-partition order holds); the clock then moves to the latest close.
   * `sleep` (real time, after a failed round) lets callers back off without waiting long.
   */
  async drain(opts: { concurrency?: number; maxInvocations?: number; onBatch?: (o: BatchOutcome) => void; sleep?: (ms: number) => Promise<void> } = {}): Promise<{ invocations: number; failures: number }> {
    const concurrency = Math.max(1, opts.concurrency ?? 1)
    let invocations = 0
    let failures = 0
    while (this.lag() > 0 && (opts.maxInvocations === undefined || invocations < opts.maxInvocations)) {
      const pending = this.log.partitionKeys().filter((k) => this.log.indexOf(k, this.positions.get(k) ?? 0n) < this.log.records(k).length)
      const lanes: string[][] = Array.from({ length: Math.min(concurrency, pending.length) }, () => [])
      pending.forEach((k, i) => lanes[i % lanes.length]!.push(k))
      const batches = lanes.map((keys) => {
        const attempt = Math.max(0, ...keys.map((k) => this.failures.get(k) ?? 0))
        return this.nextBatch(keys, attempt > 0 ? this.retryLimit(attempt) : this.opts.batchSize)
      })
      const outcomes = await Promise.all(batches.map(async (b) => ({ ...(await this.deliver(b.records)), closedBy: b.closedBy })))
      this.clock = Math.max(this.clock, ...batches.map((b) => b.closedAt))
      for (const o of outcomes) {
        invocations++
        if (!o.ok) failures++
        opts.onBatch?.(o)
      }
      if (opts.sleep && outcomes.some((o) => !o.ok)) await opts.sleep(this.opts.batchingWindowMs)
    }
    return { invocations, failures }
  }
}

/**
 * The document an S3 on-failure destination receives for a Kafka batch the mapping gave up on:
 * the failure metadata and the whole invocation event under `payload` (AWS Lambda developer
 * guide, "Capturing discarded batches for Amazon MSK and self-managed Apache Kafka event
 * sources"). `lib/replay` reads it back.
 */
export function onFailureRecord(event: KafkaEvent, attempts: number, opts: { functionArn?: string; requestId?: string; now?: Date } = {}): Record<string, unknown> {
  const first = Object.values(event.records)[0]?.[0]
  return {
    requestContext: {
      requestId: opts.requestId ?? crypto.randomUUID(),
      functionArn: opts.functionArn ?? 'arn:aws:lambda:us-east-1:000000000000:function:floe-writer',
      condition: 'RetryAttemptsExhausted',
      approximateInvokeCount: attempts,
    },
    responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
    version: '1.0',
    timestamp: (opts.now ?? new Date()).toISOString(),
    KafkaBatchInfo: {
      batchSize: Object.values(event.records).reduce((n, l) => n + l.length, 0),
      bootstrapServers: event.bootstrapServers,
      payloadSize: Buffer.byteLength(JSON.stringify(event)),
      recordInfo: first ? { offset: String(first.offset), timestamp: new Date(first.timestamp).toISOString() } : undefined,
    },
    payload: event,
  }
}
