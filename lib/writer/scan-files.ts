/**
 * The scanner lane's files of a table (scan-lane.ts `take`), once scan-partition.ts has found
 * them: a file of every row is the scanner's columns as they are; a file of some rows (a table
 * split by partition value) reads its rows again from the event, where the lane's runs say they
 * were, into the emptied scanner. One file is built at a time, as the group writes them. What a
 * split costs in memory is charged to the lane's share: PLACE_BYTES a row while it is read,
 * fileBytes a file once it is settled.
 */
import { FloeError } from '../errors.js'
import type { PartitionTuple } from '../iceberg/index.js'
import type { RawPartition, RawRecordReader } from '../kafka/index.js'
import type { ArrowBuild, Scanner } from './columnar/index.js'
import type { Lane } from './scan-tables.js'

/**
 * What a row of a partitioned table costs while its files are found and written
 * (scan-partition.ts): its place (a partition reference, 8 bytes, and an index, 4), its index in
 * its file's rows (4) and, while the rows are grouped, in an array of numbers (8, and up to as
 * much again while the array grows).
 */
export const PLACE_BYTES = 32

/**
 * What each file of a table whose rows the lane splits by partition value holds from the split
 * until it is registered: its group (its tuple, its rows' array, a map entry per field: ~0.6–1 KB)
 * and its registration entry (lib/control file-list.ts: ~35 bytes a column measured, 64 counted,
 * its path and 256 of the sink's overhead). Charged to the lane's share (scan-lane.ts `settle`).
 */
export const fileBytes = (lane: Lane): number => 1024 + 768 + 8 * lane.scanner.rowBytes

/**
 * A lane's files (scan-partition.ts), built one at a time as the group writes them: a file of
 * some rows reads them again from the event into the emptied scanner. The scanner is then the
 * next batch's to take (`stow`); this one never touches it again.
 */
export function* laneBuilds(table: string, lane: Lane, reader: RawRecordReader): Generator<[string, ArrowBuild, PartitionTuple]> {
  lane.built = true
  lane.bytes = 0
  const at = lane.files!.some((f) => f.rows !== undefined) ? rowPlaces(lane.runs, lane.scanner.rows) : undefined
  for (const file of lane.files!) {
    if (file.rows !== undefined) readAgain(table, lane.scanner, reader, file.rows, at!)
    yield [table, lane.scanner.build(), file.partition]
  }
  lane.stow?.()
}

/** Each row of a lane's first reading: its raw partition and its index there. */
export interface RowPlaces {
  raw: RawPartition[]
  index: Int32Array
}

/** Where each of a lane's `n` rows was read, from its runs (consecutive records of a raw partition, `to` excluded) in the scanner's order. */
export function rowPlaces(runs: readonly { raw: RawPartition; from: number; to: number }[], n: number): RowPlaces {
  const out: RowPlaces = { raw: new Array<RawPartition>(n), index: new Int32Array(n) }
  let r = 0
  for (const run of runs) {
    for (let k = run.from; k < run.to && r < n; k++, r++) {
      out.raw[r] = run.raw
      out.index[r] = k
    }
  }
  if (r !== n || runs.reduce((sum, run) => sum + run.to - run.from, 0) !== n) throw new FloeError(`writer: the scanner lane of ${n} rows was read in runs of other lengths`)
  return out
}

/**
 * A file's rows (`rows`, of the first reading `at`) read again from the event into the emptied
 * scanner, in that order, for `table`'s file of their partition value.
 */
export function readAgain(table: string, scanner: Scanner, reader: RawRecordReader, rows: Int32Array, at: RowPlaces): void {
  scanner.clear()
  for (const r of rows) {
    // The same bytes into the same schema's columns: the scanner read them once, it reads them again.
    if (!reader.read(at.raw[r]!, at.index[r]!) || !scanner.add(reader.value, reader)) {
      throw new FloeError(`writer: the record at index ${at.index[r]} of its partition in the scanner lane's rows of ${table} did not scan again`)
    }
  }
}
