/**
 * Byte sizes of records, for the writer's memory accounting and metrics. Sizes are of the
 * decoded payload (key, value, header names and values), not of the base64 event text.
 */
import type { KafkaRecord } from './event.js'

/** Payload bytes of one record: key + value + header names (UTF-8) and values. */
export function recordBytes(record: KafkaRecord): number {
  let n = (record.key?.byteLength ?? 0) + (record.value?.byteLength ?? 0)
  for (const h of record.headers) n += Buffer.byteLength(h.key, 'utf8') + h.value.byteLength
  return n
}

/** Payload bytes of a batch. */
export function batchBytes(records: readonly KafkaRecord[]): number {
  let n = 0
  for (const r of records) n += recordBytes(r)
  return n
}

/** Bytes of the raw (base64) key and value as the event carried them: what a dead letter stores. */
export function rawRecordBytes(record: KafkaRecord): number {
  return (record.rawKey?.length ?? 0) + (record.rawValue?.length ?? 0)
}
