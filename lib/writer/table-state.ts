/**
 * A routed table as one invocation sees it (TableState): its metadata, schema and spec, the
 * compiled coercer of that schema, the `_kafka` parts, and what preparing it decided (created,
 * evolved, failed, rejected records). Built from catalog metadata by `stateOf`.
 */
import { currentSchema, defaultSpec, partitionPath, type PartitionSpec, type PartitionTuple, type TableMetadata } from '../iceberg/index.js'
import type { KafkaRecord } from '../kafka/index.js'
import type { Schema } from '../schema/index.js'
import type { TableOptions } from '../config.js'
import { compileCoercer, NEEDS_EXACT, type Coerced, type Coercer } from './columnar/coerce.js'
import { KAFKA_COLUMN, kafkaKeyType, type KafkaKeyType, type KafkaPart } from './kafka-column.js'
import type { TableId } from '../catalog/index.js'

export interface TableState {
  name: string
  id: TableId
  options: TableOptions
  metadata: TableMetadata
  metadataLocation: string
  schema: Schema
  spec: PartitionSpec
  kafka: KafkaPart[]
  /** The type of the schema's `_kafka.key` field, if it has one. */
  kafkaKey?: KafkaKeyType
  /** Set when the table could not be prepared: every record routed to it is a dead letter with this reason. */
  failure?: string
  created?: boolean
  evolvedToSchemaId?: number
  /** Records whose writer schema asks for a change the spec forbids: their dead-letter reasons, by record. */
  rejected?: Map<KafkaRecord, string>
  unknownFieldsIgnored: number
  partitionPath(tuple: PartitionTuple): string
  coerce: Coercer
}

/** A record a table is prepared from. `fast`: set when `value` is JSON.parse's (decode.ts exactJson gives the exact decoding). */
export type Sample = {
  record: KafkaRecord
  value: Record<string, unknown>
  schema?: Schema
  fast?: true
  /**
   * The row `coercedBy` made of `value` while the table was evolved (table-evolve.ts), kept for
   * buildRow so a record is coerced once, not twice; valid only while the table's coercer is
   * still `coercedBy`. Slots on the sample (the writer's Item), not a WeakMap by value: no
   * ephemeron and no wrapper per record for the GC (issue 20).
   */
  coercedBy?: Coercer
  coercedRow?: Coerced
}

export function stateOf(name: string, id: TableId, options: TableOptions, kafka: KafkaPart[], metadata: TableMetadata, metadataLocation: string): TableState {
  const schema = currentSchema(metadata)
  const spec = defaultSpec(metadata)
  return {
    name,
    id,
    options,
    metadata,
    metadataLocation,
    schema,
    spec,
    kafka,
    kafkaKey: kafkaKeyType(schema),
    unknownFieldsIgnored: 0,
    partitionPath: (tuple) => partitionPath(spec, schema, tuple),
    coerce: compileCoercer(schema, { table: name, caseInsensitive: options.caseInsensitive, longsAsNumbers: true }),
  }
}

/** The parts of `state` that follow from new metadata (after a schema commit or a reload). */
export function refreshed(state: TableState, metadata: TableMetadata, metadataLocation: string): Partial<TableState> {
  const s = stateOf(state.name, state.id, state.options, state.kafka, metadata, metadataLocation)
  return { metadata, metadataLocation, schema: s.schema, spec: s.spec, kafkaKey: s.kafkaKey, partitionPath: s.partitionPath, coerce: s.coerce }
}

/** A table that could not be prepared: its records become dead letters with `reason`. */
export function failed(name: string, id: TableId, options: TableOptions, kafka: KafkaPart[], reason: string): TableState {
  const schema: Schema = { type: 'struct', 'schema-id': 0, fields: [] }
  const spec: PartitionSpec = { 'spec-id': 0, fields: [] }
  const metadata = { location: '', properties: {} } as unknown as TableMetadata
  return { name, id, options, metadata, metadataLocation: '', schema, spec, kafka, failure: reason, unknownFieldsIgnored: 0, partitionPath: () => '', coerce: compileCoercer(schema, { table: name, longsAsNumbers: true }) }
}

export const reservedReason = (table: string): string =>
  `table ${table}: field '${KAFKA_COLUMN}' is reserved for the Kafka metadata column (kafkaMetadata is on): rename the field or turn kafkaMetadata off`

/** Coerce JSON.parse's value when `exact` is given (fast), and the exact decoding where the coercer asks for it. */
export function coerceExactly(coerce: Coercer, input: Record<string, unknown>, exact: (() => Record<string, unknown>) | undefined): Coerced {
  if (exact === undefined) return coerce(input)
  try {
    return coerce(input, true)
  } catch (err) {
    if (err !== NEEDS_EXACT) throw err
    return coerce(exact())
  }
}
