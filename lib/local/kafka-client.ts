/**
 * How local runs connect to Kafka: kafkajs (pure JavaScript, so `npm ci` needs no native build
 * tools or downloaded binaries; it speaks transactions, read_committed, SASL PLAIN/SCRAM and
 * TLS). Its own log is off unless KAFKAJS_DEBUG is set: kafkajs logs every retried coordinator
 * lookup as an ERROR, which on a starting broker is normal; real failures surface as errors.
 */
import { readFileSync } from 'node:fs'
import { Kafka, logLevel, type KafkaConfig, type SASLOptions } from 'kafkajs'
import type { LocalKafkaSettings } from '../config.js'
import { ConfigError } from '../errors.js'

export interface KafkaConnection {
  brokers: string[]
  /** SASL mechanism and credentials (SCRAM is what Amazon MSK, Confluent Cloud, Aiven and Redpanda offer). */
  sasl?: { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; username: string; password: string }
  /** TLS to the brokers; `ca` replaces the system trust store (a PEM file's contents). */
  tls?: { ca?: string; cert?: string; key?: string }
  clientId?: string
}

export const SASL_MECHANISMS = ['plain', 'scram-sha-256', 'scram-sha-512'] as const

/** A kafkajs client for a connection. */
export function kafkaClient(c: KafkaConnection): Kafka {
  const config: KafkaConfig = {
    clientId: c.clientId ?? 'floe-local',
    brokers: c.brokers,
    logLevel: process.env.KAFKAJS_DEBUG ? logLevel.DEBUG : logLevel.NOTHING,
    connectionTimeout: 5_000,
    retry: { retries: 8, initialRetryTime: 200, maxRetryTime: 5_000 },
  }
  if (c.tls) config.ssl = { ...(c.tls.ca ? { ca: [c.tls.ca] } : {}), ...(c.tls.cert ? { cert: c.tls.cert, key: c.tls.key } : {}) }
  if (c.sasl) config.sasl = { mechanism: c.sasl.mechanism, username: c.sasl.username, password: c.sasl.password } as SASLOptions
  return new Kafka(config)
}

/** `host:port[,host:port…]` → brokers, rejecting anything else with the flag's name. */
export function parseBrokers(flag: string, text: string): string[] {
  const brokers = text.split(',').map((b) => b.trim()).filter(Boolean)
  const bad = brokers.find((b) => !/^[^\s:,]+:\d{1,5}$/.test(b))
  if (brokers.length === 0 || bad !== undefined) throw new ConfigError(flag, `expected host:port[,host:port…], got ${JSON.stringify(text)}`)
  return brokers
}

/** Connection options from `floe start` flags, falling back to FLOE_KAFKA_* settings. */
export function connectionFrom(
  brokers: string[],
  flags: { saslMechanism?: string; saslUsername?: string; saslPassword?: string; tls?: boolean; tlsCa?: string },
  settings: Pick<LocalKafkaSettings, 'saslMechanism' | 'saslUsername' | 'saslPassword' | 'tls' | 'tlsCaFile'>,
): KafkaConnection {
  const mechanism = flags.saslMechanism ?? settings.saslMechanism
  if (mechanism !== undefined && !(SASL_MECHANISMS as readonly string[]).includes(mechanism)) {
    throw new ConfigError('--kafka-sasl', `expected one of ${SASL_MECHANISMS.join(', ')}, got ${JSON.stringify(mechanism)}`)
  }
  const username = flags.saslUsername ?? settings.saslUsername
  const password = flags.saslPassword ?? settings.saslPassword
  if (mechanism && (!username || !password)) throw new ConfigError('FLOE_KAFKA_SASL_USERNAME', `SASL ${mechanism} needs a username and a password (--kafka-user/--kafka-password or FLOE_KAFKA_SASL_USERNAME/FLOE_KAFKA_SASL_PASSWORD)`)
  const caFile = flags.tlsCa ?? settings.tlsCaFile
  const tls = flags.tls === true || settings.tls || caFile !== undefined
  let ca: string | undefined
  if (caFile !== undefined) {
    try {
      ca = readFileSync(caFile, 'utf8')
    } catch (err) {
      throw new ConfigError('FLOE_KAFKA_TLS_CA_FILE', `cannot read CA file ${JSON.stringify(caFile)}: ${(err as Error).message}`)
    }
  }
  return {
    brokers,
    ...(mechanism ? { sasl: { mechanism: mechanism as NonNullable<KafkaConnection['sasl']>['mechanism'], username: username!, password: password! } } : {}),
    ...(tls ? { tls: ca ? { ca } : {} } : {}),
  }
}
