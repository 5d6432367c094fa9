/**
 * Dead letters (DESIGN.md invariant 8): a record that cannot be decoded, routed or coerced is
 * data, not a crash. The writer collects them per Kafka partition and writes one NDJSON object
 * per (topic, partition) per batch under `FLOE_DLQ`, BEFORE the registration transaction, so a
 * dead letter is never lost (if registration then fails, the mapping retries and rewrites it).
 *
 * Keys are deterministic — `<dlq>/<pipeline>/<topic>/<partition>/<first offset, 20 digits>.ndjson`,
 * the first offset being the lowest offset among this batch's dead letters of the partition — so
 * a retry of the same batch overwrites the object instead of adding another. The object's
 * content is deterministic too (no writer id, no wall clock), so two writers racing on the same
 * batch write identical bytes. Offsets are decimal strings; key, value and header values base64.
 */
import type { FileIO } from '../io/types.js'
import type { KafkaRecord } from '../kafka/event.js'

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
    reason: d.reason,
  }
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')

/** `<dlq>/<pipeline>/<topic>/<partition>/<offset>.ndjson`; the topic is URI-encoded (a topic may hold `/`-free but odd characters). */
export function deadLetterPath(dlq: string, pipeline: string, topic: string, partition: number, firstOffset: bigint): string {
  const off = firstOffset < 0n ? `neg${(-firstOffset).toString()}` : firstOffset.toString().padStart(20, '0')
  return `${dlq.replace(/\/+$/, '')}/${encodeURIComponent(pipeline)}/${encodeURIComponent(topic)}/${partition}/${off}.ndjson`
}

/**
 * Write the dead letters, one object per (topic, partition). Returns the paths written.
 * Lines are sorted by offset (then by table) so the bytes do not depend on processing order.
 */
export async function writeDeadLetters(io: FileIO, dlq: string, pipeline: string, letters: readonly DeadLetter[]): Promise<string[]> {
  const byPartition = new Map<string, DeadLetter[]>()
  for (const d of letters) {
    const k = `${d.record.topic}\u0000${d.record.partition}`
    const list = byPartition.get(k)
    if (list) list.push(d)
    else byPartition.set(k, [d])
  }
  const paths: string[] = []
  await Promise.all(
    [...byPartition.values()].map(async (list) => {
      list.sort((a, b) => (a.record.offset < b.record.offset ? -1 : a.record.offset > b.record.offset ? 1 : (a.table ?? '').localeCompare(b.table ?? '')))
      const valid = list.filter((d) => d.record.offset >= 0n)
      const first = valid.length ? valid[0]!.record.offset : list[0]!.record.offset
      const { topic, partition } = list[0]!.record
      const path = deadLetterPath(dlq, pipeline, topic, partition, first)
      const body = list.map((d) => JSON.stringify(deadLetterLine(pipeline, d))).join('\n') + '\n'
      await io.write(path, body, { contentType: 'application/x-ndjson' })
      paths.push(path)
    }),
  )
  return paths.sort()
}
