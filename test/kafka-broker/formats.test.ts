/**
 * Two topics with different value formats on one broker, one pipeline: JSON, and Avro in the
 * Confluent wire format with its schema in a schema registry. No real registry can be run here:
 * Confluent's Schema Registry is not served from the package registries this project may use,
 * and Apicurio's is a Quarkus application far beyond this suite's time budget. So the registry
 * is the local stub of test/helpers/registry.ts, which speaks the Confluent REST API over real
 * HTTP. Values are read back with hyparquet, not Floe's code.
 */
import { GetObjectCommand } from '@aws-sdk/client-s3'
import avro from 'avsc'
import { parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { confluentFrame } from '../../lib/codec/confluent.js'
import { kafkaClient } from '../../lib/local/kafka-client.js'
import { runKafkaPipeline } from '../../lib/local/kafka-pipeline.js'
import { readTable } from '../chaos/verify.js'
import { testAws } from '../helpers/aws.js'
import { startTestRegistry, type TestRegistry } from '../helpers/registry.js'
import { connection, createTopic, NAMESPACE, readTopic, testPipeline, topicName } from './support.js'

const orderSchema = { type: 'record', name: 'Order', namespace: 'shop', fields: [{ name: 'order_id', type: 'long' }, { name: 'customer', type: 'string' }, { name: 'total_cents', type: 'long' }] }

async function columnValues(catalogTable: string, table: string, column: string): Promise<unknown[]> {
  const aws = testAws()
  const contents = await readTable(aws.ddb, aws.s3, catalogTable, NAMESPACE, table)
  const out: unknown[] = []
  for (const path of contents?.dataFiles ?? []) {
    const [, bucket, key] = /^s3:\/\/([^/]+)\/(.+)$/.exec(path)!
    const body = await aws.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))
    const bytes = await body.Body!.transformToByteArray()
    const rows = (await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer, compressors, columns: [column] })) as Record<string, unknown>[]
    out.push(...rows.map((r) => r[column]))
  }
  return out
}

describe('two topics, JSON and Avro (Confluent wire format, registry stub)', () => {
  let registry: TestRegistry
  beforeAll(async () => {
    registry = await startTestRegistry()
  })
  afterAll(async () => registry.close())

  it('each topic lands in its table with its own format', async () => {
    const jsonTopic = topicName('clicks')
    const avroTopic = topicName('orders')
    await Promise.all([createTopic(jsonTopic, 2), createTopic(avroTopic, 2)])
    const id = await registry.register(`${avroTopic}-value`, orderSchema)
    const type = avro.Type.forSchema(orderSchema as avro.Schema)
    const producer = kafkaClient(connection()).producer({ idempotent: true, maxInFlightRequests: 1 })
    await producer.connect()
    try {
      await producer.send({ topic: jsonTopic, acks: -1, messages: Array.from({ length: 150 }, (_, i) => ({ partition: i % 2, value: JSON.stringify({ page: `/p/${i}`, ms: i * 7 }) })) })
      await producer.send({
        topic: avroTopic,
        acks: -1,
        messages: Array.from({ length: 120 }, (_, i) => ({ partition: i % 2, key: `o${i}`, value: Buffer.from(confluentFrame(id, type.toBuffer({ order_id: 1_000 + i, customer: `c${i % 7}`, total_cents: i * 100 }))) })),
      })
    } finally {
      await producer.disconnect()
    }
    const p = await testPipeline([jsonTopic, avroTopic], { FLOE_SCHEMA_REGISTRY_URL: registry.url }, { formats: [{ topic: avroTopic, value: 'avro-confluent' }] })
    const run = await runKafkaPipeline(p.config, p.clients, p.io, { connection: connection(), topics: [jsonTopic, avroTopic], groupId: `g-${jsonTopic}`, batchSize: 100, commitEveryMs: 500 })
    expect(run.delivered).toBe(270)

    for (const topic of [jsonTopic, avroTopic]) {
      const rows = await p.rows(topic)
      expect(new Set(rows.keys())).toEqual(new Set((await readTopic(topic)).keys()))
      expect([...rows.values()].every((n) => n === 1)).toBe(true)
      expect((await p.deadLetters(topic)).size).toBe(0)
    }
    const catalogTable = p.config.catalogTable
    expect((await columnValues(catalogTable, avroTopic, 'order_id')).map(Number).sort((a, b) => a - b)).toEqual(Array.from({ length: 120 }, (_, i) => 1_000 + i))
    expect((await columnValues(catalogTable, avroTopic, 'total_cents')).reduce((n: number, v) => n + Number(v), 0)).toBe(Array.from({ length: 120 }, (_, i) => i * 100).reduce((a, b) => a + b, 0))
    expect(new Set(await columnValues(catalogTable, jsonTopic, 'page')).size).toBe(150)
    expect(registry.requests.some((r) => r === `GET /schemas/ids/${id}`)).toBe(true)
  })
})
