/**
 * A JSON scanner compiled from a table's schema: it reads records' UTF-8 bytes straight into
 * Arrow column buffers — no record text, no JSON.parse object, no coerced row, no JS value per
 * field — and builds what compileArrowBuilder builds from the same records coerced (arrow-build.ts:
 * the table, the leaf statistics, the dictionary choice), so encodeBuilt (parquet.ts) writes the
 * same Parquet and metrics.
 *
 * It accepts only what it can read exactly and the present path (strict UTF-8, JSON.parse, the
 * guard, the coercer) would store the same way: an object whose keys are the schema's fields in
 * schema order, each at most once, absent or null where the field is optional; values of the
 * column's type as JSON writes them (scan-leaves.ts, scan-bytes.ts). Anything else — an unknown
 * or out-of-order key, an escaped key, a string for a number, a long of more than 15 digits, a
 * timestamp fastIsoMicros does not read, malformed UTF-8, a lone surrogate — makes `add` roll the
 * columns back to where the record started and return false: that record goes through the
 * present path, which decides whether it is a row, an evolution or a dead letter.
 *
 * Compiled only for schemas of boolean, int, long, float, double, date, timestamp, timestamptz,
 * string, structs of those and lists of primitives, without a v3 `write-default`, within the
 * record limits (depth, columns, field names); `compileScanner` gives undefined for any other schema.
 * In its `inferred` mode (a schema inferred from a batch's first records, for a table it creates)
 * it also refuses values inference would type otherwise, and notes where each key first came
 * (scan-inferred.ts).
 */
import * as arrow from 'apache-arrow'
import type { RecordLimits } from '../../config.js'
import { isList, isStruct, leafFields, toArrowField, toArrowSchema, type IcebergType, type ListType, type StructType } from '../../schema/index.js'
import type { ArrowBuild, ArrowBuildOptions } from './arrow-build.js'
import { resetStats, type LeafStats } from './column-parts.js'
import { metricsModes, tracksBounds } from './metrics.js'
import { DICTIONARY_SAMPLE, fewDistinct } from './parquet.js'
import { skip } from './scan-bytes.js'
import { compileStructScan } from './scan-code.js'
import { BooleanColumn, StringColumn, type ScanColumn } from './scan-leaves.js'
import { KAFKA_SCANNED, KafkaColumn, ListColumn, StructColumn, type KafkaMeta } from './scan-nested.js'
import { LongColumn, NumberColumn, numberKind } from './scan-numbers.js'
import { InferredStringColumn, InferredTimestampColumn, keysInOrder } from './scan-inferred.js'
import { columnRange, columnValues, type ColumnRange } from './scan-range.js'
import { gather } from './scan-gather.js'

export interface Scanner {
  /** Rows scanned since the last build. */
  readonly rows: number
  /** The least a row takes in the columns: 8 bytes per leaf (a null too), string bytes aside. */
  readonly rowBytes: number
  /**
   * One record's bytes (exactly its view) as a row, with its Kafka metadata in the `_kafka`
   * column if the scanner has one; false (nothing added) when the record is not one it reads.
   */
  add(record: Uint8Array, meta?: KafkaMeta): boolean
  /** Room for `rows` more rows, taken at once: arrays grown once, not doubled over and over while an event is read. */
  reserve(rows: number): void
  /** The rows as Arrow data with their statistics; the scanner is then empty. */
  build(): ArrowBuild
  /**
   * An `inferred` scanner: whether every struct's fields first appeared in the rows in schema
   * order, as inference over these rows would order them (scan-inferred.ts `keysInOrder`).
   */
  keysInOrder(): boolean
  /**
   * The least and greatest value of top-level field `k` over the rows (null: all null;
   * undefined: some null, or a column it does not range), for a partitioned table's lane (scan-range.ts).
   */
  range(k: number): ColumnRange | undefined
  /** Each row's value of top-level field `k` (null: a null), for the columns `range` reads (scan-range.ts); undefined for others. */
  values(k: number): ((row: number) => unknown) | undefined
  /** `rows` (scanned rows' indexes, in that order) as `build` gives them had only those records been scanned; every row is kept (scan-gather.ts). */
  select(rows: Int32Array): ArrowBuild
  /** Every row dropped, the columns' room kept. */
  clear(): void
}

/** Leaf statistics in schema order, as compileArrowBuilder registers them; the top-level metadata column's name, if any. */
interface Compiling {
  stats: LeafStats[]
  bounds: NonNullable<ArrowBuildOptions['bounds']>
  kafka?: string
  /** The metadata column, once compiled. */
  kafkaColumn?: KafkaColumn
  /** ScanOptions.inferred. */
  inferred?: boolean
}

function compileColumn(type: IcebergType, id: number, name: string, repeated: boolean, arrowType: arrow.DataType, c: Compiling): ScanColumn | undefined {
  if (isStruct(type)) return repeated ? undefined : compileStruct(type, `${name}.`, arrowType as arrow.Struct, c)
  if (isList(type)) return repeated ? undefined : compileList(type, name, arrowType as arrow.List, c)
  if (typeof type !== 'string') return undefined
  const kind = numberKind(type)
  if (kind === undefined && type !== 'long' && type !== 'boolean' && type !== 'string') return undefined
  // A schema inferred from records has only the types inference gives (scan-inferred.ts).
  if (c.inferred && !INFERRED.has(type)) return undefined
  const stats: LeafStats = { id, type, valueCount: 0, nullCount: 0 }
  if (type === 'float' || type === 'double') stats.nanCount = 0
  c.stats.push(stats)
  const bounds = !repeated && c.bounds(id, name)
  if (c.inferred && type === 'timestamptz') return new InferredTimestampColumn(kind!, arrowType, stats, bounds)
  if (kind !== undefined) return new NumberColumn(kind, arrowType, stats, bounds)
  if (type === 'long') return new LongColumn(arrowType, stats, bounds)
  if (type === 'boolean') return new BooleanColumn(arrowType, stats, bounds)
  return c.inferred ? new InferredStringColumn(arrowType, stats, bounds) : new StringColumn(arrowType, stats, bounds)
}

/** The primitive types lib/schema's inference gives a JSON value. */
const INFERRED = new Set(['boolean', 'long', 'double', 'timestamptz', 'string'])

function compileList(type: ListType, name: string, arrowType: arrow.List, c: Compiling): ScanColumn | undefined {
  const element = compileColumn(type.element, type['element-id'], `${name}.element`, true, arrowType.children[0]!.type, c)
  return element && new ListColumn(arrowType, element, type['element-required'])
}

function compileStruct(type: StructType, prefix: string, arrowType: arrow.Struct, c: Compiling): StructColumn | undefined {
  // Parquet holds no empty group (parquet.ts writableSchema): such a schema takes the present path.
  if (type.fields.length === 0) return undefined
  // A v3 write-default fills an absent field (coerce-parts.ts); the scanner writes null: the present path's.
  if (type.fields.some((f) => f['write-default'] !== undefined)) return undefined
  const children: ScanColumn[] = []
  for (let k = 0; k < type.fields.length; k++) {
    const f = type.fields[k]!
    const childType = arrowType.children[k]!.type
    const child = prefix === '' && f.name === c.kafka ? compileKafka(f.type, childType as arrow.Struct, c) : compileColumn(f.type, f.id, prefix + f.name, false, childType, c)
    if (child === undefined) return undefined
    children.push(child)
  }
  const struct = new StructColumn(arrowType, type, children)
  if (c.inferred) struct.firstKey = new Int32Array(children.length).fill(-1)
  return struct
}

/** The `_kafka` column of the parts the scanner fills (KAFKA_SCANNED, of their types), else undefined. */
function compileKafka(type: IcebergType, arrowType: arrow.Struct, c: Compiling): KafkaColumn | undefined {
  if (!isStruct(type) || !type.fields.every((f) => KAFKA_SCANNED[f.name] === f.type)) return undefined
  // Filled from the record's metadata, not inferred from its value: no `inferred` rules (its partition is an int).
  const inner = compileStruct(type, `${c.kafka}.`, arrowType, { ...c, inferred: false })
  return inner && (c.kafkaColumn = new KafkaColumn(inner, type.fields.map((f) => f.name)))
}

/** Deepest nesting of a type, counted as the guard counts objects and arrays. */
const depthOf = (type: IcebergType): number =>
  isStruct(type) ? 1 + Math.max(0, ...type.fields.map((f) => depthOf(f.type))) : isList(type) ? 1 + depthOf(type.element) : 0

/** Field names the guard would refuse, or a record deeper or wider than the limits: not scanned. */
function withinLimits(schema: StructType, limits: RecordLimits): boolean {
  const names = (t: IcebergType): string[] => (isStruct(t) ? t.fields.flatMap((f) => [f.name, ...names(f.type)]) : isList(t) ? names(t.element) : [])
  if (names(schema).some((n) => n.length > limits.maxFieldNameLength || /\p{Cs}/u.test(n))) return false
  // One level short of the depth limit, so no count of the guard's can differ from this one.
  return depthOf(schema) < limits.maxDepth && leafFields(schema).length <= limits.maxColumns
}

/**
 * The Arrow struct and schema of a table schema, by its object: a table's state keeps its schema
 * object while it is current (the catalog's metadata cache), so each batch's scanner hands
 * encodeBuilt the same Schema object and ipc.ts encodes its message once, not once per event
 * (~0.5 ms of each narrow event, issue 20).
 */
const arrowTypes = new WeakMap<StructType, { rootType: arrow.Struct; arrowSchema: arrow.Schema }>()

function arrowTypesOf(schema: StructType): { rootType: arrow.Struct; arrowSchema: arrow.Schema } {
  let types = arrowTypes.get(schema)
  if (types === undefined) arrowTypes.set(schema, (types = { rootType: new arrow.Struct(schema.fields.map(toArrowField)), arrowSchema: toArrowSchema(schema) }))
  return types
}

/** A schema's columns, empty, and the leaf statistics they fill at build. */
type Columns = { root: StructColumn; stats: LeafStats[]; kafka?: KafkaColumn }

function compileColumns(schema: StructType, rootType: arrow.Struct, opts: ScanOptions): Columns | undefined {
  const c: Compiling = { stats: [], bounds: opts.bounds ?? (() => true), kafka: opts.kafka, inferred: opts.inferred }
  const root = compileStruct(schema, '', rootType, c)
  return root && { root, stats: c.stats, kafka: c.kafkaColumn }
}

/** What building a schema's columns takes besides them: its Arrow types, its string columns (by index) and the dictionary choice. */
type Shape = { schema: StructType; rootType: arrow.Struct; arrowSchema: arrow.Schema; strings: number[]; judge: ScanOptions['dictionary'] }

/** The rows of `cols` as Arrow data with their statistics; `cols` is then empty. */
function buildColumns({ root, stats }: Columns, { schema, rootType, arrowSchema, strings, judge }: Shape): ArrowBuild {
  resetStats(stats)
  const n = root.length
  const sampled = Math.min(n, DICTIONARY_SAMPLE)
  const dictionary = judge ? strings.filter((k) => judge((root.children[k] as StringColumn).sample(sampled))).map((k) => schema.fields[k]!.name) : []
  const children = root.children.map((col) => col.build(0))
  const data = arrow.makeData({ type: rootType, length: n, nullCount: 0, children })
  root.truncate(0)
  return { table: new arrow.Table(arrowSchema, [new arrow.RecordBatch(arrowSchema, data)]), stats: new Map(stats.map((s) => [s.id, { ...s }])), dictionary }
}

/** A scanner for `schema` (the records' value: no `_kafka` column), or undefined when the schema has a type or size it does not read. */
export function compileScanner(schema: StructType, limits: RecordLimits, opts: ScanOptions = {}): Scanner | undefined {
  if (!withinLimits(schema, limits)) return undefined
  const { rootType, arrowSchema } = arrowTypesOf(schema)
  const columns = compileColumns(schema, rootType, opts)
  if (columns === undefined) return undefined
  const { root, kafka } = columns
  const scan = compileStructScan(root)
  const shape: Shape = { schema, rootType, arrowSchema, strings: schema.fields.flatMap((f, k) => (f.type === 'string' ? [k] : [])), judge: opts.dictionary }
  return {
    get rows() {
      return root.length
    },
    rowBytes: 8 * columns.stats.length,
    add(record, meta) {
      const start = root.length
      const i = scan(record, skip(record, 0))
      if (i > 0 && skip(record, i) === record.length && (kafka === undefined || (meta !== undefined && kafka.append(meta)))) return true
      root.truncate(start)
      return false
    },
    reserve(rows) {
      root.reserve(root.length + rows)
    },
    keysInOrder: () => keysInOrder(root),
    range: (k) => columnRange(root.children[k]!, root.length),
    values: (k) => columnValues(root.children[k]!),
    clear: () => root.truncate(0),
    build: () => buildColumns(columns, shape),
    select(rows) {
      // Compiled from the same schema and options as `columns`: it compiles.
      const twin = compileColumns(schema, rootType, opts)!
      twin.root.reserve(rows.length)
      gather(twin.root, root, rows)
      return buildColumns(twin, shape)
    },
  }
}

export interface ScanOptions extends ArrowBuildOptions {
  /** The top-level column filled from each record's Kafka metadata (`_kafka`), not from its value. */
  kafka?: string
  /** The schema was inferred from a batch's first records: read only values inference types as the schema does (scan-inferred.ts). */
  inferred?: boolean
}

/**
 * A scanner for a table's schema under its properties: the metrics modes' bounds and the
 * dictionary choice encodeParquet's builder uses. `kafka`: the metadata column's name when the
 * table's records carry one.
 */
export function compileTableScanner(tableSchema: StructType, properties: Record<string, string>, limits: RecordLimits, kafka?: string, inferred?: boolean): Scanner | undefined {
  return compileScanner(tableSchema, limits, { bounds: tracksBounds(metricsModes(tableSchema, properties)), dictionary: fewDistinct, kafka, inferred })
}
