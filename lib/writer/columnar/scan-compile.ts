/**
 * A table schema compiled into the scanner's empty columns (scan.ts): a column per field of the
 * types the scanner reads, undefined for a schema it does not — with the leaf statistics each
 * fills at build, and the list and string columns a row's memory is counted from.
 */
import type * as arrow from 'apache-arrow'
import type { RecordLimits } from '../../config.js'
import { isList, isStruct, leafFields, type IcebergType, type ListType, type StructType } from '../../schema/index.js'
import type { ArrowBuildOptions } from './arrow-build.js'
import type { LeafStats } from './column-parts.js'
import { BooleanColumn, StringColumn, type ScanColumn } from './scan-leaves.js'
import { KAFKA_SCANNED, KafkaColumn, ListColumn, StructColumn } from './scan-nested.js'
import { LongColumn, NumberColumn, numberKind } from './scan-numbers.js'
import { InferredStringColumn, InferredTimestampColumn } from './scan-inferred.js'

/**
 * Leaf statistics in schema order, as compileArrowBuilder registers them; the top-level metadata
 * column's name, if any, and that column, the list and the string columns once compiled; ScanOptions.inferred.
 */
interface Compiling {
  stats: LeafStats[]
  bounds: NonNullable<ArrowBuildOptions['bounds']>
  kafka?: string
  kafkaColumn?: KafkaColumn
  lists: ListColumn[]
  strings: StringColumn[]
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
  const strings = c.inferred ? new InferredStringColumn(arrowType, stats, bounds) : new StringColumn(arrowType, stats, bounds)
  c.strings.push(strings)
  return strings
}

/** The primitive types lib/schema's inference gives a JSON value. */
const INFERRED = new Set(['boolean', 'long', 'double', 'timestamptz', 'string'])

function compileList(type: ListType, name: string, arrowType: arrow.List, c: Compiling): ScanColumn | undefined {
  const element = compileColumn(type.element, type['element-id'], `${name}.element`, true, arrowType.children[0]!.type, c)
  const list = element && new ListColumn(arrowType, element, type['element-required'])
  if (list) c.lists.push(list)
  return list
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
export function withinLimits(schema: StructType, limits: RecordLimits): boolean {
  const names = (t: IcebergType): string[] => (isStruct(t) ? t.fields.flatMap((f) => [f.name, ...names(f.type)]) : isList(t) ? names(t.element) : [])
  if (names(schema).some((n) => n.length > limits.maxFieldNameLength || /\p{Cs}/u.test(n))) return false
  // One level short of the depth limit, so no count of the guard's can differ from this one.
  return depthOf(schema) < limits.maxDepth && leafFields(schema).length <= limits.maxColumns
}

/** A schema's columns, empty, the leaf statistics they fill at build, and its list and string columns (what a row holds: scan.ts `bytes`). */
export type Columns = { root: StructColumn; stats: LeafStats[]; kafka?: KafkaColumn; lists: ListColumn[]; strings: StringColumn[] }

export function compileColumns(schema: StructType, rootType: arrow.Struct, opts: ScanOptions): Columns | undefined {
  const c: Compiling = { stats: [], bounds: opts.bounds ?? (() => true), kafka: opts.kafka, inferred: opts.inferred, lists: [], strings: [] }
  const root = compileStruct(schema, '', rootType, c)
  return root && { root, stats: c.stats, kafka: c.kafkaColumn, lists: c.lists, strings: c.strings }
}

export interface ScanOptions extends ArrowBuildOptions {
  /** The top-level column filled from each record's Kafka metadata (`_kafka`), not from its value. */
  kafka?: string
  /** The schema was inferred from a batch's first records: read only values inference types as the schema does (scan-inferred.ts). */
  inferred?: boolean
}
