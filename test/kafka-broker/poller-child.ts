/**
 * A local pipeline from Kafka in a process of its own, so a test can kill it for real. Settings
 * come from the environment (FLOE_*, AWS_ENDPOINT_URL_*, KAFKA_TEST_BOOTSTRAP); argv[2] is JSON:
 * { topics, groupId, batchSize, eventShape, killAtCommit }. With killAtCommit N, the process
 * SIGKILLs itself after the Nth successful writer invocation, before the consumer group's offsets
 * are committed: Floe registered the batch, Kafka does not know.
 * Prints one line `progress <json>` per batch.
 */
import { createClients } from '../../lib/clients.js'
import { loadConfig } from '../../lib/config.js'
import { createFileIO } from '../../lib/io/index.js'
import { runKafkaPipeline } from '../../lib/local/kafka-pipeline.js'

const args = JSON.parse(process.argv[2] ?? '{}') as { topics: string[]; groupId: string; batchSize: number; eventShape?: 'msk' | 'self-managed'; killAtCommit?: number }
const config = loadConfig(process.env)
const clients = createClients({ endpoints: { s3: process.env.AWS_ENDPOINT_URL_S3, dynamodb: process.env.AWS_ENDPOINT_URL_DYNAMODB }, maxAttempts: 3 })
let invoked = 0
const result = await runKafkaPipeline(config, clients, createFileIO(clients), {
  connection: { brokers: [process.env.KAFKA_TEST_BOOTSTRAP!] },
  topics: args.topics,
  groupId: args.groupId,
  batchSize: args.batchSize,
  eventShape: args.eventShape,
  commitEveryMs: 300,
  beforeCommit: (batch) => {
    invoked++
    process.stdout.write(`progress ${JSON.stringify({ invoked, records: batch.length })}\n`)
    if (invoked === args.killAtCommit) process.kill(process.pid, 'SIGKILL')
  },
})
process.stdout.write(`done ${JSON.stringify({ delivered: result.delivered, batches: result.batches })}\n`)
process.exit(0)
