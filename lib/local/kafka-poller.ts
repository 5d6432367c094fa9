/**
 * The Kafka source of local runs: reads topics from a real broker with a kafkajs consumer group
 * and invokes the writer handler the way the Lambda event source mapping does —
 * - a batch opens with its first record and closes at `batchSize` records, before the 6 MB
 *   payload limit, or when the batching window has passed, whichever comes first;
 * - records of a partition are delivered in offset order, one batch in flight at a time;
 * - read_committed, as the mapping reads: aborted transactions and transaction markers never
 *   reach the handler, so offsets in a batch have gaps;
 * - a failed batch is retried with backoff until it succeeds (MSK's default: there is no
 *   on-failure destination locally, so giving up would lose it), and the
 *   consumer group's offsets are committed only after the handler succeeded.
 * The group's offsets may lag behind what the writer registered (a crash between the two):
 * the writer's own checkpoints drop what was already registered, as in production.
 */
import type { Consumer, EachBatchPayload, IHeaders, KafkaMessage } from 'kafkajs'
import { kafkaClient, type KafkaConnection } from './kafka-client.js'
import { MAX_PAYLOAD_BYTES, buildEvent, buildSelfManagedEvent, eventRecordBytes, tpKey, type KafkaEvent, type LogRecord, type SelfManagedKafkaEvent } from './kafka-log.js'
import type { BatchOutcome, ClosedBy } from './esm.js'

export interface KafkaPollerOptions {
  connection: KafkaConnection
  topics: string[]
  groupId: string
  invoke: (event: KafkaEvent | SelfManagedKafkaEvent) => Promise<unknown>
  /** The event shape: `self-managed` (default: it is a broker of your own) or `msk` (`aws:kafka`, with an ARN). */
  eventShape?: 'msk' | 'self-managed'
  batchSize?: number
  batchingWindowMs?: number
  maxPayloadBytes?: number
  /** First backoff after a failed invocation; doubles per attempt up to 30 s. */
  retryBackoffMs?: number
  /** Runs after a successful invocation, before the group's offsets are committed (tests kill the process here). */
  beforeCommit?: (batch: readonly LogRecord[]) => Promise<void> | void
  onBatch?: (o: BatchOutcome) => void
}

export interface PollerStats {
  delivered: number
  batches: number
  failedBatches: number
  /** Offsets not yet delivered: up to the high watermark, plus records waiting in the open batch. */
  lag: number
  /** Over the last 5 s. */
  recordsPerSecond: number
  /** Times the consumer (re)joined its group, and consumer-group commits that failed (the writer's checkpoints cover them). */
  joins: number
  failedGroupCommits: number
}

const MSK_ARN = 'arn:aws:kafka:us-east-1:000000000000:cluster/local/00000000-0000-0000-0000-000000000000-1'
/** The event's envelope around its records, counted against the payload limit. */
const ENVELOPE_BYTES = 1024

export class KafkaPoller {
  private readonly consumer: Consumer
  private pending: LogRecord[] = []
  private pendingBytes = ENVELOPE_BYTES
  private inFlight = 0
  private timer: NodeJS.Timeout | undefined
  private chain: Promise<void> = Promise.resolve()
  private heartbeat: (() => Promise<void>) | undefined
  private stopping = false
  /** Per partition: the offset after the last one fetched (records and transaction markers), and the high watermark. */
  private readonly seen = new Map<string, bigint>()
  private readonly highWatermarks = new Map<string, bigint>()
  private readonly samples: { at: number; delivered: number }[] = []
  private readonly counts = { delivered: 0, batches: 0, failedBatches: 0, joins: 0, failedGroupCommits: 0 }
  private readonly o: Required<Omit<KafkaPollerOptions, 'beforeCommit' | 'onBatch'>> & Pick<KafkaPollerOptions, 'beforeCommit' | 'onBatch'>

  constructor(opts: KafkaPollerOptions) {
    this.o = { eventShape: 'self-managed', batchSize: 100, batchingWindowMs: 500, maxPayloadBytes: MAX_PAYLOAD_BYTES, retryBackoffMs: 500, ...opts }
    this.consumer = kafkaClient(opts.connection).consumer({
      groupId: opts.groupId,
      readUncommitted: false,
      allowAutoTopicCreation: false,
      // A restarted poller rejoins the group once the killed member's session expired; a slow
      // invocation keeps its membership by heartbeats during delivery (deliver()).
      sessionTimeout: 20_000,
      heartbeatInterval: 1_000,
      maxWaitTimeInMs: Math.min(500, Math.max(50, this.o.batchingWindowMs)),
    })
  }

  async start(): Promise<void> {
    this.consumer.on(this.consumer.events.GROUP_JOIN, () => void this.counts.joins++)
    await this.consumer.connect()
    await this.consumer.subscribe({ topics: this.o.topics, fromBeginning: true })
    await this.consumer.run({ autoCommit: false, eachBatchAutoResolve: false, partitionsConsumedConcurrently: 1, eachBatch: (p) => this.onFetch(p) })
  }

  /** Stop consuming. Records in the open batch are not delivered (nor committed): the next run gets them again. */
  async stop(): Promise<void> {
    this.stopping = true
    clearTimeout(this.timer)
    await this.consumer.disconnect()
  }

  stats(): PollerStats {
    let lag = this.pending.length + this.inFlight
    for (const [key, hw] of this.highWatermarks) {
      const seen = this.seen.get(key) ?? 0n
      if (hw > seen) lag += Number(hw - seen)
    }
    const now = Date.now()
    this.samples.push({ at: now, delivered: this.counts.delivered })
    while (this.samples.length > 2 && this.samples[0]!.at < now - 5_000) this.samples.shift()
    const first = this.samples[0]!
    const rate = now > first.at ? ((this.counts.delivered - first.delivered) * 1000) / (now - first.at) : 0
    return { ...this.counts, lag, recordsPerSecond: Math.round(rate) }
  }

  /**
   * Resolves once everything that is in the topics now (their end offsets at this call) has been
   * delivered and committed. Partitions the group had already consumed count as done.
   */
  async caughtUp(opts: { pollMs?: number; timeoutMs?: number } = {}): Promise<void> {
    const admin = kafkaClient(this.o.connection).admin()
    await admin.connect()
    const ends = new Map<string, bigint>()
    try {
      for (const topic of this.o.topics) {
        const committed = new Map<number, bigint>()
        for (const t of await admin.fetchOffsets({ groupId: this.o.groupId, topics: [topic] })) {
          for (const p of t.partitions) if (BigInt(p.offset) >= 0n) committed.set(p.partition, BigInt(p.offset))
        }
        for (const p of await admin.fetchTopicOffsets(topic)) {
          const end = BigInt(p.high)
          if (end > BigInt(p.low) && end > (committed.get(p.partition) ?? 0n)) ends.set(tpKey(topic, p.partition), end)
        }
      }
    } finally {
      await admin.disconnect()
    }
    const deadline = Date.now() + (opts.timeoutMs ?? 600_000)
    for (;;) {
      const behind = [...ends].filter(([key, end]) => (this.seen.get(key) ?? 0n) < end)
      if (behind.length === 0 && this.pending.length === 0 && this.inFlight === 0) {
        await this.chain
        return
      }
      if (Date.now() > deadline) throw new Error(`Kafka poller: not caught up after ${opts.timeoutMs ?? 600_000} ms (behind: ${behind.map(([k, e]) => `${k} at ${this.seen.get(k) ?? 'nothing'} of ${e}`).join(', ') || 'an open batch'})`)
      await sleep(opts.pollMs ?? 100)
    }
  }

  private async onFetch({ batch, resolveOffset, heartbeat }: EachBatchPayload): Promise<void> {
    this.heartbeat = heartbeat
    const key = tpKey(batch.topic, batch.partition)
    this.highWatermarks.set(key, BigInt(batch.highWatermark))
    for (const m of batch.messages) {
      if (this.stopping) return
      await this.add(toLogRecord(batch.topic, batch.partition, m))
      resolveOffset(m.offset)
    }
    // Past trailing transaction markers and aborted records too: they are read, never delivered.
    const last = BigInt(batch.lastOffset())
    if (last >= (this.seen.get(key) ?? 0n)) this.seen.set(key, last + 1n)
  }

  private async add(r: LogRecord): Promise<void> {
    const size = eventRecordBytes(r)
    // A record larger than the payload limit still goes alone (the function then fails on it).
    if (this.pending.length > 0 && this.pendingBytes + size > this.o.maxPayloadBytes) await this.close('payload')
    this.pending.push(r)
    this.pendingBytes += size
    if (this.pending.length === 1) this.timer = setTimeout(() => void this.close('window').catch(() => undefined), this.o.batchingWindowMs)
    if (this.pending.length >= this.o.batchSize) await this.close('count')
  }

  /** Close the open batch and deliver it after any batch still in flight (one at a time: per-partition order). */
  private close(closedBy: ClosedBy): Promise<void> {
    const run = this.chain.then(() => this.deliver(closedBy))
    this.chain = run.catch(() => undefined)
    return run
  }

  private async deliver(closedBy: ClosedBy): Promise<void> {
    const batch = this.pending
    if (batch.length === 0) return
    this.pending = []
    this.pendingBytes = ENVELOPE_BYTES
    clearTimeout(this.timer)
    this.timer = undefined
    this.inFlight = batch.length
    // A slow invocation must not cost the group membership (kafkajs heartbeats only between fetches).
    const beat = setInterval(() => void this.heartbeat?.().catch(() => undefined), 1_000)
    try {
      for (let attempt = 1; ; attempt++) {
        if (this.stopping) return
        try {
          await this.o.invoke(this.event(batch))
          this.counts.batches++
          break
        } catch (error) {
          this.counts.batches++
          this.counts.failedBatches++
          this.o.onBatch?.({ records: batch.length, attempt, ok: false, error, closedBy })
          await sleep(Math.min(30_000, this.o.retryBackoffMs * 2 ** (attempt - 1)))
          await this.heartbeat?.().catch(() => undefined)
        }
      }
      await this.o.beforeCommit?.(batch)
      this.counts.delivered += batch.length
      try {
        await this.consumer.commitOffsets(nextOffsets(batch))
      } catch {
        // A rebalance took the partitions away: the group's offsets lag, the next owner gets
        // these records again and the writer's checkpoints drop them.
        this.counts.failedGroupCommits++
      }
      this.o.onBatch?.({ records: batch.length, attempt: 0, ok: true, closedBy })
    } finally {
      clearInterval(beat)
      this.inFlight = 0
    }
  }

  private event(batch: LogRecord[]): KafkaEvent | SelfManagedKafkaEvent {
    const servers = this.o.connection.brokers.join(',')
    return this.o.eventShape === 'msk' ? buildEvent(batch, MSK_ARN, servers) : buildSelfManagedEvent(batch, servers)
  }
}

/** Per partition, the offset after the batch's last record: what the group commits. */
function nextOffsets(batch: readonly LogRecord[]): { topic: string; partition: number; offset: string }[] {
  const next = new Map<string, { topic: string; partition: number; offset: bigint }>()
  for (const r of batch) {
    const key = tpKey(r.topic, r.partition)
    const cur = next.get(key)
    if (!cur || cur.offset <= r.offset) next.set(key, { topic: r.topic, partition: r.partition, offset: r.offset + 1n })
  }
  return [...next.values()].map((n) => ({ ...n, offset: n.offset.toString() }))
}

export function toLogRecord(topic: string, partition: number, m: KafkaMessage): LogRecord {
  return {
    topic,
    partition,
    offset: BigInt(m.offset),
    timestamp: Number(m.timestamp),
    key: m.key === null ? null : new Uint8Array(m.key),
    value: m.value === null ? null : new Uint8Array(m.value),
    headers: headerList(m.headers),
  }
}

/** kafkajs groups repeated header names into arrays; the event lists each one. */
function headerList(headers: IHeaders | undefined): { key: string; value: Uint8Array }[] {
  const out: { key: string; value: Uint8Array }[] = []
  for (const [key, v] of Object.entries(headers ?? {})) {
    for (const one of Array.isArray(v) ? v : [v]) {
      if (one === undefined) continue
      out.push({ key, value: typeof one === 'string' ? new TextEncoder().encode(one) : new Uint8Array(one) })
    }
  }
  return out
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
