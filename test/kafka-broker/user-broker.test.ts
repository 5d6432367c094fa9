/**
 * `floe start --kafka host:port --topics …`: the CLI reading from a broker it did not start (the
 * test run's broker stands in for yours). Nothing is produced; the topic's records land in a
 * table named after it, and the summary counts what was read.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { kafkaClient } from '../../lib/local/kafka-client.js'
import { testAws, uniqueName } from '../helpers/aws.js'
import { connection, createTopic, topicName } from './support.js'

describe('floe start --kafka host:port', () => {
  const dir = mkdtempSync(join(tmpdir(), 'floe-user-broker-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('reads the named topics from your broker into tables, and says so in the summary', async () => {
    const topic = topicName('yours')
    await createTopic(topic, 2)
    const producer = kafkaClient(connection()).producer({ idempotent: true, maxInFlightRequests: 1 })
    await producer.connect()
    await producer.send({ topic, acks: -1, messages: Array.from({ length: 300 }, (_, i) => ({ partition: i % 2, value: JSON.stringify({ i, name: `n${i}` }) })) })
    await producer.disconnect()

    const aws = testAws()
    const run = spawnSync(process.execPath, ['bin/floe.mjs', 'start', '--kafka', connection().brokers[0]!, '--topics', topic, '--dir', dir, '--json', '--quiet'], {
      env: {
        ...process.env,
        AWS_ENDPOINT_URL_S3: aws.endpoints.s3,
        AWS_ENDPOINT_URL_DYNAMODB: aws.endpoints.dynamodb,
        FLOE_PIPELINE: uniqueName('user-broker'),
        FLOE_CONTROL_TABLE: uniqueName('user-broker-control'),
        FLOE_CATALOG_TABLE: uniqueName('user-broker-iceberg'),
        FLOE_KAFKA_GROUP_ID: `g-${topic}`,
      },
      encoding: 'utf8',
      timeout: 240_000,
    })
    expect(run.status, run.stderr + run.stdout).toBe(0)
    expect(run.stdout).toContain(`kafka: consumer group g-${topic} reading ${topic} from ${connection().brokers[0]}`)
    expect(run.stdout).not.toContain('local broker')
    const summary = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { produced: number; deadLetters: number; tables: { table: string; addedRows: number }[] }
    expect(summary.produced).toBe(300)
    expect(summary.deadLetters).toBe(0)
    expect(summary.tables).toEqual([expect.objectContaining({ table: `default.${topic}`, addedRows: 300 })])
  })
})
