/**
 * The local pipeline with a real Kafka broker as its source: the Kafka poller feeds the real
 * writer handler, the real committer runs beside it (pipeline.ts runWithHandlers). Without
 * `follow` it stops once everything in the topics at the start has been delivered; with it, it
 * keeps consuming until `signal` aborts.
 */
import type { AwsClients } from '../clients.js'
import type { FloeConfig } from '../config.js'
import type { FileIO } from '../io/index.js'
import type { KafkaConnection } from './kafka-client.js'
import { KafkaPoller, type KafkaPollerOptions, type PollerStats } from './kafka-poller.js'
import { runWithHandlers, type Progress } from './pipeline.js'

export interface KafkaRunOptions {
  connection: KafkaConnection
  topics: string[]
  /** Default FLOE_KAFKA_GROUP_ID, else `floe-<pipeline>` (the CDK stack's default). */
  groupId?: string
  batchSize?: number
  eventShape?: KafkaPollerOptions['eventShape']
  follow?: boolean
  signal?: AbortSignal
  commitEveryMs?: number
  beforeCommit?: KafkaPollerOptions['beforeCommit']
  /** Runs once the poller has started (e.g. a producer writing while the pipeline runs); without `follow`, the run catches up after it. */
  alongside?: (poller: KafkaPoller) => Promise<void>
  onProgress?: (p: Progress, poller: PollerStats) => void
}

export function defaultGroupId(config: FloeConfig): string {
  return config.localKafka.groupId ?? `floe-${config.pipeline}`
}

export async function runKafkaPipeline(config: FloeConfig, clients: AwsClients, io: FileIO, opts: KafkaRunOptions): Promise<Progress & { poller: PollerStats }> {
  let poller: KafkaPoller | undefined
  let stats: PollerStats = { delivered: 0, batches: 0, failedBatches: 0, lag: 0, recordsPerSecond: 0, joins: 0, failedGroupCommits: 0 }
  const result = await runWithHandlers(
    config,
    clients,
    io,
    { commitEveryMs: opts.commitEveryMs, onProgress: (p) => poller && opts.onProgress?.({ ...p, delivered: (stats = poller.stats()).delivered, total: stats.delivered + stats.lag }, stats) },
    async (invoke, progress) => {
      poller = new KafkaPoller({
        connection: opts.connection,
        topics: opts.topics,
        groupId: opts.groupId ?? defaultGroupId(config),
        invoke,
        eventShape: opts.eventShape,
        batchSize: opts.batchSize ?? 500,
        batchingWindowMs: config.localKafka.batchingWindowMs,
        retryBackoffMs: config.localKafka.retryBackoffMs,
        beforeCommit: opts.beforeCommit,
        onBatch: (o) => {
          progress.batches++
          if (o.ok) progress.delivered += o.records
          else progress.failedBatches++
        },
      })
      await poller.start()
      try {
        await opts.alongside?.(poller)
        if (opts.follow) await aborted(opts.signal)
        else await poller.caughtUp()
      } finally {
        stats = poller.stats()
        await poller.stop()
      }
      progress.total = progress.delivered
    },
  )
  return { ...result, poller: stats }
}

function aborted(signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return new Promise(() => undefined)
  if (signal.aborted) return Promise.resolve()
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))
}
