/**
 * Dead letters (DESIGN.md invariant 8): a record that cannot be decoded, routed or coerced is
 * data, not a crash. The writer writes each dead record as one NDJSON object under `FLOE_DLQ`,
 * BEFORE the registration transaction, so a dead letter is never lost (if registration then
 * fails, the mapping retries and rewrites it).
 *
 * Keys are deterministic — `<dlq>/<pipeline>/<topic>/<partition>/<offset, 20 digits>.ndjson` —
 * so any retry, zombie or differently batched redelivery of the same record overwrites the same
 * object instead of adding another. The content is deterministic too (no writer id, no wall
 * clock), so racing writers write identical bytes. Offsets are decimal strings; key, value and
 * header values base64.
 */
import { createHash } from 'node:crypto'
import { mapBounded } from '../concurrency.js'
import { redactUrls } from '../errors.js'
import type { FileIO } from '../io/index.js'
import type { KafkaRecord } from '../kafka/index.js'

export interface DeadLetter {
  record: KafkaRecord
  reason: string
  /** `namespace.table` when the failure happened for a known table (coercion, evolution). */
  table?: string
  /** Which stage rejected it: decode, route, coerce, schema, event. */
  stage: 'event' | 'decode' | 'route' | 'schema' | 'coerce'
}

/** One NDJSON line. */
export interface DeadLetterLine {
  pipeline: string
  topic: string
  partition: number
  offset: string
  timestamp: number | null
  timestampType?: string
  key: string | null
  value: string | null
  headers: { key: string; value: string }[]
  table?: string
  stage: DeadLetter['stage']
  reason: string
}

export function deadLetterLine(pipeline: string, d: DeadLetter): DeadLetterLine {
  const r = d.record
  return {
    pipeline,
    topic: r.topic,
    partition: r.partition,
    offset: r.offset.toString(),
    timestamp: Number.isFinite(r.timestamp) ? r.timestamp : null,
    ...(r.timestampType ? { timestampType: r.timestampType } : {}),
    key: r.rawKey !== undefined ? r.rawKey : r.key === null ? null : b64(r.key),
    value: r.rawValue !== undefined ? r.rawValue : r.value === null ? null : b64(r.value),
    headers: r.headers.map((h) => ({ key: h.key, value: b64(h.value) })),
    ...(d.table ? { table: d.table } : {}),
    stage: d.stage,
    reason: redactUrls(d.reason),
  }
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')

/** `<dlq>/<pipeline>/<topic>/<partition>/<offset>.ndjson`; the topic is URI-encoded (a topic may hold `/`-free but odd characters). */
export function deadLetterPath(dlq: string, pipeline: string, topic: string, partition: number, offset: bigint | string): string {
  const off = typeof offset === 'string' ? offset : offset < 0n ? `neg${(-offset).toString()}` : offset.toString().padStart(20, '0')
  return `${dlq.replace(/\/+$/, '')}/${encodeURIComponent(pipeline)}/${encodeURIComponent(topic)}/${partition}/${off}.ndjson`
}

/** Dead-letter objects written at once: enough to hide S3 latency, few enough for the SDK's socket pool. */
const WRITE_CONCURRENCY = 16

/**
 * Write the dead letters: ONE object per (topic, partition, offset), holding that record's lines
 * (several when it failed for several tables). The key depends on nothing but the record, so any
 * attempt at the same offset — a retry, a zombie, a re-batched delivery with other neighbours —
 * overwrites the same object with the same lines: a dead letter is never written twice. (Keys by
 * batch or by offset window would let two differently aligned attempts leave the same offset in
 * two objects, or overwrite each other's letters.) Records whose offset could not be read share
 * one object per partition, keyed by a hash of their raw contents. Returns the paths written.
 */
export async function writeDeadLetters(io: FileIO, dlq: string, pipeline: string, letters: readonly DeadLetter[]): Promise<string[]> {
  const byKey = new Map<string, DeadLetter[]>()
  for (const d of letters) {
    const { topic, partition, offset } = d.record
    const k = `${topic}\u0000${partition}\u0000${offset < 0n ? 'invalid' : offset.toString()}`
    const list = byKey.get(k)
    if (list) list.push(d)
    else byKey.set(k, [d])
  }
  const paths = await mapBounded([...byKey.values()], WRITE_CONCURRENCY, async (list) => {
    list.sort((a, b) => (a.record.offset < b.record.offset ? -1 : a.record.offset > b.record.offset ? 1 : (a.table ?? '').localeCompare(b.table ?? '')))
    const { topic, partition, offset } = list[0]!.record
    const lines = list.map((d) => JSON.stringify(deadLetterLine(pipeline, d)))
    const key = offset < 0n ? `invalid-${createHash('sha256').update(lines.join('\n')).digest('hex').slice(0, 16)}` : offset
    const path = deadLetterPath(dlq, pipeline, topic, partition, key)
    await io.write(path, `${lines.join('\n')}\n`, { contentType: 'application/x-ndjson' })
    return path
  })
  return paths.sort()
}
