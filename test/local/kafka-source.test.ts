/**
 * The Kafka source's parts that need no broker: `floe start --kafka` flags, connection options
 * (flags over FLOE_KAFKA_* settings), the broker's pinned version and configuration, and the
 * self-managed event the poller hands the writer — the shape of AWS's published sample, which
 * the writer's own event parser accepts.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../lib/config.js'
import { ConfigError } from '../../lib/errors.js'
import { parseKafkaEvent } from '../../lib/kafka/index.js'
import { serverProperties } from '../../lib/local/kafka-broker.js'
import { connectionFrom, parseBrokers } from '../../lib/local/kafka-client.js'
import { kafkaVersion } from '../../lib/local/kafka-jars.js'
import { buildSelfManagedEvent } from '../../lib/local/kafka-log.js'
import { takeKafkaArgs } from '../../lib/local/kafka-start.js'
import { fixturesDir } from '../helpers/fixtures.js'

const settings = (env: Record<string, string> = {}) => loadConfig({ FLOE_WAREHOUSE: 'file:///tmp/w', ...env }).localKafka

describe('floe start --kafka flags', () => {
  it('no --kafka: argv untouched, no Kafka source', () => {
    expect(takeKafkaArgs(['--records', '10', '--s3'])).toEqual({ argv: ['--records', '10', '--s3'] })
  })

  it('--kafka alone is the local broker; the other flags stay for floe start', () => {
    const { argv, kafka } = takeKafkaArgs(['--kafka', '--records', '10'])
    expect(argv).toEqual(['--records', '10'])
    expect(kafka).toMatchObject({ brokers: undefined, follow: false, eventShape: 'self-managed' })
  })

  it('--kafka host:port[,…] with topics, follow, SASL and TLS flags', () => {
    const { argv, kafka } = takeKafkaArgs(['--kafka', 'b1:9096,b2:9096', '--topics', 'orders, clicks', '--follow', '--kafka-sasl=scram-sha-512', '--kafka-user', 'u', '--kafka-password', 'p', '--kafka-tls', '--quiet'])
    expect(argv).toEqual(['--quiet'])
    expect(kafka).toEqual({
      brokers: ['b1:9096', 'b2:9096'],
      topics: ['orders', 'clicks'],
      follow: true,
      eventShape: 'self-managed',
      flags: { saslMechanism: 'scram-sha-512', saslUsername: 'u', saslPassword: 'p', tls: true, tlsCa: undefined },
    })
  })

  it('rejects bad values and Kafka flags without --kafka, naming the flag', () => {
    expect(() => takeKafkaArgs(['--kafka', 'not a broker'])).toThrow(ConfigError)
    expect(() => parseBrokers('--kafka', 'b1:9092,nohost')).toThrow(/--kafka: expected host:port.*"b1:9092,nohost"/)
    expect(() => takeKafkaArgs(['--follow'])).toThrow(/--follow: only with --kafka/)
    expect(() => takeKafkaArgs(['--kafka', '--kafka-event', 'kinesis'])).toThrow(/--kafka-event: expected self-managed or msk, got "kinesis"/)
    expect(() => takeKafkaArgs(['--kafka', '--topics'])).toThrow(/--topics: expects a value/)
  })
})

describe('Kafka connection options', () => {
  it('flags win over FLOE_KAFKA_* settings', () => {
    const s = settings({ FLOE_KAFKA_SASL_MECHANISM: 'plain', FLOE_KAFKA_SASL_USERNAME: 'env-user', FLOE_KAFKA_SASL_PASSWORD: 'env-pw' })
    expect(connectionFrom(['b:9092'], {}, s)).toEqual({ brokers: ['b:9092'], sasl: { mechanism: 'plain', username: 'env-user', password: 'env-pw' } })
    expect(connectionFrom(['b:9092'], { saslMechanism: 'scram-sha-256', saslUsername: 'flag-user' }, s).sasl).toEqual({ mechanism: 'scram-sha-256', username: 'flag-user', password: 'env-pw' })
  })

  it('SASL without credentials, an unknown mechanism or an unreadable CA file fail and say which', () => {
    expect(() => connectionFrom(['b:9092'], { saslMechanism: 'scram-sha-512' }, settings())).toThrow(/needs a username and a password/)
    expect(() => connectionFrom(['b:9092'], { saslMechanism: 'gssapi' }, settings())).toThrow(/--kafka-sasl: expected one of plain, scram-sha-256, scram-sha-512, got "gssapi"/)
    expect(() => connectionFrom(['b:9092'], { tlsCa: '/nonexistent/ca.pem' }, settings())).toThrow(/FLOE_KAFKA_TLS_CA_FILE: cannot read CA file "\/nonexistent\/ca.pem"/)
    expect(() => settings({ FLOE_KAFKA_SASL_MECHANISM: 'kerberos' })).toThrow(/FLOE_KAFKA_SASL_MECHANISM/)
  })

  it('TLS from the setting, without SASL', () => {
    expect(connectionFrom(['b:9093'], {}, settings({ FLOE_KAFKA_TLS: 'true' }))).toEqual({ brokers: ['b:9093'], tls: {} })
  })
})

describe('the local broker', () => {
  it('is pinned in the pom that resolves it, and is a Kafka 4 (KRaft only)', () => {
    expect(kafkaVersion()).toMatch(/^4\.\d+\.\d+$/)
  })

  it('runs broker and controller in one process on loopback, replication factor 1, without topic auto-creation', () => {
    const props = serverProperties(19092, 19093, '/tmp/k')
    expect(props).toContain('process.roles=broker,controller')
    expect(props).toContain('listeners=PLAINTEXT://127.0.0.1:19092,CONTROLLER://127.0.0.1:19093')
    expect(props).toContain('controller.quorum.voters=1@127.0.0.1:19093')
    expect(props).toContain('transaction.state.log.replication.factor=1')
    expect(props).toContain('auto.create.topics.enable=false')
    expect(props).not.toMatch(/zookeeper/)
  })

  it('keeps records of any age unless a retention is asked for (the demo and --input carry old timestamps)', () => {
    expect(serverProperties(19092, 19093, '/tmp/k')).toMatch(/^log\.retention\.hours=-1$/m)
    expect(serverProperties(19092, 19093, '/tmp/k', 24)).toMatch(/^log\.retention\.hours=24$/m)
    expect(serverProperties(19092, 19093, '/tmp/k', 24)).not.toMatch(/retention\.(ms|minutes)=/)
  })
})

describe('the self-managed event the poller builds', () => {
  const sample = JSON.parse(readFileSync(`${fixturesDir('msk-events')}/self-managed.json`, 'utf8')) as { records: Record<string, Record<string, unknown>[]> }

  it('has the published sample\'s shape, and the writer\'s parser reads it back exactly', () => {
    const record = { topic: 'my-topic', partition: 3, offset: 9_007_199_254_740_993n, timestamp: 1_545_084_650_987, key: new TextEncoder().encode('k'), value: new TextEncoder().encode('{"a":1}'), headers: [{ key: 'h', value: new Uint8Array([1, 2]) }] }
    const event = buildSelfManagedEvent([record], 'b1:9092,b2:9092')
    expect(event.eventSource).toBe('SelfManagedKafka')
    expect(event.bootstrapServers).toBe('b1:9092,b2:9092')
    expect(Object.keys(event)).not.toContain('eventSourceArn')
    const ours = event.records['my-topic-3']![0]!
    const theirs = Object.values(sample.records)[0]![0]!
    expect(Object.keys(ours).sort()).toEqual(Object.keys(theirs).sort())
    const [parsed] = parseKafkaEvent(event)
    expect(parsed).toMatchObject({ topic: 'my-topic', partition: 3, offset: 9_007_199_254_740_993n, timestamp: 1_545_084_650_987 })
    expect(parsed!.error).toBeUndefined()
    expect(new TextDecoder().decode(parsed!.value!)).toBe('{"a":1}')
    expect(parsed!.headers).toEqual([{ key: 'h', value: new Uint8Array([1, 2]) }])
  })
})
