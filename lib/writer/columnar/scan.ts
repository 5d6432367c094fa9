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
import { toArrowField, toArrowSchema, type StructType } from '../../schema/index.js'
import type { ArrowBuild } from './arrow-build.js'
import { resetStats } from './column-parts.js'
import { metricsModes, tracksBounds } from './metrics.js'
import { DICTIONARY_SAMPLE, fewDistinct } from './parquet.js'
import { skip } from './scan-bytes.js'
import { compileStructScan } from './scan-code.js'
import { compileColumns, withinLimits, type Columns, type ScanOptions } from './scan-compile.js'
import type { StringColumn } from './scan-leaves.js'
import type { KafkaMeta } from './scan-nested.js'
import { keysInOrder } from './scan-inferred.js'
import { columnRange, columnValues, type ColumnRange } from './scan-range.js'
import { gather } from './scan-gather.js'

export type { ScanOptions } from './scan-compile.js'

export interface Scanner {
  /** Rows scanned since the last build. */
  readonly rows: number
  /** The least a row takes in the columns: 8 bytes per leaf (a null too), string bytes aside. */
  readonly rowBytes: number
  /** Elements of every list column in the rows. */
  readonly elements: number
  /** What the rows take in the columns: rowBytes each, their strings' bytes, and 8 bytes (a slot) a list element. */
  readonly bytes: number
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
  /** The rows from `rows` on dropped (every row: 0), the columns' room kept. */
  truncate(rows: number): void
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
  const { root, kafka, strings } = columns
  const elements = columns.lists.map((list) => list.element)
  const rowBytes = 8 * columns.stats.length
  const scan = compileStructScan(root)
  const shape: Shape = { schema, rootType, arrowSchema, strings: schema.fields.flatMap((f, k) => (f.type === 'string' ? [k] : [])), judge: opts.dictionary }
  return {
    get rows() {
      return root.length
    },
    rowBytes,
    get elements() {
      let n = 0
      for (let k = 0; k < elements.length; k++) n += elements[k]!.length
      return n
    },
    // Read once per record (scan-lane.ts): indexed loops over the columns, no call.
    get bytes() {
      let n = root.length * rowBytes
      for (let k = 0; k < elements.length; k++) n += 8 * elements[k]!.length
      for (let k = 0; k < strings.length; k++) n += strings[k]!.offsets[strings[k]!.length]!
      return n
    },
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
    truncate: (rows) => root.truncate(rows),
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

/**
 * A scanner for a table's schema under its properties: the metrics modes' bounds and the
 * dictionary choice encodeParquet's builder uses. `kafka`: the metadata column's name when the
 * table's records carry one.
 */
export function compileTableScanner(tableSchema: StructType, properties: Record<string, string>, limits: RecordLimits, kafka?: string, inferred?: boolean): Scanner | undefined {
  return compileScanner(tableSchema, limits, { bounds: tracksBounds(metricsModes(tableSchema, properties)), dictionary: fewDistinct, kafka, inferred })
}
