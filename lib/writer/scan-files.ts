/**
 * The scanner lane's files of a table (scan-lane.ts `take`), once scan-partition.ts has found
 * them: a file of every row is the scanner's columns as they are; a file of some rows (a table
 * split by partition value) is those rows gathered from the columns (Scanner.select). One file is
 * built at a time, as the group writes them. What a split costs in memory is charged to the
 * lane's share: a file's fileBytes when it opens, PLACE_BYTES a row while it is read, `splitBytes`
 * once it is settled.
 */
import type { PartitionTuple } from '../iceberg/index.js'
import { grow, type ArrowBuild } from './columnar/index.js'
import type { LaneFile } from './scan-partition.js'
import type { Lane } from './scan-tables.js'

/**
 * What a row of a partitioned table costs while its files are found and written
 * (scan-partition.ts): its charge noted (4 bytes), its index in its file's rows (4), and in an
 * array of numbers while the rows are grouped (8, and up to as much again while the array grows).
 */
export const PLACE_BYTES = 32

/**
 * What a split file's copy of a row takes beyond the row's own charge (Scanner.bytes), for each
 * of its lists' elements: the element's index while the file's rows are gathered (scan-gather.ts).
 * Noted with the row's charge (`noteCharge`), which splitBytes charges for the largest file's copy.
 */
export const ELEMENT_INDEX_BYTES = 4

/**
 * What each file of the lane holds until it is registered: a split file its group (its tuple, its
 * rows' array, a map entry per field: ~0.6–1 KB), every file its registration entry (lib/control
 * file-list.ts: ~35 bytes a column measured, 64 counted, its path and 256 of the sink's
 * overhead). A table's first file is charged when its lane opens (scan-lane.ts), a split's others
 * when it is settled (`splitBytes`).
 */
export const fileBytes = (lane: Lane): number => 1024 + 768 + 8 * lane.scanner.rowBytes

/** A lane's charges before it has any. */
export const NO_CHARGES = new Int32Array(0)

/** Row `row` (the last read) of a partitioned table's lane was charged `n` bytes (scan-lane.ts): kept, with its elements' indexes, to charge the file it is gathered into. */
export function noteCharge(lane: Lane, row: number, n: number): void {
  if (row >= lane.charges.length) lane.charges = grow(lane.charges, Math.max(1024, row + 1))
  const elements = lane.scanner.elements
  lane.charges[row] = n + ELEMENT_INDEX_BYTES * (elements - lane.elements)
  lane.elements = elements
}

/**
 * What a split into `files` holds beyond the lane's columns and its first file's fileBytes (charged
 * when the lane opens, scan-lane.ts): each other file's fileBytes, and one file's rows gathered at
 * a time (Scanner.select) — charged as the largest file's rows were charged when read, plus an
 * empty copy's arrays (~1.3 KB a string column, 170 bytes per 8 of rowBytes). The columns stay
 * until the last file is built; each gathered copy is dropped once its file is.
 */
export function splitBytes(lane: Lane, files: readonly LaneFile[]): number {
  if (files.length < 2) return 0
  let largest = 0
  for (const file of files) {
    let bytes = 0
    for (const r of file.rows ?? []) bytes += lane.charges[r]!
    largest = Math.max(largest, bytes)
  }
  return (files.length - 1) * fileBytes(lane) + largest + 170 * lane.scanner.rowBytes
}

/**
 * A lane's files (scan-partition.ts), built one at a time as the group writes them: a file of
 * every row is the scanner's columns as they are, a file of some rows those rows gathered from
 * them (Scanner.select). The scanner is then the next batch's to take (`stow`), emptied; this one
 * never touches it again.
 */
export function* laneBuilds(table: string, lane: Lane): Generator<[string, ArrowBuild, PartitionTuple]> {
  lane.built = true
  lane.bytes = 0
  const scanner = lane.scanner
  for (const file of lane.files!) yield [table, file.rows === undefined ? scanner.build() : scanner.select(file.rows), file.partition]
  scanner.truncate(0)
  lane.stow?.()
}
