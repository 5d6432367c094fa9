/**
 * A real single-node Kafka broker for local runs and tests: Apache Kafka 4.x in KRaft mode (one
 * process is broker and controller, no ZooKeeper), run from the jars kafka-jars.ts resolves
 * from Maven Central, on free loopback ports, behind the same watchdog as DynamoDB Local (so it
 * never outlives us). A new log directory is formatted on first start (`kafka-storage format`,
 * i.e. kafka.tools.StorageTool); a persisted one (`<dataDir>/kafka`) is reused, so a second
 * `floe start --kafka` finds its topics and consumer group again.
 */
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort, startWithRetries } from './endpoints.js'
import { kafkaClient } from './kafka-client.js'
import { ensureKafkaJars } from './kafka-jars.js'

export interface KafkaBroker {
  /** `127.0.0.1:<port>`: the bootstrap server. */
  bootstrap: string
  /** Stops the broker (controlled shutdown); safe to call twice. */
  stop(): Promise<void>
}

export interface KafkaBrokerOptions {
  /** Persist the log under `<dataDir>/kafka`; default a temp dir removed on stop. */
  dataDir?: string
  /** JVM heap (FLOE_KAFKA_BROKER_HEAP_MB). */
  heapMb?: number
  /** Time retention by record timestamp (FLOE_KAFKA_BROKER_RETENTION_HOURS); -1 (default) keeps every record. */
  retentionHours?: number
  /** Readiness deadline: a first start on a small machine takes 10-20 s. */
  timeoutMs?: number
}

export async function startKafkaBroker(opts: KafkaBrokerOptions = {}): Promise<KafkaBroker> {
  const java = spawnSync('java', ['-version'], { stdio: 'ignore' })
  if (java.error || java.status !== 0) throw new Error('the local Kafka broker needs Java 17+ but `java` was not found on PATH; install it or point --kafka at your own broker')
  const jars = ensureKafkaJars()
  const dir = opts.dataDir ? join(opts.dataDir, 'kafka') : mkdtempSync(join(tmpdir(), 'floe-kafka-'))
  const logDir = join(dir, 'data')
  mkdirSync(logDir, { recursive: true })
  const classpath = `${jars}/*`
  const heap = opts.heapMb ?? 512
  const server = await startWithRetries('Kafka broker', opts.timeoutMs ?? 120_000, async (port) => {
    const props = join(dir, 'server.properties')
    // Ports change per start (free ports); the static quorum is in this file, not in the log.
    writeFileSync(props, serverProperties(port, await otherFreePort(port), logDir, opts.retentionHours))
    if (!existsSync(join(logDir, 'meta.properties'))) format(classpath, props)
    return {
      command: 'java',
      args: [
        `-Xmx${heap}m`,
        `-Xms${Math.min(heap, 128)}m`,
        '-XX:+UseSerialGC',
        '-Djava.awt.headless=true',
        '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
        '-cp',
        classpath,
        'kafka.Kafka',
        props,
      ],
      env: { ...process.env, ...(opts.dataDir ? {} : { WATCHDOG_RMDIR: dir }) },
      ready: () => pingKafka(`127.0.0.1:${port}`),
    }
  })
  return {
    bootstrap: server.url.replace(/^http:\/\//, ''),
    stop: async () => {
      await server.stop?.()
      if (!opts.dataDir) rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * A free port other than `port`: the probe closes its socket, so two probes in a row can get the
 * same port back, and Kafka refuses two IPv4 listeners on one port.
 */
async function otherFreePort(port: number): Promise<number> {
  for (let i = 0; i < 20; i++) {
    const other = await freePort()
    if (other !== port) return other
  }
  throw new Error(`no free port other than ${port} after 20 probes`)
}

/**
 * Single node, replication factor 1 everywhere, and a log cleaner that runs within seconds
 * (compaction tests). Time retention is off unless asked for: the demo stream and --input files
 * carry historical timestamps, and Kafka's default (7 days, checked 1 s after start here) would
 * delete them from under the consumer, which then silently resets to the new log start.
 */
export function serverProperties(port: number, controllerPort: number, logDir: string, retentionHours = -1): string {
  return `${[
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
    `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
    'controller.listener.names=CONTROLLER',
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'inter.broker.listener.name=PLAINTEXT',
    `log.dirs=${logDir}`,
    'num.partitions=1',
    'auto.create.topics.enable=false',
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=1',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'transaction.state.log.num.partitions=1',
    'group.initial.rebalance.delay.ms=0',
    'log.cleaner.backoff.ms=500',
    'log.cleaner.dedupe.buffer.size=16777216',
    'log.initial.task.delay.ms=1000',
    `log.retention.hours=${retentionHours}`,
    'num.network.threads=2',
    'num.io.threads=2',
  ].join('\n')}\n`
}

/**
 * A Kafka cluster id: 16 random bytes as base64url, never starting with '-' (as Kafka's own
 * Uuid.randomUuid ensures). The storage tool's argument parser takes `-t -abc…` for an option and
 * refuses the format — one start in 64 failed so in CI.
 */
export function newClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url')
    if (!id.startsWith('-')) return id
  }
}

/** `kafka-storage format`: a new cluster id, the static quorum from the properties file. */
function format(classpath: string, props: string): void {
  const clusterId = newClusterId()
  const run = spawnSync('java', ['-Xmx256m', '-cp', classpath, 'kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', props, '--ignore-formatted'], { encoding: 'utf8', timeout: 120_000 })
  if (run.status !== 0) throw new Error(`formatting the Kafka log directory failed (exit ${run.status ?? run.signal}):\n${`${run.stdout}${run.stderr}`.trim().slice(-3_000)}`)
}

/** Ready when the broker answers metadata requests and has elected itself controller. */
async function pingKafka(bootstrap: string): Promise<void> {
  const admin = kafkaClient({ brokers: [bootstrap], clientId: 'floe-ping' }).admin({ retry: { retries: 0 } })
  try {
    await admin.connect()
    const cluster = await admin.describeCluster()
    if (cluster.controller === null || cluster.controller < 0) throw new Error('no controller yet')
  } finally {
    await admin.disconnect().catch(() => undefined)
  }
}
