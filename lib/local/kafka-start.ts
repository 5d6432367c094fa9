/**
 * `floe start --kafka [host:port]`: the local pipeline read from a real Kafka broker instead of
 * the simulator. Without a value it starts the local broker (kafka-broker.ts, persisted under
 * `<dir>/kafka`) and produces the demo stream (or --input) into it; with `host:port[,…]` it reads
 * `--topics` from your broker (SASL/TLS from flags or FLOE_KAFKA_* settings). Kept apart from
 * lib/cli/start.ts, which only hands over here.
 */
import type { AwsClients } from '../clients.js'
import type { FloeConfig } from '../config.js'
import { ConfigError } from '../errors.js'
import type { FileIO } from '../io/index.js'
import { startKafkaBroker } from './kafka-broker.js'
import { connectionFrom, parseBrokers, type KafkaConnection } from './kafka-client.js'
import type { KafkaLog, LogRecord } from './kafka-log.js'
import { defaultGroupId, runKafkaPipeline } from './kafka-pipeline.js'
import type { KafkaPoller, PollerStats } from './kafka-poller.js'
import { inTimeOrder, logProducer, topicsOf } from './kafka-produce.js'
import type { Progress } from './pipeline.js'

export const KAFKA_USAGE = `
Kafka source (instead of the simulator):
  --kafka [HOST:PORT,…]  read from a real broker: without a value, a local Kafka 4 broker (jars
                     from Maven Central, cached in .cache/) with the demo stream produced into it;
                     with one, your broker (nothing is produced; name the topics with --topics)
  --topics A,B       topics to read (default with the local broker: the produced ones)
  --follow           keep consuming (progress shows records/s and lag); Ctrl-C to stop
  --kafka-event K    event shape handed to the writer: self-managed (default) or msk
  --kafka-sasl M     plain, scram-sha-256 or scram-sha-512 (FLOE_KAFKA_SASL_MECHANISM)
  --kafka-user U     SASL username (FLOE_KAFKA_SASL_USERNAME)
  --kafka-password P SASL password (FLOE_KAFKA_SASL_PASSWORD)
  --kafka-tls        TLS to the brokers (FLOE_KAFKA_TLS)
  --kafka-ca FILE    PEM CA bundle for the brokers' certificates (FLOE_KAFKA_TLS_CA_FILE)`

export interface KafkaStartOptions {
  /** Your brokers; undefined: the local broker. */
  brokers?: string[]
  topics?: string[]
  follow: boolean
  eventShape: 'msk' | 'self-managed'
  flags: { saslMechanism?: string; saslUsername?: string; saslPassword?: string; tls?: boolean; tlsCa?: string }
}

const VALUED = new Set(['--topics', '--kafka-event', '--kafka-sasl', '--kafka-user', '--kafka-password', '--kafka-ca'])
const SWITCHES = new Set(['--follow', '--kafka-tls'])

/** Takes `--kafka [value]` and its companion flags out of argv (node's parseArgs has no optional values). */
export function takeKafkaArgs(argv: string[]): { argv: string[]; kafka?: KafkaStartOptions } {
  const rest: string[] = []
  const seen = new Map<string, string | true>()
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split(/=(.*)/s, 2) as [string, string | undefined]
    if (flag === '--kafka') {
      const next = inline ?? (argv[i + 1] !== undefined && !argv[i + 1]!.startsWith('-') ? argv[++i] : undefined)
      seen.set(flag, next ?? true)
    } else if (VALUED.has(flag)) {
      const value = inline ?? argv[++i]
      if (value === undefined) throw new ConfigError(flag, 'expects a value')
      seen.set(flag, value)
    } else if (SWITCHES.has(flag)) seen.set(flag, true)
    else rest.push(argv[i]!)
  }
  if (!seen.has('--kafka')) {
    const stray = [...seen.keys()][0]
    if (stray) throw new ConfigError(stray, 'only with --kafka')
    return { argv: rest }
  }
  const str = (k: string) => (typeof seen.get(k) === 'string' ? (seen.get(k) as string) : undefined)
  const target = seen.get('--kafka')
  const eventShape = str('--kafka-event') ?? 'self-managed'
  if (eventShape !== 'msk' && eventShape !== 'self-managed') throw new ConfigError('--kafka-event', `expected self-managed or msk, got ${JSON.stringify(eventShape)}`)
  return {
    argv: rest,
    kafka: {
      brokers: typeof target === 'string' ? parseBrokers('--kafka', target) : undefined,
      topics: str('--topics')?.split(',').map((t) => t.trim()).filter(Boolean),
      follow: seen.has('--follow'),
      eventShape,
      flags: { saslMechanism: str('--kafka-sasl'), saslUsername: str('--kafka-user'), saslPassword: str('--kafka-password'), tls: seen.has('--kafka-tls'), tlsCa: str('--kafka-ca') },
    },
  }
}

export interface KafkaStartContext {
  config: FloeConfig
  clients: AwsClients
  io: FileIO
  /** The demo stream or --input records, produced into the local broker (ignored for your broker). */
  log: KafkaLog
  dataDir: string
  batchSize: number
  quiet: boolean
  out: (line: string) => void
}

/** Run the pipeline from Kafka; returns what was produced (local broker) and the run's progress. */
export async function startFromKafka(opts: KafkaStartOptions, ctx: KafkaStartContext): Promise<{ produced: number; result: Progress }> {
  // --follow ends on Ctrl-C, also one pressed while the broker starts: settle, then the summary.
  const abort = new AbortController()
  const onSigint = () => abort.abort()
  if (opts.follow) process.once('SIGINT', onSigint)
  try {
    return await runFrom(opts, ctx, abort.signal)
  } finally {
    process.off('SIGINT', onSigint)
  }
}

async function runFrom(opts: KafkaStartOptions, ctx: KafkaStartContext, signal: AbortSignal): Promise<{ produced: number; result: Progress }> {
  const broker = opts.brokers ? undefined : await startKafkaBroker({ dataDir: ctx.dataDir, heapMb: ctx.config.localKafka.brokerHeapMb, retentionHours: ctx.config.localKafka.brokerRetentionHours })
  try {
    const connection: KafkaConnection = broker ? { brokers: [broker.bootstrap] } : connectionFrom(opts.brokers!, opts.flags, ctx.config.localKafka)
    let produced = 0
    let topics = opts.topics
    let alongside: ((poller: KafkaPoller) => Promise<void>) | undefined
    if (broker) {
      ctx.out(`kafka: local broker ${broker.bootstrap} (Kafka 4, KRaft), log in ${ctx.dataDir}/kafka`)
      const partitions = topicsOf(ctx.log)
      topics ??= [...partitions.keys()]
      const producer = await logProducer(connection, partitions)
      alongside = async (poller) => {
        try {
          produced = await produceWhileRunning(producer, inTimeOrder(ctx.log), ctx.batchSize, poller)
          ctx.out(`kafka: produced ${produced} records into ${topics!.join(', ')}`)
        } finally {
          await producer.close()
        }
      }
    }
    if (!topics?.length) throw new ConfigError('--topics', 'name the topics to read from your broker (--topics a,b)')
    const groupId = defaultGroupId(ctx.config)
    ctx.out(`kafka: consumer group ${groupId} reading ${topics.join(', ')} from ${connection.brokers.join(',')}${opts.follow ? ' (following; Ctrl-C to stop)' : ''}`)
    const printer = ctx.quiet ? undefined : kafkaProgress(ctx.out)
    const result = await runKafkaPipeline(ctx.config, ctx.clients, ctx.io, {
      connection,
      topics,
      groupId,
      batchSize: ctx.batchSize,
      eventShape: opts.eventShape,
      follow: opts.follow,
      signal,
      alongside,
      onProgress: printer?.update,
    })
    printer?.done(result, result.poller)
    return { produced: broker ? produced : result.delivered, result }
  } finally {
    await broker?.stop()
  }
}

/**
 * The demo is produced as a stream is: its first batch's worth, and the rest once the writer
 * has taken that batch. Tables are created from the first batch's records (as with the
 * simulator); the poison records of the demo's second half must not be among them.
 */
async function produceWhileRunning(producer: Awaited<ReturnType<typeof logProducer>>, records: LogRecord[], batchSize: number, poller: KafkaPoller): Promise<number> {
  let sent = await producer.send(records.slice(0, batchSize))
  for (let i = 0; i < 1_200 && poller.stats().delivered === 0 && sent < records.length; i++) await new Promise((r) => setTimeout(r, 100))
  sent += await producer.send(records.slice(batchSize))
  return sent
}

/** One line: records delivered, records/s over the last seconds, lag to the high watermarks. */
function kafkaProgress(out: (line: string) => void) {
  const tty = process.stdout.isTTY === true
  let last = 0
  const line = (p: Progress, s: PollerStats) =>
    `${s.delivered.toLocaleString('en-US')} records · ${s.recordsPerSecond.toLocaleString('en-US')} rec/s · lag ${s.lag.toLocaleString('en-US')} · ${p.batches} batches · ${p.files} files · ${p.commits} commits · ${p.deadLetters} dead letters${s.joins > 1 ? ` · ${s.joins - 1} rebalances` : ''}`
  return {
    update: (p: Progress, s: PollerStats) => {
      if (tty) process.stdout.write(`\r${line(p, s)}\u001b[K`)
      else if (p.elapsedMs - last >= 2_000) {
        last = p.elapsedMs
        out(line(p, s))
      }
    },
    done: (p: Progress, s: PollerStats) => (tty ? process.stdout.write(`\r${line(p, s)}\u001b[K\n`) : out(line(p, s))),
  }
}
