/**
 * The one owner of an invocation's tables (TableSet): each routed table is loaded from the
 * injected catalog once, or created (autoCreate) from this batch's records (table-create.ts);
 * with `evolveSchema` on, what the batch needs (new fields, promoted types, relaxed required
 * fields: evolution.ts) is committed BEFORE any row is written (table-evolve.ts), and rows are
 * then written with the new schema. With evolution off unknown fields are ignored and counted.
 * Schema rules live in lib/schema; this module decides only which apply to which table.
 *
 * `_kafka.key` (see kafka-column.ts) is created `string` when any record the table is created
 * from comes from a topic with a key format, else `binary`; an existing column keeps its type.
 * The pipeline decodes keys for tables with a string key column (`wantsKeyText`) and hands the
 * decoded values over with `setKey`.
 *
 * A table that cannot be prepared (missing with autoCreate off, or an incompatible change the
 * Iceberg rules reject) is not a crash: its records become dead letters with the reason.
 */
import { NoSuchTableError, RecordError, SchemaError } from '../errors.js'
import { partitionTuple, type PartitionTuple } from '../iceberg/index.js'
import type { KafkaRecord } from '../kafka/index.js'
import { NEEDS_EXACT, type Coerced } from './columnar/coerce.js'
import { exactJson } from './decode.js'
import { encodeBuilt, encodeParquet, type EncodeOptions } from './columnar/parquet.js'
import type { ArrowBuild } from './columnar/arrow-build.js'
import type { EncodedChunk } from './files.js'
import { KAFKA_COLUMN, kafkaParts } from './kafka-column.js'
import { normalizeTableId } from '../catalog/index.js'
import { coercerInput, PathChecks } from './rows.js'
import { loadExisting, loadOrCreate, proposeTable, type CreateContext, type TableRef } from './table-create.js'
import type { Schema } from '../schema/index.js'
import { evolveTable } from './table-evolve.js'
import { failed, reservedReason, type Sample, type TableState } from './table-state.js'
import type { WriterDeps } from './types.js'

export { coerceExactly, type Sample, type TableState } from './table-state.js'

export class TableSet {
  readonly #deps: WriterDeps
  readonly #states = new Map<string, TableState>()
  readonly #create: CreateContext
  /** Decoded keys (from the topics' key formats), by record. */
  readonly #keys = new Map<KafkaRecord, unknown>()
  /** Records the table refused while it was prepared (reserved names, past the column limit), with the reason, by table. */
  readonly #rejected = new Map<string, WeakMap<KafkaRecord, string>>()
  readonly #paths: PathChecks
  /** Tables loaded ahead by `preload` (null: not in the catalog). */
  readonly #preloaded = new Map<string, TableState | null>()

  constructor(deps: WriterDeps) {
    this.#deps = deps
    this.#paths = new PathChecks(deps.config.limits.maxPartitionValueBytes)
    this.#create = { deps, namespaces: new Map(), reject: (table, record, reason) => this.#reject(table, record, reason) }
  }

  get(name: string): TableState | undefined {
    return this.#states.get(name)
  }

  states(): IterableIterator<TableState> {
    return this.#states.values()
  }

  /** The table reference of a routed name: its options, catalog id and `_kafka` parts. */
  #ref(name: string): TableRef {
    const { config, router } = this.#deps
    const options = router.options(name)
    return { name, options, id: normalizeTableId(name, config.routes.defaultNamespace), kafka: kafkaParts(options.kafkaMetadata) }
  }

  /**
   * An existing table loaded before `prepare` (the scanner lane reads records with its schema
   * before the batch is decoded), or null; `prepare` then starts from what this found.
   */
  async preload(name: string): Promise<TableState | null> {
    const state = await loadExisting(this.#create, this.#ref(name))
    this.#preloaded.set(name, state)
    return state
  }

  /** The schema and properties a missing `name` would be created with from `samples` alone (scan-tables.ts), whether it has a `_kafka` column and matches keys ignoring case. */
  propose(name: string, samples: Sample[]): { schema: Schema; properties: Record<string, string>; kafka: boolean; caseInsensitive: boolean } | undefined {
    const ref = this.#ref(name)
    const proposed = proposeTable(this.#create, ref, samples)
    return proposed && { ...proposed, kafka: ref.kafka.length > 0, caseInsensitive: ref.options.caseInsensitive === true }
  }

  /**
   * Create `name` from `samples` alone (the scanner lane's probe, scan-tables.ts): its state when
   * this call created it — `prepare` then has it — else undefined. A table another writer created
   * first is loaded, not evolved: `prepare` evolves it from every record.
   */
  async createFrom(name: string, samples: Sample[]): Promise<TableState | undefined> {
    let state: TableState
    try {
      state = await loadOrCreate(this.#create, this.#ref(name), samples, null)
    } catch (err) {
      if (err instanceof SchemaError || err instanceof NoSuchTableError) return undefined
      throw err
    }
    this.#preloaded.set(name, state)
    if (state.created !== true) return undefined
    this.#states.set(name, state)
    return state
  }

  /** Load, create or evolve `name` so every sample fits (or record why it cannot); a table prepared already, with no samples, is as it was. */
  async prepare(name: string, samples: Sample[]): Promise<TableState> {
    const prepared = this.#states.get(name)
    if (prepared !== undefined && samples.length === 0) return prepared
    const { options, id, kafka } = this.#ref(name)
    let state: TableState
    // A value field named like the metadata column would become a second `_kafka` field (or be
    // overwritten): such a record is a dead letter for this table and shapes nothing.
    const usable = kafka.length ? samples.filter((s) => !(KAFKA_COLUMN in s.value) || !this.#reject(name, s.record, reservedReason(name))) : samples
    try {
      state = await loadOrCreate(this.#create, { name, id, options, kafka }, usable, this.#preloaded.get(name))
      if (options.evolveSchema) {
        const fitting = usable.filter((s) => this.#rejection(name, s.record) === undefined)
        // Rows coerced while looking for new fields, kept on the sample for buildRow (Sample.coercedRow).
        const coerce = state.coerce
        await evolveTable(this.#deps, state, fitting, (sample, result) => {
          sample.coercedBy = coerce
          sample.coercedRow = result
        })
      }
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

  #reject(table: string, record: KafkaRecord, reason: string): true {
    let m = this.#rejected.get(table)
    if (!m) this.#rejected.set(table, (m = new WeakMap()))
    m.set(record, reason)
    return true
  }

  #rejection(table: string, record: KafkaRecord): string | undefined {
    return this.#rejected.get(table)?.get(record)
  }

  /** A record (a prepared sample: the writer's Item) as a row of the table's current schema (throws RecordError for a bad value). */
  buildRow(state: TableState, sample: Sample): { row: Record<string, unknown>; partition: PartitionTuple; bytes: number } {
    const { record, value, fast } = sample
    const rejected = this.#rejection(state.name, record) ?? state.rejected?.get(record)
    if (rejected !== undefined) throw new RecordError(rejected)
    if (state.kafka.length && KAFKA_COLUMN in value) throw new RecordError(reservedReason(state.name))
    const input = coercerInput(state, record, value, this.#keys)
    const cached = input === value && sample.coercedBy === state.coerce ? sample.coercedRow : undefined
    if (sample.coercedBy !== undefined) sample.coercedBy = sample.coercedRow = undefined
    const { row, unknown, bytes } = cached ?? this.#coerce(state, record, input, fast)
    if (unknown.length) state.unknownFieldsIgnored += unknown.length
    if (!state.spec.fields.length) return { row, partition: [], bytes }
    const partition = partitionTuple(state.spec, state.schema, row)
    const problem = this.#paths.problem(state, partition)
    if (problem !== undefined) throw new RecordError(problem)
    return { row, partition, bytes }
  }

  /** Why a partition value's file path is refused (FLOE_MAX_PARTITION_VALUE_BYTES, S3's key limit), or undefined: the check buildRow makes. */
  partitionProblem(state: TableState, partition: PartitionTuple): string | undefined {
    return this.#paths.problem(state, partition)
  }

  /** Coerce JSON.parse's value when `fast`, the exact decoding where the coercer asks for it (no closure per record). */
  #coerce(state: TableState, record: KafkaRecord, input: Record<string, unknown>, fast: true | undefined): Coerced {
    if (!fast) return state.coerce(input)
    try {
      return state.coerce(input, true)
    } catch (err) {
      if (err !== NEEDS_EXACT) throw err
      return state.coerce(coercerInput(state, record, exactJson(record), this.#keys))
    }
  }

  /** `writer`: where the Parquet bytes are made (lib/writer/workers), else on this thread. */
  encode(state: TableState, rows: Record<string, unknown>[], writer?: EncodeOptions['writer']): Promise<EncodedChunk> {
    return encodeParquet(state.schema, rows, this.#encodeOptions(state, writer))
  }

  /** The scanner lane's columns of the table (scan-lane.ts) as one Parquet file, with the same settings as `encode`. */
  encodeBuilt(state: TableState, built: ArrowBuild): Promise<EncodedChunk> {
    return encodeBuilt(state.schema, built, this.#encodeOptions(state))
  }

  #encodeOptions(state: TableState, writer?: EncodeOptions['writer']): EncodeOptions {
    const compression = state.metadata.properties['write.parquet.compression-codec'] ?? this.#deps.config.parquetCompression
    return { compression, properties: state.metadata.properties, writer, integerEncoding: this.#deps.config.parquetIntegerEncoding }
  }
}
