/**
 * The scanner lane (scan-lane.ts) on a partitioned table: its rows are one file, so they must all
 * have one partition value. A spec the lane can check (`laneSpec`) partitions by top-level
 * columns the scanner ranges (int, long, date, timestamp[tz], string: columnar/scan-range.ts)
 * with transforms that keep order — identity, truncate, year, month, day, hour — or void. Once
 * the rows are read, `lanePartition` takes each source column's least and greatest value: where
 * partitionTuple (the present path's, lib/iceberg) gives both the same tuple, every row in
 * between has it too, and that is the file's partition. A batch whose rows span two values (a
 * day's midnight, two cities), or a source column null in some rows only, has none: the lane gives
 * its records to the present path, which writes a file per value. Bucket is not ordered: a
 * table partitioned by it is never the lane's.
 */
import { parseTransform, partitionTuple, type PartitionSpec, type PartitionTuple } from '../iceberg/index.js'
import type { Schema } from '../schema/index.js'
import { partitionKeyOf } from './buffers.js'
import type { Scanner } from './columnar/index.js'

/** Transforms under which the least and the greatest value bound every other value's partition. */
const ORDERED = new Set(['identity', 'truncate', 'year', 'month', 'day', 'hour'])
/** Source types columnar/scan-range.ts ranges. */
const RANGED = new Set(['int', 'long', 'date', 'timestamp', 'timestamptz', 'string'])

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
    return source !== undefined && kind !== undefined && RANGED.has(source.type as string) && ORDERED.has(kind)
  })
}

/**
 * The one partition tuple of every row the scanner holds, as partitionTuple gives it for each of
 * them; undefined when the rows have more than one, the spec is not one the lane checks, or the
 * tuple is one the present path would not write: `problem` (its path check, FLOE_MAX_PARTITION_VALUE_BYTES)
 * names a problem or throws (a date past what a path can spell), or partitionTuple throws. Those
 * records are the present path's to dead-letter, each with its reason.
 */
export function lanePartition(spec: PartitionSpec, schema: Schema, scanner: Scanner, problem: (p: PartitionTuple) => string | undefined): PartitionTuple | undefined {
  if (spec.fields.length === 0) return []
  if (scanner.rows === 0 || !laneSpec(spec, schema)) return undefined
  const least: Record<string, unknown> = {}
  const greatest: Record<string, unknown> = {}
  const sources = sourceIndexes(spec, schema)
  for (const [k, f] of spec.fields.entries()) {
    if (kindOf(f.transform) === 'void') continue
    const range = scanner.range(sources[k]!)
    if (range === undefined) return undefined
    const name = schema.fields[sources[k]!]!.name
    least[name] = range === null ? null : range[0]
    greatest[name] = range === null ? null : range[1]
  }
  // Anything thrown here gives the records to the present path, which meets it again per record.
  try {
    const tuple = partitionTuple(spec, schema, least)
    if (partitionKeyOf(tuple) !== partitionKeyOf(partitionTuple(spec, schema, greatest))) return undefined
    return problem(tuple) === undefined ? tuple : undefined
  } catch {
    return undefined
  }
}
