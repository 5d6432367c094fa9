/**
 * The scanner lane (scan-lane.ts) on a partitioned table: a file holds rows of one partition
 * value, so the lane finds each row's. A spec it can check (`laneSpec`) partitions by top-level
 * int, long, date, timestamp[tz] or string columns (the ones columnar/scan-range.ts reads back)
 * with identity, truncate, year, month, day, hour or bucket, or is void.
 *
 * `laneFiles` says what the table's rows are written as. Most batches have one value: where every
 * transform keeps order (all but bucket), the least and the greatest value of each source column
 * bound every row's partition, and when partitionTuple — the present path's own — gives both the
 * same tuple, that is every row's: one file, found without a look at each row. Otherwise (a
 * batch across midnight, several tenants, a source null in some rows only, a bucket) each row's
 * tuple is computed from its scanned values as the present path computes it from its coerced
 * row, and the rows are grouped by it as the present path's buffers group them (`partitionKeyOf`),
 * first value first, rows in batch order: one file per value, its rows gathered from the columns
 * when it is written (scan-files.ts). A tuple the present path would not write — its path check
 * (FLOE_MAX_PARTITION_VALUE_BYTES) names a problem or throws (a date past what a path can spell),
 * or partitionTuple throws — gives the table's records back to the present path, which
 * dead-letters those records, each with its reason.
 */
import { fieldTransforms, parseTransform, partitionTuple, type PartitionSpec, type PartitionTuple, type PartitionValue } from '../iceberg/index.js'
import type { Schema } from '../schema/index.js'
import { partitionKeyOf } from './buffers.js'
import type { Scanner } from './columnar/index.js'

/** Transforms under which the least and the greatest value bound every other value's partition. */
const ORDERED = new Set(['identity', 'truncate', 'year', 'month', 'day', 'hour'])
/** Source types columnar/scan-range.ts reads back. */
const RANGED = new Set(['int', 'long', 'date', 'timestamp', 'timestamptz', 'string'])

/** One file of the lane's rows of a table: its partition, and its rows in the scanner's order (undefined: every row). */
export interface LaneFile {
  partition: PartitionTuple
  rows?: Int32Array
}

/** Each partition field's source: its index among the schema's top-level fields, or -1 when it is not one. */
const sourceIndexes = (spec: PartitionSpec, schema: Schema): number[] => spec.fields.map((f) => schema.fields.findIndex((c) => c.id === f['source-id']))

/** A transform's kind; undefined for one Floe does not know (another engine's metadata may name any). */
function kindOf(transform: string): string | undefined {
  try {
    return parseTransform(transform).kind
  } catch {
    return undefined
  }
}

/** Whether the lane can find the partition value of `spec`'s rows (see the module comment). */
export function laneSpec(spec: PartitionSpec, schema: Schema): boolean {
  const sources = sourceIndexes(spec, schema)
  return spec.fields.every((f, k) => {
    const kind = kindOf(f.transform)
    // Void is null whatever its source holds.
    if (kind === 'void') return true
    const source = schema.fields[sources[k]!]
    return source !== undefined && kind !== undefined && RANGED.has(source.type as string) && (ORDERED.has(kind) || kind === 'bucket')
  })
}

/**
 * The files of the rows the scanner holds, each of one partition value as partitionTuple gives it
 * for each of its rows; undefined when the spec is not one the lane checks, a tuple is one the
 * present path would not write (`problem`: see the module comment), or the rows have more than
 * `room` values (the files the lane's memory share holds: scan-files.ts fileBytes). Anything
 * thrown here gives the records to the present path, which meets it again per record.
 */
export function laneFiles(spec: PartitionSpec, schema: Schema, scanner: Scanner, problem: (p: PartitionTuple) => string | undefined, room: number): LaneFile[] | undefined {
  if (spec.fields.length === 0) return [{ partition: [] }]
  if (scanner.rows === 0 || !laneSpec(spec, schema)) return undefined
  try {
    const files = oneValue(spec, schema, scanner) ?? byRow(spec, schema, scanner, room)
    return files.every((f) => problem(f.partition) === undefined) ? files : undefined
  } catch {
    return undefined
  }
}

/** Non-void fields as [source column index, name]. */
function sourcesOf(spec: PartitionSpec, schema: Schema): [number, string][] {
  const sources = sourceIndexes(spec, schema)
  return spec.fields.flatMap((f, k) => (kindOf(f.transform) === 'void' ? [] : [[sources[k]!, schema.fields[sources[k]!]!.name] as [number, string]]))
}

/** One file when the least and greatest rows' tuples are one and order bounds every other row's; else undefined. */
function oneValue(spec: PartitionSpec, schema: Schema, scanner: Scanner): LaneFile[] | undefined {
  if (!spec.fields.every((f) => ORDERED.has(kindOf(f.transform)!) || kindOf(f.transform) === 'void')) return undefined
  const least: Record<string, unknown> = {}
  const greatest: Record<string, unknown> = {}
  for (const [k, name] of sourcesOf(spec, schema)) {
    const range = scanner.range(k)
    if (range === undefined) return undefined
    least[name] = range === null ? null : range[0]
    greatest[name] = range === null ? null : range[1]
  }
  const tuple = partitionTuple(spec, schema, least)
  return partitionKeyOf(tuple) === partitionKeyOf(partitionTuple(spec, schema, greatest)) ? [{ partition: tuple }] : undefined
}

/** Rows of one partition value, in batch order. */
interface Group {
  partition: PartitionTuple
  rows: number[]
}

/** Each row's tuple from its scanned values; the rows grouped by it, first value first, batch order within; at most `room` groups. */
function byRow(spec: PartitionSpec, schema: Schema, scanner: Scanner, room: number): LaneFile[] {
  const fields = fieldsOf(spec, schema, scanner)
  const last = fields.length - 1
  // Tuples as a tree of maps, a level per field: no key text per row (Map's SameValueZero is partitionKeyOf's -0 = 0).
  const root = new Map<unknown, unknown>()
  const groups: Group[] = []
  const tuple: PartitionTuple = new Array(fields.length)
  for (let r = 0; r < scanner.rows; r++) {
    let node = root
    for (let k = 0; k < last; k++) {
      const v = (tuple[k] = fields[k]!(r))
      let next = node.get(v) as Map<unknown, unknown> | undefined
      if (next === undefined) node.set(v, (next = new Map()))
      node = next
    }
    const v = (tuple[last] = fields[last]!(r))
    let group = node.get(v) as Group | undefined
    if (group === undefined) {
      if (groups.length >= room) throw new Error(`more than ${room} partition values: more files than the lane's memory share holds`)
      node.set(v, (group = { partition: tuple.slice(), rows: [] }))
      groups.push(group)
    }
    group.rows.push(r)
  }
  // One value after all (a bucket every row hashes to, say): the rows as they are.
  if (groups.length === 1) return [{ partition: groups[0]!.partition }]
  return groups.map((g) => ({ partition: g.partition, rows: Int32Array.from(g.rows) }))
}

/** A cache's size past which it starts over (a high-cardinality source). */
const CACHED = 4096
const HOUR_MICROS = 3_600_000_000
const DAY_MICROS = 86_400_000_000

/**
 * Each field's value of row `r`, as partitionTuple gives it (fieldTransforms), computed once per
 * source value — or, for a timestamp under hour, day, month or year, once per hour or day, whose
 * every instant the transform maps alike.
 */
function fieldsOf(spec: PartitionSpec, schema: Schema, scanner: Scanner): ((r: number) => PartitionValue)[] {
  const apply = fieldTransforms(spec, schema)
  const sources = sourceIndexes(spec, schema)
  return spec.fields.map((f, k) => {
    const kind = kindOf(f.transform)
    if (kind === 'void') return () => null
    const read = scanner.values(sources[k]!)
    if (read === undefined) throw new Error(`the scanner does not read back column ${schema.fields[sources[k]!]!.name}`)
    const type = schema.fields[sources[k]!]!.type
    const unit = type !== 'timestamp' && type !== 'timestamptz' ? 0 : kind === 'hour' ? HOUR_MICROS : kind === 'day' || kind === 'month' || kind === 'year' ? DAY_MICROS : 0
    const cache = new Map<unknown, PartitionValue>()
    return (r) => {
      const v = read(r)
      const at = unit === 0 || v === null ? v : spanOf(v as number, unit)
      const out = cache.get(at)
      if (out !== undefined) return out
      if (cache.size >= CACHED) cache.clear()
      const value = apply[k]!(v)
      cache.set(at, value)
      return value
    }
  })
}

/** Which `unit`-long span (from the epoch) holds `micros`, exactly: a safe integer's quotient, corrected where division rounded. */
function spanOf(micros: number, unit: number): number {
  let q = Math.floor(micros / unit)
  if (q * unit > micros) q--
  else if ((q + 1) * unit <= micros) q++
  return q
}
