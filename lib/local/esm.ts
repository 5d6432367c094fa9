/**
 * A local stand-in for the Lambda event source mapping (ESM) of an MSK topic: it polls an
 * in-memory Kafka log and invokes a handler with real-shaped `aws:kafka` events. It keeps the
 * properties Floe's exactly-once argument depends on:
 * - per-partition order: a partition has at most one batch in flight, and its position only
 *   advances when the invocation that carried it succeeded;
 * - batches close at `batchSize` records, at the 6 MB payload limit, or when the batching
 *   window has passed since the first record was buffered;
 * - a failed batch is retried from the partition's position — possibly re-batched differently
 *   (split, or merged with newer records), as the real mapping may.
 * Used by `floe start`, the chaos harness and tests. It is not a Kafka broker.
 */

/** One record as produced to the log. Offsets are bigint: Kafka offsets are 64-bit. */
export interface LogRecord {
  topic: string
  partition: number
  offset: bigint
  timestamp: number
  key: Uint8Array | null
  value: Uint8Array | null
  headers?: { key: string; value: Uint8Array }[]
}

/** What the mapping sends a function (the subset of the MSK event Floe reads). */
export interface KafkaEvent {
  eventSource: 'aws:kafka'
  eventSourceArn: string
  bootstrapServers: string
  records: Record<string, KafkaEventRecord[]>
}

export interface KafkaEventRecord {
  topic: string
  partition: number
  offset: number | string
  timestamp: number
  timestampType: 'CREATE_TIME' | 'LOG_APPEND_TIME'
  key?: string | null
  value: string | null
  headers: Record<string, number[]>[]
}

export interface EsmOptions {
  /** Most records per batch (the mapping's BatchSize; MSK allows 1-10,000). */
  batchSize?: number
  /** Longest a batch waits for more records (MaximumBatchingWindowInSeconds), in ms. */
  batchingWindowMs?: number
  /** The invocation payload limit: 6 MB for synchronous Lambda invocations. */
  maxPayloadBytes?: number
  /** Attempts per batch before the mapping gives up (-1 = forever, the MSK default). */
  maxRetries?: number
  /** Re-batch a retried batch differently: 'same' | 'split' | 'merge' | a chooser. */
  rebatch?: 'same' | 'split' | 'merge' | ((attempt: number) => 'same' | 'split' | 'merge')
  eventSourceArn?: string
}

export const MAX_PAYLOAD_BYTES = 6 * 1024 * 1024

const tpKey = (topic: string, partition: number) => `${topic}-${partition}`

/** An append-only in-memory log: topics → partitions → records, with offsets that may have gaps. */
export class KafkaLog {
  private readonly partitions = new Map<string, LogRecord[]>()

  append(record: Omit<LogRecord, 'offset'> & { offset?: bigint }): LogRecord {
    const key = tpKey(record.topic, record.partition)
    const list = this.partitions.get(key) ?? []
    if (!this.partitions.has(key)) this.partitions.set(key, list)
    const last = list.at(-1)
    const offset = record.offset ?? (last ? last.offset + 1n : 0n)
    if (last && offset <= last.offset) throw new Error(`${key}: offset ${offset} is not after ${last.offset}`)
    const stored = { ...record, offset }
    list.push(stored)
    return stored
  }

  partitionKeys(): string[] {
    return [...this.partitions.keys()].sort()
  }

  /** Records of one partition at or after `from`. */
  from(key: string, from: bigint): LogRecord[] {
    const list = this.partitions.get(key) ?? []
    let lo = 0
    let hi = list.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (list[mid]!.offset < from) lo = mid + 1
      else hi = mid
    }
    return list.slice(lo)
  }

  /** The offset after the last record of a partition (Kafka's log-end offset). */
  endOffset(key: string): bigint {
    const last = this.partitions.get(key)?.at(-1)
    return last ? last.offset + 1n : 0n
  }

  size(): number {
    let n = 0
    for (const list of this.partitions.values()) n += list.length
    return n
  }
}

const b64 = (bytes: Uint8Array | null) => (bytes === null ? null : Buffer.from(bytes).toString('base64'))

export function toEventRecord(r: LogRecord): KafkaEventRecord {
  return {
    topic: r.topic,
    partition: r.partition,
    offset: r.offset <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(r.offset) : r.offset.toString(),
    timestamp: r.timestamp,
    timestampType: 'CREATE_TIME',
    key: b64(r.key),
    value: b64(r.value),
    headers: (r.headers ?? []).map((h) => ({ [h.key]: [...h.value] })),
  }
}

/** Approximate JSON size of one event record (what counts against the 6 MB payload). */
export function eventRecordBytes(r: LogRecord): number {
  const base64Len = (b: Uint8Array | null) => (b === null ? 4 : Math.ceil(b.length / 3) * 4 + 2)
  let headers = 2
  for (const h of r.headers ?? []) headers += h.key.length + 8 + h.value.length * 4
  return 160 + r.topic.length + base64Len(r.key) + base64Len(r.value) + headers
}

export function buildEvent(records: LogRecord[], arn = 'arn:aws:kafka:us-east-1:000000000000:cluster/local/00000000-0000-0000-0000-000000000000-1'): KafkaEvent {
  const grouped: Record<string, KafkaEventRecord[]> = {}
  for (const r of records) (grouped[tpKey(r.topic, r.partition)] ??= []).push(toEventRecord(r))
  return { eventSource: 'aws:kafka', eventSourceArn: arn, bootstrapServers: 'localhost:9092', records: grouped }
}

export interface BatchOutcome {
  records: number
  attempt: number
  ok: boolean
  error?: unknown
}

/**
 * Polls a KafkaLog and delivers batches to `invoke`. Positions are the consumer group's
 * committed offsets: they move only after a successful invocation.
 */
export class EventSourceMapping {
  readonly positions = new Map<string, bigint>()
  private readonly opts: Required<Omit<EsmOptions, 'rebatch'>> & Pick<EsmOptions, 'rebatch'>
  private attempts = 0
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
      eventSourceArn: opts.eventSourceArn ?? 'arn:aws:kafka:us-east-1:000000000000:cluster/local/00000000-0000-0000-0000-000000000000-1',
    }
  }

  /** Records not yet delivered successfully. */
  lag(): number {
    let n = 0
    for (const key of this.log.partitionKeys()) n += this.log.from(key, this.positions.get(key) ?? 0n).length
    return n
  }

  /**
   * Take the next batch over the given partitions (all by default) without delivering it:
   * records in partition order, bounded by batch size and payload.
   */
  nextBatch(keys = this.log.partitionKeys(), limit = this.opts.batchSize): LogRecord[] {
    const batch: LogRecord[] = []
    let bytes = 1024
    for (const key of keys) {
      for (const r of this.log.from(key, this.positions.get(key) ?? 0n)) {
        const size = eventRecordBytes(r)
        if (batch.length >= limit || bytes + size > this.opts.maxPayloadBytes) return batch
        batch.push(r)
        bytes += size
      }
    }
    return batch
  }

  /** Deliver one batch: on success advance positions; on failure leave them (the batch is retried). */
  async deliver(batch: LogRecord[]): Promise<BatchOutcome> {
    if (batch.length === 0) return { records: 0, attempt: 0, ok: true }
    const keys = [...new Set(batch.map((r) => tpKey(r.topic, r.partition)))]
    const attempt = Math.max(0, ...keys.map((k) => this.failures.get(k) ?? 0)) + 1
    this.attempts++
    try {
      await this.invoke(buildEvent(batch, this.opts.eventSourceArn))
    } catch (error) {
      for (const k of keys) this.failures.set(k, (this.failures.get(k) ?? 0) + 1)
      if (this.opts.maxRetries >= 0 && attempt > this.opts.maxRetries) {
        // The real mapping sends the batch to its on-failure destination and moves on.
        this.commit(batch)
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
   * partitions (so per-partition order holds). `sleep` lets callers compress time.
   */
  async drain(opts: { concurrency?: number; maxInvocations?: number; onBatch?: (o: BatchOutcome) => void; sleep?: (ms: number) => Promise<void> } = {}): Promise<{ invocations: number; failures: number }> {
    const concurrency = Math.max(1, opts.concurrency ?? 1)
    let invocations = 0
    let failures = 0
    while (this.lag() > 0 && (opts.maxInvocations === undefined || invocations < opts.maxInvocations)) {
      const pending = this.log.partitionKeys().filter((k) => this.log.from(k, this.positions.get(k) ?? 0n).length > 0)
      const lanes: string[][] = Array.from({ length: Math.min(concurrency, pending.length) }, () => [])
      pending.forEach((k, i) => lanes[i % lanes.length]!.push(k))
      const outcomes = await Promise.all(
        lanes.map(async (keys) => {
          const attempt = Math.max(0, ...keys.map((k) => this.failures.get(k) ?? 0))
          const batch = this.nextBatch(keys, attempt > 0 ? this.retryLimit(attempt) : this.opts.batchSize)
          return this.deliver(batch)
        }),
      )
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
