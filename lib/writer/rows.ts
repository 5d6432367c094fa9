/**
 * Row building's checks and inputs (tables.ts buildRow): the coercer's input with the `_kafka`
 * column, and the partition-path rules a partition value must pass before a file is named by it.
 */
import { isInside } from '../io/index.js'
import type { PartitionTuple } from '../iceberg/index.js'
import type { KafkaRecord } from '../kafka/index.js'
import { partitionKeyOf } from './buffers.js'
import { dataFilePath, dataLocation } from './files.js'
import { excerpt } from './guard.js'
import { hasKafkaColumn, KAFKA_COLUMN, kafkaValue, keyText } from './kafka-column.js'
import type { TableState } from './table-state.js'

/** S3's limit on an object key (bytes of UTF-8). */
const S3_KEY_BYTES = 1_024

/** The coercer's input: the value, plus the `_kafka` column when the table has one (`keys`: decoded keys by record). */
export function coercerInput(state: TableState, record: KafkaRecord, value: Record<string, unknown>, keys: ReadonlyMap<KafkaRecord, unknown>): Record<string, unknown> {
  if (!state.kafka.length || !hasKafkaColumn(state.schema)) return value
  // A string key column gets text (the decoded key if there is one, else the raw bytes); a binary one the raw bytes.
  const key = state.kafkaKey === 'string' ? keyText(keys.has(record) ? keys.get(record) : record.key) : record.key
  return { ...value, [KAFKA_COLUMN]: kafkaValue(record, state.kafka, key) }
}

/** Partition paths checked per table, by partition key: undefined = fine, else the reason. */
export class PathChecks {
  readonly #cache = new WeakMap<TableState, Map<string, string | undefined>>()
  constructor(readonly maxValueBytes: number) {}

  /**
   * A partition value's path must stay short (FLOE_MAX_PARTITION_VALUE_BYTES per escaped value,
   * S3's 1,024-byte key limit for the whole file path) and inside the table's data location.
   */
  problem(state: TableState, partition: PartitionTuple): string | undefined {
    let cache = this.#cache.get(state)
    if (!cache) this.#cache.set(state, (cache = new Map()))
    const key = partitionKeyOf(partition)
    if (cache.has(key)) return cache.get(key)
    if (cache.size > 10_000) cache.clear()
    const problem = pathProblem(state, partition, this.maxValueBytes)
    cache.set(key, problem)
    return problem
  }
}

function pathProblem(state: TableState, partition: PartitionTuple, max: number): string | undefined {
  const path = state.partitionPath(partition)
  const segments = path.split('/')
  const long = segments.findIndex((seg) => Buffer.byteLength(seg) > max)
  if (long >= 0) {
    const field = state.spec.fields[long]!
    return `table ${state.name}: partition ${field.name} value ${JSON.stringify(excerpt(String(partition[long])))} is ${Buffer.byteLength(segments[long]!)} bytes in the file path, more than FLOE_MAX_PARTITION_VALUE_BYTES=${max}`
  }
  const location = dataLocation(state.metadata)
  const file = dataFilePath(state.metadata, path, 'x'.repeat(64), 0)
  const keyBytes = Buffer.byteLength(file.replace(/^[a-z0-9]+:\/\/[^/]*\//, ''))
  if (keyBytes > S3_KEY_BYTES) return `table ${state.name}: partition path of ${Buffer.byteLength(path)} bytes makes data file keys of ${keyBytes} bytes, more than S3's ${S3_KEY_BYTES}`
  if (segments.some((seg) => seg === '' || seg === '.' || seg === '..') || !isInside(location, file))
    return `table ${state.name}: partition path ${excerpt(JSON.stringify(path))} would leave the table location ${location}`
  return undefined
}
