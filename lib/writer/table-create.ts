/**
 * Loading a routed table, or creating it (autoCreate) with a schema from this batch's records:
 * the format's own schema when every record has one (lib/schema declared.ts), else inference
 * from the records (JSON numbers typed from their literals) within FLOE_MAX_COLUMNS, the
 * configured partitionBy, idColumns and column hints, and the optional `_kafka` column (its key
 * `string` when any record comes from a topic with a key format, else `binary`). Another
 * writer creating it first is fine: theirs is loaded (evolution then adds what ours has more).
 */
import { AlreadyExistsError, IcebergError, NoSuchTableError, SchemaError } from '../errors.js'
import { parsePartitionBy, type PartitionSpec } from '../iceberg/index.js'
import type { KafkaRecord } from '../kafka/index.js'
import { needsLiterals, parseJsonLiterals } from '../codec/index.js'
import { declaredTableSchema, applyColumnHints, inferSchema, type Schema, maxFieldId } from '../schema/index.js'
import type { TableOptions } from '../config.js'
import { recordColumns } from './guard.js'
import { KAFKA_COLUMN, kafkaField, type KafkaKeyType, type KafkaPart } from './kafka-column.js'
import { stateOf, type Sample, type TableState } from './table-state.js'
import type { TableId } from '../catalog/index.js'
import type { WriterDeps } from './types.js'

/** What loading and creating share across the batch's tables. */
export interface CreateContext {
  deps: WriterDeps
  /** Namespaces created (or found) this invocation, by name. */
  namespaces: Map<string, Promise<unknown>>
  /** Remember that `record` is a dead letter for `table`; returns true (for filters). */
  reject(table: string, record: KafkaRecord, reason: string): true
}

export interface TableRef {
  name: string
  id: TableId
  options: TableOptions
  kafka: KafkaPart[]
}

/** The table as the catalog has it, or null when it does not exist. */
export async function loadExisting(ctx: CreateContext, t: TableRef): Promise<TableState | null> {
  try {
    const loaded = await ctx.deps.catalog.loadTable(t.id)
    return stateOf(t.name, t.id, t.options, t.kafka, loaded.metadata, loaded.metadataLocation)
  } catch (err) {
    if (!(err instanceof NoSuchTableError)) throw err
    return null
  }
}

/** `known`: what loadExisting found earlier this invocation (the scanner lane loads tables ahead), so the catalog is not asked twice. */
export async function loadOrCreate(ctx: CreateContext, t: TableRef, samples: Sample[], known?: TableState | null): Promise<TableState> {
  const { catalog } = ctx.deps
  const existing = known !== undefined ? known : await loadExisting(ctx, t)
  if (existing !== null) return existing
  if (!t.options.autoCreate) throw new NoSuchTableError(`table ${t.name} does not exist and autoCreate is off`)
  const schema = newTableSchema(ctx, t, samples)
  let spec: PartitionSpec
  try {
    spec = parsePartitionBy(schema, t.options.partitionBy)
  } catch (err) {
    // e.g. day(ts) while these records have no `ts`: the table cannot be created from them.
    if (!(err instanceof IcebergError)) throw err
    throw new SchemaError(`table ${t.name}: cannot create with partitionBy ${JSON.stringify(t.options.partitionBy)}: ${err.message}`, { cause: err })
  }
  try {
    await ensureNamespace(ctx, t.id.namespace)
    const created = await catalog.createTable(t.id, { schema, spec, properties: createProperties(t.options) })
    const state = stateOf(t.name, t.id, t.options, t.kafka, created.metadata, created.metadataLocation)
    state.created = true
    return state
  } catch (err) {
    // Another writer created it first: use theirs (evolution then adds what ours has more).
    if (!(err instanceof AlreadyExistsError)) throw err
  }
  const loaded = await catalog.loadTable(t.id)
  return stateOf(t.name, t.id, t.options, t.kafka, loaded.metadata, loaded.metadataLocation)
}

/** The properties a table is created with: formatVersion travels as Iceberg's reserved create-time property `format-version` (every catalog, REST included, reads it). */
const createProperties = (options: TableOptions): Record<string, string> =>
  options.formatVersion === undefined ? options.properties : { ...options.properties, 'format-version': String(options.formatVersion) }

/**
 * The schema and properties a missing table would be created with from `samples` alone (the
 * scanner lane's probe, scan-tables.ts), or undefined where that is not how it would be created:
 * autoCreate off, a partitionBy or column hints (types not inferred), a declared schema, records
 * past FLOE_MAX_COLUMNS, one holding the `_kafka` key, or records inference refuses.
 */
export function proposeTable(ctx: CreateContext, t: TableRef, samples: Sample[]): { schema: Schema; properties: Record<string, string> } | undefined {
  const { options } = t
  if (samples.length === 0 || !options.autoCreate || options.partitionBy.length > 0 || Object.keys(options.columns ?? {}).length > 0) return undefined
  if (samples.some((s) => s.schema !== undefined || (t.kafka.length > 0 && KAFKA_COLUMN in s.value))) return undefined
  if (new Set(samples.flatMap((s) => [...recordColumns(s.value)])).size > ctx.deps.config.limits.maxColumns) return undefined
  try {
    return { schema: newTableSchema(ctx, t, samples), properties: createProperties(options) }
  } catch (err) {
    if (err instanceof SchemaError) return undefined
    throw err
  }
}

/** The format version the table will be created with (a route's formatVersion, else its `format-version` property, else 2). */
const createVersion = (options: TableRef['options']): number => options.formatVersion ?? (options.properties?.['format-version'] === '3' ? 3 : 2)

/** The format's own schema (Avro, Connect envelope) when every record has one, else inference; plus `_kafka`. */
function newTableSchema(ctx: CreateContext, t: TableRef, samples: Sample[]): Schema {
  const { options } = t
  const declared = samples.every((s) => s.schema !== undefined) ? samples[0]?.schema : undefined
  let schema = declared
    ? declaredTableSchema(declared, { evolveSchema: options.evolveSchema, idColumns: options.idColumns })
    : applyColumnHints(inferSchema(literalValues(ctx.deps, withinColumns(ctx, t.name, samples)), { idColumns: options.idColumns, maxDepth: ctx.deps.config.limits.maxDepth, formatVersion: createVersion(options) }), options.columns)
  if (t.kafka.length) {
    const { field } = kafkaField(t.kafka, maxFieldId(schema) + 1, keyType(ctx.deps, samples))
    schema = { ...schema, fields: [...schema.fields, field] }
  }
  return schema
}

function ensureNamespace(ctx: CreateContext, namespace: string): Promise<unknown> {
  let ns = ctx.namespaces.get(namespace)
  if (ns === undefined) {
    ns = Promise.resolve(ctx.deps.catalog.createNamespace?.(namespace)).catch((e: unknown) => {
      if (!(e instanceof AlreadyExistsError)) throw e
    })
    ctx.namespaces.set(namespace, ns)
  }
  return ns
}

/**
 * The samples a new table is inferred from, in batch order, while their columns together stay
 * within FLOE_MAX_COLUMNS; a record that would pass it is a dead letter for this table (it
 * would otherwise widen the table through evolution right after).
 */
function withinColumns(ctx: CreateContext, name: string, samples: Sample[]): Sample[] {
  const max = ctx.deps.config.limits.maxColumns
  const union = new Set<string>()
  return samples.filter((s) => {
    const added = [...recordColumns(s.value)].filter((c) => !union.has(c))
    if (union.size + added.length <= max) {
      for (const c of added) union.add(c)
      return true
    }
    return !ctx.reject(name, s.record, `table ${name}: record would bring the new table to ${union.size + added.length} columns, more than FLOE_MAX_COLUMNS=${max}`)
  })
}

/**
 * The values inference reads: for `json` topics the record re-read with every number as its
 * literal text (lib/codec parseJsonLiterals), so `1.0` infers a double and `1` a long. Only
 * records a type is inferred from pay for this (a new table, a record with a new field).
 */
export function literalValues(deps: WriterDeps, samples: Sample[]): Record<string, unknown>[] {
  const format = deps.decoders.valueFormat
  // Only a record whose text has a number JSON.parse types differently (`1.0`) is parsed again for its literals.
  return samples.map((s) => (format?.(s.record.topic) === 'json' && s.record.value && needsLiterals(s.record.value) ? parseJsonLiterals(s.record.value) : undefined) ?? s.value)
}

/** `_kafka.key`'s type for a column created from these records: string when any comes from a topic with a key format. */
export function keyType(deps: WriterDeps, samples: Sample[]): KafkaKeyType {
  const decoders = deps.decoders
  if (decoders.keyFormat === undefined || decoders.decodeKey === undefined) return 'binary'
  return samples.some((s) => decoders.keyFormat!(s.record.topic) !== undefined) ? 'string' : 'binary'
}
