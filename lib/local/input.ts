/**
 * `floe start --input FILE.ndjson`: Kafka records as JSON lines — `topic`, `partition`, optional
 * `offset` (number or decimal string; default: after the partition's last one), `timestamp` (epoch
 * ms or ISO-8601; default now), `key` (string or null), `value` (any JSON value: an object is
 * sent as its JSON text, a string as its UTF-8 bytes), `headers` ({name: string} or
 * [{key, value}]).
 *
 * Lines are read losslessly (lossless-json): a value's numbers reach the writer as the digits the
 * file holds — `9007199254740993` stays exact and `1.0` stays a double literal. A line that is not
 * a record (not JSON, no topic, a bad partition, offset or timestamp) is not a reason to stop:
 * it becomes a dead letter naming the file and line, like any other bad record. The file is read
 * and checked before anything starts, so a missing file fails at once.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import { isLosslessNumber, isSafeNumber, parse, stringify } from 'lossless-json'
import { ConfigError } from '../errors.js'
import type { FileIO } from '../io/index.js'
import type { KafkaLog } from './kafka-log.js'

const enc = new TextEncoder()

export interface InputRecord {
  line: number
  topic: string
  partition: number
  offset?: bigint
  timestamp: number
  key: Uint8Array | null
  value: Uint8Array | null
  headers: { key: string; value: Uint8Array }[]
}

export interface MalformedLine {
  line: number
  text: string
  reason: string
}

export interface InputFile {
  file: string
  records: InputRecord[]
  malformed: MalformedLine[]
}

/** Read and check every line; throws (ConfigError naming the file) only when the file cannot be read. */
export function readInputFile(file: string): InputFile {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new ConfigError('--input', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`)
  }
  const out: InputFile = { file, records: [], malformed: [] }
  text.split('\n').forEach((raw, i) => {
    if (!raw.trim()) return
    const r = parseLine(raw, i + 1)
    if ('reason' in r) out.malformed.push(r)
    else out.records.push(r)
  })
  return out
}

const num = (v: unknown): unknown => (isLosslessNumber(v) ? (isSafeNumber(v.toString()) ? Number(v.toString()) : v.toString()) : v)

function parseLine(raw: string, line: number): InputRecord | MalformedLine {
  const bad = (reason: string): MalformedLine => ({ line, text: raw, reason })
  let parsed: unknown
  try {
    parsed = parse(raw)
  } catch (err) {
    return bad(`not JSON (${(err as Error).message})`)
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return bad('not a JSON object')
  const o = parsed as Record<string, unknown>
  if (typeof o.topic !== 'string' || o.topic === '') return bad(`"topic" must be a non-empty string, got ${short(o.topic)}`)
  const partition = num(o.partition ?? 0)
  if (typeof partition !== 'number' || !Number.isInteger(partition) || partition < 0) return bad(`"partition" must be a non-negative integer, got ${short(o.partition)}`)
  const offsetText = o.offset === undefined || o.offset === null ? undefined : isLosslessNumber(o.offset) ? o.offset.toString() : o.offset
  if (offsetText !== undefined && (typeof offsetText !== 'string' || !/^\d{1,19}$/.test(offsetText))) return bad(`"offset" must be a non-negative integer, got ${short(o.offset)}`)
  const ts = num(o.timestamp)
  const timestamp = typeof ts === 'number' ? ts : typeof ts === 'string' ? Date.parse(ts) : ts === undefined || ts === null ? Date.now() : Number.NaN
  if (!Number.isFinite(timestamp)) return bad(`"timestamp" is not a date: ${short(o.timestamp)}`)
  const v = o.value
  // A string value is sent as its bytes; anything else as its JSON text with the digits the file had.
  const value = v === undefined || v === null ? null : enc.encode(typeof v === 'string' ? v : stringify(v)!)
  const headers = Array.isArray(o.headers)
    ? (o.headers as { key: unknown; value: unknown }[]).map((h) => ({ key: String(h.key), value: enc.encode(String(num(h.value))) }))
    : Object.entries((o.headers ?? {}) as Record<string, unknown>).map(([k, hv]) => ({ key: k, value: enc.encode(String(num(hv))) }))
  const key = o.key === undefined || o.key === null ? null : enc.encode(String(num(o.key)))
  return { line, topic: o.topic, partition, ...(offsetText !== undefined ? { offset: BigInt(offsetText) } : {}), timestamp, key, value, headers }
}

function short(v: unknown): string {
  const text = v === undefined ? 'nothing' : (stringify(v) ?? String(v))
  return text.length > 60 ? `${text.slice(0, 60)}…` : text
}

/**
 * Append the records to the log after the positions consumers resume from. A record whose offset
 * is not after its partition's previous one joins the malformed lines. Returns how many were appended.
 */
export function appendInput(input: InputFile, log: KafkaLog, positions: Map<string, bigint>): number {
  const next = new Map(positions)
  let n = 0
  for (const r of input.records) {
    const key = `${r.topic}-${r.partition}`
    const offset = r.offset ?? next.get(key) ?? log.endOffset(key)
    if (offset < log.endOffset(key)) {
      input.malformed.push({ line: r.line, text: '', reason: `offset ${offset} of ${key} is not after the previous record's (${log.endOffset(key) - 1n})` })
      continue
    }
    log.append({ topic: r.topic, partition: r.partition, offset, timestamp: r.timestamp, key: r.key, value: r.value, headers: r.headers })
    next.set(key, offset + 1n)
    n++
  }
  input.malformed.sort((a, b) => a.line - b.line)
  return n
}

/**
 * Malformed lines as dead letters under `<dlq>/<pipeline>/_input/<file>-<hash>/<line>.ndjson`:
 * deterministic keys (a second run of the same file overwrites, never adds), stage `input`, the
 * line's text base64 as the raw value, and a reason naming the file and line.
 */
export async function writeInputDeadLetters(io: FileIO, dlq: string, pipeline: string, input: InputFile): Promise<number> {
  const folder = `${basename(input.file).replace(/[^A-Za-z0-9._-]/g, '_')}-${createHash('sha256').update(input.file).digest('hex').slice(0, 8)}`
  for (const m of input.malformed) {
    const line = {
      pipeline,
      topic: null,
      partition: null,
      offset: null,
      timestamp: null,
      key: null,
      value: Buffer.from(m.text).toString('base64'),
      headers: [],
      stage: 'input',
      source: `${input.file}:${m.line}`,
      reason: `${input.file}:${m.line}: ${m.reason}`,
    }
    const path = `${dlq.replace(/\/+$/, '')}/${encodeURIComponent(pipeline)}/_input/${folder}/${String(m.line).padStart(10, '0')}.ndjson`
    await io.write(path, `${JSON.stringify(line)}\n`, { contentType: 'application/x-ndjson' })
  }
  return input.malformed.length
}
