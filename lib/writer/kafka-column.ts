/**
 * The optional `_kafka` struct column (table option `kafkaMetadata`): where each row came from,
 * like Kafka Connect's Iceberg sink `_kafka_metadata`. Types:
 *   topic string, partition int, offset long, timestamp timestamptz, key binary,
 *   headers list<struct<key string, value binary>> (a list, not a map: Kafka allows repeated keys).
 * Values are given as coercion accepts them (offset bigint, timestamp epoch millis, bytes as
 * Uint8Array).
 */
import type { KafkaRecord } from '../kafka/event.js'
import type { IcebergType, NestedField, Schema } from '../schema/types.js'

export const KAFKA_COLUMN = '_kafka'
export const KAFKA_PARTS = ['topic', 'partition', 'offset', 'timestamp', 'key', 'headers'] as const
export type KafkaPart = (typeof KAFKA_PARTS)[number]

/** Which parts a table option asks for (`true` = all, `false`/[] = none). */
export function kafkaParts(option: boolean | readonly KafkaPart[]): KafkaPart[] {
  if (option === true) return [...KAFKA_PARTS]
  if (option === false) return []
  return KAFKA_PARTS.filter((p) => option.includes(p))
}

/**
 * The `_kafka` field with ids starting at `nextId` (the caller passes last-column-id + 1).
 * Returns the field and the last id used.
 */
export function kafkaField(parts: readonly KafkaPart[], nextId: number): { field: NestedField; lastId: number } {
  let id = nextId
  const fieldId = id++
  const fields: NestedField[] = []
  for (const part of parts) {
    const fid = id++
    let type: IcebergType
    switch (part) {
      case 'topic':
        type = 'string'
        break
      case 'partition':
        type = 'int'
        break
      case 'offset':
        type = 'long'
        break
      case 'timestamp':
        type = 'timestamptz'
        break
      case 'key':
        type = 'binary'
        break
      case 'headers': {
        const elementId = id++
        const keyId = id++
        const valueId = id++
        type = {
          type: 'list',
          'element-id': elementId,
          'element-required': true,
          element: {
            type: 'struct',
            fields: [
              { id: keyId, name: 'key', required: true, type: 'string' },
              { id: valueId, name: 'value', required: false, type: 'binary' },
            ],
          },
        }
        break
      }
    }
    fields.push({ id: fid, name: part, required: false, type })
  }
  return { field: { id: fieldId, name: KAFKA_COLUMN, required: false, type: { type: 'struct', fields } }, lastId: id - 1 }
}

/** True when the schema already has a top-level `_kafka` column. */
export const hasKafkaColumn = (schema: Schema) => schema.fields.some((f) => f.name === KAFKA_COLUMN)

/** The `_kafka` value of a record, for the parts asked for. */
export function kafkaValue(record: KafkaRecord, parts: readonly KafkaPart[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const part of parts) {
    switch (part) {
      case 'topic':
        out.topic = record.topic
        break
      case 'partition':
        out.partition = record.partition
        break
      case 'offset':
        out.offset = record.offset
        break
      case 'timestamp':
        out.timestamp = Number.isFinite(record.timestamp) ? Math.trunc(record.timestamp) : null
        break
      case 'key':
        out.key = record.key
        break
      case 'headers':
        out.headers = record.headers.map((h) => ({ key: h.key, value: h.value }))
        break
    }
  }
  return out
}
