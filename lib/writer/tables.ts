/**
 * Per-invocation table state: each routed table is loaded from the injected catalog once, or
 * created (autoCreate) with a schema inferred from this batch's records, the configured
 * partitionBy and idColumns and the optional `_kafka` column; with `evolveSchema` on, what the
 * batch needs (new fields, promoted types, relaxed required fields: ./evolution.ts) is committed
 * through the catalog (addSchema + commit, reloading and planning again on CommitConflictError)
 * BEFORE any row is written, and rows are then written with the new schema. With evolution off
 * unknown fields are ignored and counted.
 *
 * `_kafka.key` (see kafka-column.ts) is created `string` when any record the table is created
 * from comes from a topic with a key format, else `binary`; an existing column keeps its type.
 * The pipeline decodes keys for tables with a string key column (`wantsKeyText`) and hands the
 * decoded values over with `setKey`.
 *
 * A table that cannot be prepared (missing with autoCreate off, or an incompatible change the
 * Iceberg rules reject) is not a crash: its records become dead letters with the reason.
 */
import { AlreadyExistsError, CommitConflictError, IcebergError, NoSuchTableError, RecordError, SchemaError } from '../errors.js'
import { addSchema, currentSchema, defaultSpec } from '../iceberg/metadata.js'
import { parsePartitionBy, partitionPath, partitionTuple } from '../iceberg/partition.js'
import type { PartitionSpec, PartitionTuple, TableMetadata } from '../iceberg/types.js'
import type { KafkaRecord } from '../kafka/event.js'
import type { IcebergType, Schema, StructType } from '../schema/types.js'
import { inferSchema } from '../schema/infer.js'
import { applyColumnHints } from '../schema/hints.js'
import { parseJsonLiterals } from '../codec/index.js'
import { maxFieldId, relaxEmptyStructs } from '../schema/walk.js'
import { withoutV3Fields } from '../schema/evolve.js'
import { compileCoercer, NEEDS_EXACT, type Coerced, type Coercer } from './columnar/coerce.js'
import { encodeParquet } from './columnar/parquet.js'
import { isInside } from '../io/index.js'
import { partitionKeyOf } from './buffers.js'
import { evolutionInput, planEvolution, tableView } from './evolution.js'
import { dataFilePath, dataLocation, type EncodedChunk } from './files.js'
import { excerpt, recordColumns } from './guard.js'

/** S3's limit on an object key (bytes of UTF-8). */
const S3_KEY_BYTES = 1_024
import { hasKafkaColumn, KAFKA_COLUMN, kafkaField, kafkaKeyType, kafkaParts, kafkaValue, keyText, type KafkaKeyType, type KafkaPart } from './kafka-column.js'
import { parseTableName } from './routing.js'
import type { TableOptions } from '../config.js'
import type { TableIdentifier, WriterDeps } from './types.js'

export interface TableState {
  name: string
  id: TableIdentifier
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
  /** Records whose writer schema asks for a change the spec forbids: their dead-letter reasons, by decoded value. */
  rejected?: Map<object, string>
  unknownFieldsIgnored: number
  partitionPath(tuple: PartitionTuple): string
  coerce: Coercer
}

/** `exact`: set when `value` is JSON.parse's (see pipeline.ts decodeJson). */
export type Sample = { record: KafkaRecord; value: Record<string, unknown>; schema?: Schema; exact?: () => Record<string, unknown> }

export class TableSet {
  readonly #deps: WriterDeps
  readonly #states = new Map<string, TableState>()
  readonly #namespaces = new Map<string, Promise<unknown>>()
  /** Decoded keys (from the topics' key formats), by record. */
  readonly #keys = new Map<KafkaRecord, unknown>()
  /**
   * Rows coerced while looking for new fields (#evolve), reused by buildRow when the schema did
   * not change since, so a record is coerced once, not twice (the check cost as much as the
   * coercion: docs/benchmarks.md). Keyed by the decoded value object; the coercer identifies the schema.
   */
  readonly #coerced = new WeakMap<object, { coerce: Coercer; result: Coerced }>()

  constructor(deps: WriterDeps) {
    this.#deps = deps
  }

  get(name: string): TableState | undefined {
    return this.#states.get(name)
  }

  states(): IterableIterator<TableState> {
    return this.#states.values()
  }

  /** Load, create or evolve `name` so every sample fits (or record why it cannot). */
  async prepare(name: string, samples: Sample[]): Promise<TableState> {
    const { config, router } = this.#deps
    const options = router.options(name)
    const id = parseTableName(name, config.routes.defaultNamespace)
    const kafka = kafkaParts(options.kafkaMetadata)
    let state: TableState
    // A value field named like the metadata column would become a second `_kafka` field (or be
    // overwritten): such a record is a dead letter for this table and shapes nothing.
    const usable = kafka.length ? samples.filter((s) => !(KAFKA_COLUMN in s.value) || !this.#reject(name, s.value, reservedReason(name))) : samples
    try {
      state = await this.#loadOrCreate(name, id, options, kafka, usable)
      if (options.evolveSchema) await this.#evolve(state, usable.filter((s) => this.#rejection(name, s.value) === undefined))
    } catch (err) {
      if (!(err instanceof SchemaError || err instanceof NoSuchTableError)) throw err
      state = failed(name, id, options, kafka, err.message)
    }
    this.#states.set(name, state)
    return state
  }

  /** True when `name`'s rows carry the key as text (a prepared table with a string `_kafka.key` column): keys of topics with a key format must be decoded for it. */
  wantsKeyText(name: string): boolean {
    const state = this.#states.get(name)
    return state !== undefined && state.failure === undefined && state.kafka.includes('key') && state.kafkaKey === 'string'
  }

  /** The decoded key of a record (DecodedKey.value), used for string `_kafka.key` columns. */
  setKey(record: KafkaRecord, key: unknown): void {
    this.#keys.set(record, key)
  }

  /** Records the table refused while it was prepared (reserved names, past the column limit), with the reason. */
  readonly #rejected = new Map<string, WeakMap<object, string>>()

  /** Remember that `value` is a dead letter for `table`; returns true (for filters). */
  #reject(table: string, value: object, reason: string): true {
    let m = this.#rejected.get(table)
    if (!m) this.#rejected.set(table, (m = new WeakMap()))
    m.set(value, reason)
    return true
  }

  #rejection(table: string, value: object): string | undefined {
    return this.#rejected.get(table)?.get(value)
  }

  /** A record as a row of the table's current schema (throws RecordError for a bad value). */
  buildRow(state: TableState, record: KafkaRecord, value: Record<string, unknown>, exact?: () => Record<string, unknown>): { row: Record<string, unknown>; partition: PartitionTuple; bytes: number } {
    const rejected = this.#rejection(state.name, value) ?? state.rejected?.get(value)
    if (rejected !== undefined) throw new RecordError(rejected)
    if (state.kafka.length && KAFKA_COLUMN in value) throw new RecordError(reservedReason(state.name))
    const input = this.#input(state, record, value)
    const cached = input === value ? this.#coerced.get(value) : undefined
    if (cached) this.#coerced.delete(value)
    const { row, unknown, bytes } = cached?.coerce === state.coerce ? cached.result : coerceExactly(state.coerce, input, exact && (() => this.#input(state, record, exact())))
    if (unknown.length) state.unknownFieldsIgnored += unknown.length
    if (!state.spec.fields.length) return { row, partition: [], bytes }
    const partition = partitionTuple(state.spec, state.schema, row)
    const problem = this.#pathProblem(state, partition)
    if (problem !== undefined) throw new RecordError(problem)
    return { row, partition, bytes }
  }

  /** The coercer's input: the value, plus the `_kafka` column when the table has one. */
  #input(state: TableState, record: KafkaRecord, value: Record<string, unknown>): Record<string, unknown> {
    if (!state.kafka.length || !hasKafkaColumn(state.schema)) return value
    // A string key column gets text (the decoded key if there is one, else the raw bytes); a binary one the raw bytes.
    const key = state.kafkaKey === 'string' ? keyText(this.#keys.has(record) ? this.#keys.get(record) : record.key) : record.key
    return { ...value, [KAFKA_COLUMN]: kafkaValue(record, state.kafka, key) }
  }

  /** Partition paths checked per table (by partition key): undefined = fine, else the reason. */
  readonly #paths = new WeakMap<TableState, Map<string, string | undefined>>()

  /**
   * A partition value's path must stay short (FLOE_MAX_PARTITION_VALUE_BYTES per escaped value,
   * S3's 1,024-byte key limit for the whole file path) and inside the table's data location.
   */
  #pathProblem(state: TableState, partition: PartitionTuple): string | undefined {
    let cache = this.#paths.get(state)
    if (!cache) this.#paths.set(state, (cache = new Map()))
    const key = partitionKeyOf(partition)
    if (cache.has(key)) return cache.get(key)
    if (cache.size > 10_000) cache.clear()
    const max = this.#deps.config.limits.maxPartitionValueBytes
    const path = state.partitionPath(partition)
    const segments = path.split('/')
    let problem: string | undefined
    const long = segments.findIndex((seg) => Buffer.byteLength(seg) > max)
    if (long >= 0) {
      const field = state.spec.fields[long]!
      problem = `table ${state.name}: partition ${field.name} value ${JSON.stringify(excerpt(String(partition[long])))} is ${Buffer.byteLength(segments[long]!)} bytes in the file path, more than FLOE_MAX_PARTITION_VALUE_BYTES=${max}`
    } else {
      const location = dataLocation(state.metadata)
      const file = dataFilePath(state.metadata, path, 'x'.repeat(64), 0)
      const keyBytes = Buffer.byteLength(file.replace(/^[a-z0-9]+:\/\/[^/]*\//, ''))
      if (keyBytes > S3_KEY_BYTES) problem = `table ${state.name}: partition path of ${Buffer.byteLength(path)} bytes makes data file keys of ${keyBytes} bytes, more than S3's ${S3_KEY_BYTES}`
      else if (segments.some((seg) => seg === '' || seg === '.' || seg === '..') || !isInside(location, file))
        problem = `table ${state.name}: partition path ${excerpt(JSON.stringify(path))} would leave the table location ${location}`
    }
    cache.set(key, problem)
    return problem
  }

  encode(state: TableState, rows: Record<string, unknown>[]): Promise<EncodedChunk> {
    const compression = state.metadata.properties['write.parquet.compression-codec'] ?? this.#deps.config.parquetCompression
    return encodeParquet(state.schema, rows, { compression, properties: state.metadata.properties })
  }

  async #loadOrCreate(name: string, id: TableIdentifier, options: TableOptions, kafka: KafkaPart[], samples: Sample[]): Promise<TableState> {
    const { catalog } = this.#deps
    try {
      const loaded = await catalog.loadTable(id)
      return stateOf(name, id, options, kafka, loaded.metadata, loaded.metadataLocation)
    } catch (err) {
      if (!(err instanceof NoSuchTableError)) throw err
      if (!options.autoCreate) throw new NoSuchTableError(`table ${name} does not exist and autoCreate is off`, { cause: err })
    }
    // The format's own schema (Avro, Connect envelope) when every record has one, else inference.
    // Floe creates format-v2 tables: a v3-only field (Avro timestamp-nanos) is left out, and evolution dead-letters its values.
    const declared = samples.every((s) => s.schema !== undefined) && samples[0]?.schema ? withoutV3Fields(samples[0].schema) : undefined
    let schema = declared
      ? withIdColumns(options.evolveSchema ? relaxEmptyStructs(declared) : optionalFields(declared), options.idColumns)
      : applyColumnHints(inferSchema(this.#literalValues(this.#withinColumns(name, samples)), { idColumns: options.idColumns, maxDepth: this.#deps.config.limits.maxDepth }), options.columns)
    if (kafka.length) {
      const { field } = kafkaField(kafka, maxFieldId(schema) + 1, this.#keyType(samples))
      schema = { ...schema, fields: [...schema.fields, field] }
    }
    let spec: PartitionSpec
    try {
      spec = parsePartitionBy(schema, options.partitionBy)
    } catch (err) {
      // e.g. day(ts) while these records have no `ts`: the table cannot be created from them.
      if (!(err instanceof IcebergError)) throw err
      throw new SchemaError(`table ${name}: cannot create with partitionBy ${JSON.stringify(options.partitionBy)}: ${err.message}`, { cause: err })
    }
    try {
      let ns = this.#namespaces.get(id.namespace)
      if (ns === undefined) {
        ns = Promise.resolve(catalog.createNamespace?.(id.namespace)).catch((e: unknown) => {
          if (!(e instanceof AlreadyExistsError)) throw e
        })
        this.#namespaces.set(id.namespace, ns)
      }
      await ns
      // formatVersion travels as Iceberg's reserved create-time property `format-version` (every catalog, REST included, reads it).
      const properties = options.formatVersion === undefined ? options.properties : { ...options.properties, 'format-version': String(options.formatVersion) }
      const created = await catalog.createTable(id, { schema, spec, properties })
      const state = stateOf(name, id, options, kafka, created.metadata, created.metadataLocation)
      state.created = true
      return state
    } catch (err) {
      // Another writer created it first: use theirs (evolution then adds what ours has more).
      if (!(err instanceof AlreadyExistsError)) throw err
    }
    const loaded = await catalog.loadTable(id)
    return stateOf(name, id, options, kafka, loaded.metadata, loaded.metadataLocation)
  }

  /**
   * The samples a new table is inferred from, in batch order, while their columns together stay
   * within FLOE_MAX_COLUMNS; a record that would pass it is a dead letter for this table (it
   * would otherwise widen the table through evolution right after).
   */
  #withinColumns(name: string, samples: Sample[]): Sample[] {
    const max = this.#deps.config.limits.maxColumns
    const union = new Set<string>()
    return samples.filter((s) => {
      const added = [...recordColumns(s.value)].filter((c) => !union.has(c))
      if (union.size + added.length <= max) {
        for (const c of added) union.add(c)
        return true
      }
      return !this.#reject(name, s.value, `table ${name}: record would bring the new table to ${union.size + added.length} columns, more than FLOE_MAX_COLUMNS=${max}`)
    })
  }

  /**
   * The values inference reads: for `json` topics the record re-read with every number as its
   * literal text (lib/codec parseJsonLiterals), so `1.0` infers a double and `1` a long. Only
   * records a type is inferred from pay for this (a new table, a record with a new field).
   */
  #literalValues(samples: Sample[]): Record<string, unknown>[] {
    const format = this.#deps.decoders.valueFormat
    return samples.map((s) => (format?.(s.record.topic) === 'json' && s.record.value ? parseJsonLiterals(s.record.value) : undefined) ?? s.value)
  }

  /** `_kafka.key`'s type for a column created from these records: string when any comes from a topic with a key format. */
  #keyType(samples: Sample[]): KafkaKeyType {
    const decoders = this.#deps.decoders
    if (decoders.keyFormat === undefined || decoders.decodeKey === undefined) return 'binary'
    return samples.some((s) => decoders.keyFormat!(s.record.topic) !== undefined) ? 'string' : 'binary'
  }

  /**
   * Evolve the table so this batch's records fit (./evolution.ts has the rules and sources), and
   * commit the new schema through the catalog before any row is written. On CommitConflictError
   * (another writer, or an outside engine, changed the table first) reload and plan again on top
   * of their schema, so both changes land.
   */
  async #evolve(state: TableState, samples: Sample[]): Promise<void> {
    const { catalog, config } = this.#deps
    const input = evolutionInput(samples, state.coerce, (value, result) => this.#coerced.set(value, { coerce: state.coerce, result }))
    const kafkaMissing = state.kafka.length > 0 && !hasKafkaColumn(state.schema)
    if (input.declared.length === 0 && input.plain.length === 0 && input.failing.length === 0 && !kafkaMissing) return
    // New fields of JSON records are typed from their literals (`1.0` a double) and the table's `columns` hints.
    const bySample = new Map(samples.map((s) => [s.value as object, s]))
    const maxDepth = config.limits.maxDepth
    const infer = (values: Record<string, unknown>[]) =>
      applyColumnHints(inferSchema(this.#literalValues(values.map((v) => bySample.get(v)!)), { maxDepth }), state.options.columns)
    for (let attempt = 0; ; attempt++) {
      const plan = planEvolution(tableView(state), input, infer)
      state.rejected = plan.rejected
      let target = plan.target
      if (state.kafka.length && !hasKafkaColumn(target ?? state.schema)) {
        const base = target ?? state.schema
        const { field } = kafkaField(state.kafka, Math.max(state.metadata['last-column-id'], maxFieldId(base)) + 1, this.#keyType(samples))
        target = { ...base, fields: [...base.fields, field] }
      }
      if (target === undefined) return
      const metadata = addSchema(state.metadata, target)
      try {
        const { metadataLocation } = await catalog.commit(state.id, { base: state.metadataLocation, metadata })
        Object.assign(state, refreshed(state, metadata, metadataLocation))
        state.evolvedToSchemaId = state.schema['schema-id']
        return
      } catch (err) {
        if (!(err instanceof CommitConflictError) || attempt >= config.commitRetries) throw err
        const loaded = await catalog.loadTable(state.id)
        Object.assign(state, refreshed(state, loaded.metadata, loaded.metadataLocation))
      }
    }
  }
}

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

const reservedReason = (table: string): string =>
  `table ${table}: field '${KAFKA_COLUMN}' is reserved for the Kafka metadata column (kafkaMetadata is on): rename the field or turn kafkaMetadata off`

function stateOf(name: string, id: TableIdentifier, options: TableOptions, kafka: KafkaPart[], metadata: TableMetadata, metadataLocation: string): TableState {
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

function refreshed(state: TableState, metadata: TableMetadata, metadataLocation: string): Partial<TableState> {
  const s = stateOf(state.name, state.id, state.options, state.kafka, metadata, metadataLocation)
  return { metadata, metadataLocation, schema: s.schema, spec: s.spec, kafkaKey: s.kafkaKey, partitionPath: s.partitionPath, coerce: s.coerce }
}

function failed(name: string, id: TableIdentifier, options: TableOptions, kafka: KafkaPart[], reason: string): TableState {
  const schema: Schema = { type: 'struct', 'schema-id': 0, fields: [] }
  const spec: PartitionSpec = { 'spec-id': 0, fields: [] }
  const metadata = { location: '', properties: {} } as unknown as TableMetadata
  return { name, id, options, metadata, metadataLocation: '', schema, spec, kafka, failure: reason, unknownFieldsIgnored: 0, partitionPath: () => '', coerce: compileCoercer(schema, { table: name, longsAsNumbers: true }) }
}

/**
 * A declared schema (Avro, Connect) with every struct field optional: for tables created with
 * `evolveSchema` off. Producers drop fields in later schema versions (Avro allows it for fields
 * with defaults); without evolution to relax it (required → optional), a required column would
 * turn every later record into a dead letter. With evolution on, non-nullable fields stay
 * required (readers see the producer's contract) and a version that drops one relaxes it.
 * Identifier columns are made required again by withIdColumns.
 */
function optionalFields<T extends StructType>(struct: T): T {
  const relax = (type: IcebergType): IcebergType => {
    if (typeof type !== 'object') return type
    if (type.type === 'struct') return optionalFields(type)
    if (type.type === 'list') return { ...type, element: relax(type.element) }
    return { ...type, value: relax(type.value) }
  }
  return { ...struct, fields: struct.fields.map((f) => ({ ...f, required: false, type: relax(f.type) })) }
}

/** Mark identifier columns required and list them (Iceberg requires identifier fields to be required). */
function withIdColumns(schema: Schema, idColumns: string[]): Schema {
  if (idColumns.length === 0) return schema
  const ids: number[] = []
  const fields = schema.fields.map((f) => {
    if (!idColumns.includes(f.name)) return f
    ids.push(f.id)
    return { ...f, required: true }
  })
  const missing = idColumns.filter((c) => !schema.fields.some((f) => f.name === c))
  if (missing.length) throw new SchemaError(`idColumns ${missing.map((c) => `'${c}'`).join(', ')} not in the records' schema`)
  return { ...schema, fields, 'identifier-field-ids': ids }
}
