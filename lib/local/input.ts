/**
 * `floe start --input FILE.ndjson`: Kafka records as JSON lines — `topic`, `partition`, optional
 * `offset` (number or decimal string; default: after the partition's last one), `timestamp` (epoch
 * ms or ISO-8601; default now), `key` (string or null), `value` (any JSON value: an object is
 * sent as its JSON text, a string as its UTF-8 bytes), `headers` ({name: string} or
 * [{key, value}]). A malformed line fails the whole input with its line number.
 */
import { readFileSync } from 'node:fs'
import { ConfigError } from '../errors.js'
import type { KafkaLog } from './kafka-log.js'

const enc = new TextEncoder()

interface InputLine {
  topic?: unknown
  partition?: unknown
  offset?: unknown
  timestamp?: unknown
  key?: unknown
  value?: unknown
  headers?: unknown
}

/** Append the file's records to the log; returns how many. `positions` are where consumers resume. */
export function readInputFile(file: string, log: KafkaLog, positions: Map<string, bigint>): number {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new ConfigError('--input', `cannot read ${file}: ${(err as Error).message}`)
  }
  const next = new Map(positions)
  let n = 0
  text.split('\n').forEach((raw, i) => {
    if (!raw.trim()) return
    const where = `${file}:${i + 1}`
    let line: InputLine
    try {
      line = JSON.parse(raw) as InputLine
    } catch (err) {
      throw new ConfigError('--input', `${where}: not JSON (${(err as Error).message})`)
    }
    if (typeof line.topic !== 'string' || line.topic === '') throw new ConfigError('--input', `${where}: "topic" must be a non-empty string`)
    const partition = line.partition ?? 0
    if (typeof partition !== 'number' || !Number.isInteger(partition) || partition < 0)
      throw new ConfigError('--input', `${where}: "partition" must be a non-negative integer, got ${JSON.stringify(line.partition)}`)
    const key = `${line.topic}-${partition}`
    let offset: bigint
    if (line.offset === undefined || line.offset === null) offset = next.get(key) ?? log.endOffset(key)
    else if ((typeof line.offset === 'number' && Number.isSafeInteger(line.offset)) || (typeof line.offset === 'string' && /^\d+$/.test(line.offset)))
      offset = BigInt(line.offset)
    else throw new ConfigError('--input', `${where}: "offset" must be an integer, got ${JSON.stringify(line.offset)}`)
    if (offset < log.endOffset(key)) throw new ConfigError('--input', `${where}: offset ${offset} of ${key} is not after the previous record's`)
    const timestamp = typeof line.timestamp === 'number' ? line.timestamp : typeof line.timestamp === 'string' ? Date.parse(line.timestamp) : Date.now()
    if (!Number.isFinite(timestamp)) throw new ConfigError('--input', `${where}: "timestamp" is not a date: ${JSON.stringify(line.timestamp)}`)
    const value = line.value === undefined || line.value === null ? null : enc.encode(typeof line.value === 'string' ? line.value : JSON.stringify(line.value))
    const headers = Array.isArray(line.headers)
      ? (line.headers as { key: string; value: string }[]).map((h) => ({ key: String(h.key), value: enc.encode(String(h.value)) }))
      : Object.entries((line.headers ?? {}) as Record<string, unknown>).map(([k, v]) => ({ key: k, value: enc.encode(String(v)) }))
    log.append({ topic: line.topic, partition, offset, timestamp, key: line.key == null ? null : enc.encode(String(line.key)), value, headers })
    next.set(key, offset + 1n)
    n++
  })
  return n
}
