/**
 * The optional `_kafka` struct column (table option `kafkaMetadata`): where each row came from,
 * like Kafka Connect's Iceberg sink `_kafka_metadata`. Types:
 *   topic string, partition int, offset long, timestamp timestamptz, key binary or string,
 *   headers list<struct<key string, value binary>> (a list, not a map: Kafka allows repeated keys).
 * Values are given as coercion accepts them (offset bigint, timestamp epoch millis, bytes as
 * Uint8Array).
 *
 * `key` is created `string` when the table is created (or given `_kafka`) from records of a topic
 * with a key format (FLOE_ROUTES `formats[].key`), else `binary` (raw bytes). An existing column's
 * type is never changed: a binary column always gets the raw bytes; a string column gets
 * `keyText` of the decoded key when the topic has a key format, else of the raw bytes.
 */
import { isLosslessNumber } from 'lossless-json'
import type { KafkaRecord } from '../kafka/index.js'
import type { IcebergType, NestedField, Schema } from '../schema/index.js'

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
export function kafkaField(parts: readonly KafkaPart[], nextId: number, keyType: KafkaKeyType = 'binary'): { field: NestedField; lastId: number } {
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
        type = keyType
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

/** The Iceberg type of `_kafka.key` the writer can fill. */
export type KafkaKeyType = 'binary' | 'string'

/** The type of the schema's `_kafka.key` field (undefined: no such field, or a type the writer does not fill). */
export function kafkaKeyType(schema: Schema): KafkaKeyType | undefined {
  const kafka = schema.fields.find((f) => f.name === KAFKA_COLUMN)
  if (kafka === undefined || typeof kafka.type !== 'object' || kafka.type.type !== 'struct') return undefined
  const key = kafka.type.fields.find((f) => f.name === 'key')
  return key?.type === 'string' || key?.type === 'binary' ? key.type : undefined
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * A key as the text of a `string` `_kafka.key` column:
 * - null → null; a string → itself (a `string`-format key, or a JSON/Avro/envelope key that is a bare string);
 * - bytes (raw keys of a topic without a key format, `bytes`-format or Avro `bytes` keys) → the
 *   text when they are valid UTF-8, else their standard base64 (RFC 4648, padded);
 * - anything else (numbers, records, arrays, maps…) → canonical JSON (`canonicalJson`).
 */
export function keyText(key: unknown): string | null {
  if (key === null || key === undefined) return null
  if (typeof key === 'string') return key
  if (key instanceof Uint8Array) {
    try {
      return utf8.decode(key)
    } catch {
      return Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('base64')
    }
  }
  return canonicalJson(key)
}

/**
 * Deterministic JSON text of a decoded value: object keys sorted (UTF-16 code unit order, as
 * RFC 8785), no whitespace; bigint and exact decimal numbers (lossless-json LosslessNumber) as
 * their digits; bytes as a base64 string; Maps as objects (keys as text); NaN and ±Infinity as the
 * strings "NaN", "Infinity", "-Infinity"; undefined as null.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || value === undefined) return 'null'
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value)
    case 'boolean':
      return value ? 'true' : 'false'
    case 'bigint':
      return value.toString()
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : JSON.stringify(String(value))
  }
  if (value instanceof Uint8Array) return JSON.stringify(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64'))
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value instanceof Map) return objectJson([...value].map(([k, v]) => [String(k), v]))
  if (isLosslessNumber(value)) return value.value
  return objectJson(Object.entries(value as Record<string, unknown>))
}

function objectJson(entries: [string, unknown][]): string {
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
}

/** The `_kafka` value of a record, for the parts asked for. */
export function kafkaValue(record: KafkaRecord, parts: readonly KafkaPart[], key: unknown = record.key): Record<string, unknown> {
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
        out.key = key
        break
      case 'headers':
        out.headers = record.headers.map((h) => ({ key: h.key, value: h.value }))
        break
    }
  }
  return out
}
