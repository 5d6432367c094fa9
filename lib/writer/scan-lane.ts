/**
 * The scanner lane of writeBatch (FLOE_WRITER_SCAN, issue 20): the batch carried as columns. A
 * JSON topic routed by its topic alone to one table is left raw in the event (lib/kafka
 * event-parts.ts) where its partition is plain. Its table is loaded while the checkpoints are
 * read; if the lane writes it (scan-tables.ts: unpartitioned or partitioned as scan-partition.ts
 * reads, a `_kafka` column without key or headers), each record at or past the checkpoint is read
 * from the event (raw-records.ts) by a scanner compiled from the table's schema (columnar/scan.ts)
 * straight into its columns, its Kafka metadata into `_kafka`: no KafkaRecord, no decoded value,
 * no guard walk, no coerced row, no item per record. Consecutive scanned records are one item (a
 * `run`). A record the scanner does not read exactly — anything the present path might store
 * differently, evolve the table for or dead-letter — is parsed and decoded the present way where
 * it stands and goes on as before. A table that does not exist yet is probed: its schema inferred
 * from its first records, then every record read or none (scan-tables.ts).
 *
 * The lane's rows are a file per table and partition value (scan-partition.ts), written with the
 * group's other files and registered in the same transaction. They are given back to the present
 * path (`expand`: each run's records parsed and decoded in its place) whenever the premise breaks:
 * the table evolved or failed while it was prepared (scanned under a schema it no longer has), a
 * partition value is one the present path refuses, the batch is cut at the table limit or needs
 * more than one registration group, or a group attempt is retried.
 *
 * Memory: the lane holds at most FLOE_MEMORY_BUDGET_MB / 2 of records (their JSON bytes, or what
 * their rows take in the columns where more, a partitioned table's rows PLACE_BYTES, a table's
 * file entry, a split's other files and largest gathered file: scan-files.ts), a table at most
 * FLOE_TARGET_FILE_MB; past that, records take the present path. Columns are reserved within
 * that share; the sink's budget is what is left.
 */
import { mapBounded } from '../concurrency.js'
import { FloeError } from '../errors.js'
import { parseRawRecord, RawRecordReader, type EventPart, type RawPartition } from '../kafka/index.js'
import type { ArrowBuild } from './columnar/arrow-build.js'
import { decodeJsonItem, runItem, type Item, type RawReader } from './decode.js'
import type { TableSet } from './tables.js'
import { createProbed, existingLane, firstPast, firstRecords, otherRecordsFor, probeLane, type Lane } from './scan-tables.js'
import { fileBytes, laneBuilds, noteCharge, splitBytes } from './scan-files.js'
import { laneFiles } from './scan-partition.js'
import type { PartitionTuple } from '../iceberg/index.js'
import type { WriterDeps } from './types.js'

const PRELOADS = 8 // Tables loaded at once (prepare.ts prepares as many at a time).

export class ScanLane implements RawReader {
  readonly #deps: WriterDeps
  /** By table; null: the table is not one the lane writes. */
  readonly #lanes = new Map<string, Lane | null>()
  /** Each raw topic's routed tables (one). */
  readonly #routes = new Map<string, string[]>()
  readonly #reader = new RawRecordReader()
  #bytes = 0
  readonly #share: number // FLOE_MEMORY_BUDGET_MB / 2
  #tables?: TableSet
  /** Tables not in the catalog when loaded, until `probe` (the checkpoints known) probes them. */
  readonly #missing = new Set<string>()

  constructor(deps: WriterDeps) {
    this.#deps = deps
    this.#share = deps.config.memoryBudgetBytes / 2
  }

  /** What the records the lane holds are charged against FLOE_MEMORY_BUDGET_MB (see the module comment). */
  get reserved(): number {
    return this.#bytes
  }

  /** The table of each raw part (one per topic, known before any record is read), each once. */
  route(parts: readonly EventPart[]): string[] {
    for (const part of parts) {
      if (part.raw === undefined || this.#routes.has(part.topic)) continue
      const routed = this.#deps.router.route(part.topic, undefined)
      if (routed.kind !== 'tables' || routed.tables.length !== 1) throw new FloeError(`writer: topic ${part.topic} was left raw but does not route to one table`)
      this.#routes.set(part.topic, routed.tables)
    }
    return [...new Set([...this.#routes.values()].map((t) => t[0]!))]
  }

  /**
   * Load each raw part's table, a few at a time, and compile its scanner; a missing one is probed
   * once the checkpoints are known (`probe`; scan-tables.ts `probeLane`). One that fails to load is `prepare`'s to judge.
   */
  async load(tables: TableSet, parts: readonly EventPart[]): Promise<void> {
    this.#tables = tables
    const names = this.route(parts)
    const states = await mapBounded(names, PRELOADS, (table) => tables.preload(table).catch(() => undefined))
    names.forEach((table, k) => {
      if (states[k] === null) this.#missing.add(table)
      this.#open(table, states[k] ? existingLane(this.#deps, states[k]) : null)
    })
  }

  /** Before any partition is read: each missing table probed from its first records past the checkpoints (scan-tables.ts). */
  probe(parts: readonly EventPart[], checkpoints: ReadonlyMap<string, bigint | undefined>): void {
    for (const table of this.#missing) {
      const firsts = () => firstRecords(parts, (topic) => this.#routes.get(topic)![0] === table, checkpoints, (r, pkey) => decodeJsonItem(this.#deps, r, pkey))
      this.#open(table, probeLane(this.#deps, this.#tables!, table, firsts) ?? null)
    }
    this.#missing.clear()
  }

  read(part: EventPart, checkpoint: bigint | undefined, items: Item[]): number {
    const raw = part.raw!
    const tables = this.#routes.get(part.topic)!
    const lane = this.#lanes.get(tables[0]!) ?? undefined
    const list = raw.list
    let i = firstPast(raw, checkpoint)
    const below = i
    if (lane !== undefined) this.#reserve(lane, list.length - i)
    let from = -1
    let latest = 0
    for (; i < list.length; i++) {
      if (lane !== undefined && this.#scan(lane, raw, i)) {
        const t = this.#reader.timestamp
        if (from < 0) [from, latest] = [i, t]
        else if (t > latest) latest = t
        continue
      }
      // A table the batch creates is read all or nothing (scan-tables.ts).
      if (lane?.probe !== undefined && !lane.released) this.#release(lane)
      if (from >= 0) items.push(this.#run(part, from, i, latest))
      from = -1
      items.push(decodeJsonItem(this.#deps, parseRawRecord(raw, i), part.key))
    }
    if (from >= 0) items.push(this.#run(part, from, list.length, latest))
    return below
  }

  /** The item of records `from` to `to` (excluded) of `part`, scanned. */
  #run(part: EventPart, from: number, to: number, latest: number): Item {
    return runItem(part, this.#routes.get(part.topic)!, from, to, latest)
  }

  /** Room in the lane's columns for `rows` more rows at once, as many as its memory share has room for. */
  #reserve(lane: Lane, rows: number): void {
    if (lane.full) return
    const room = Math.floor(Math.max(0, this.#share - this.#bytes) / lane.scanner.rowBytes)
    lane.scanner.reserve(Math.min(rows, room))
  }

  /** A table's lane, charged its file's registration entry (scan-files.ts fileBytes) before any of its records. */
  #open(table: string, lane: Lane | null): void {
    this.#lanes.set(table, lane)
    if (lane !== null && this.#fits(lane, fileBytes(lane))) [lane.bytes, this.#bytes] = [lane.bytes + fileBytes(lane), this.#bytes + fileBytes(lane)]
  }

  /** Record `i` into the lane's columns; false when it is not one the scanner reads or the lane is full. */
  #scan(lane: Lane, raw: RawPartition, i: number): boolean {
    const reader = this.#reader
    if (lane.full || lane.released || !reader.read(raw, i)) return false
    const { value } = reader
    const { scanner } = lane
    if (value.byteLength > this.#deps.config.limits.maxRecordBytes) return false
    // Charged its JSON bytes, or what its row takes in the columns where that is more (known once read), and its place.
    if (!this.#fits(lane, Math.max(value.byteLength, scanner.rowBytes) + lane.placeBytes)) return false
    if (!scanner.add(value, reader)) return false // The reader is the record's Kafka metadata.
    const columnBytes = scanner.bytes
    // Long strings of a sparse record, a list of small numbers (8 bytes an element for `1,`) take more than their JSON.
    const n = Math.max(value.byteLength, columnBytes - lane.columnBytes) + lane.placeBytes
    if (!this.#fits(lane, n)) return this.#drop(lane)
    lane.columnBytes = columnBytes
    if (lane.placeBytes > 0) noteCharge(lane, scanner.rows - 1, n)
    lane.bytes += n
    this.#bytes += n
    return true
  }

  /** Whether `n` more bytes fit the lane's share and the table's file; once a record does not, the rest of the table's records take the present path too. */
  #fits(lane: Lane, n: number): boolean {
    if (this.#bytes + n <= this.#share && lane.bytes + n <= this.#deps.config.targetFileBytes) return true
    lane.full = true
    return false
  }

  /** The last row read rolled back (it did not fit once read). */
  #drop(lane: Lane): false {
    lane.scanner.truncate(lane.scanner.rows - 1)
    return false
  }

  /**
   * Before the tables are prepared: each table the lane probed is created from its first records
   * (a few at a time), unless records the lane did not read go to it or it is then not the probed
   * table: then all of its records take the present path. `items` with released runs expanded.
   */
  async create(items: Item[]): Promise<Item[]> {
    const probed = [...this.#lanes].filter(([, lane]) => lane?.probe !== undefined && !lane.released) as [string, Lane][]
    await mapBounded(probed, PRELOADS, async ([table, lane]) => {
      if (otherRecordsFor(items, table) || !(await createProbed(this.#tables!, table, lane))) this.#release(lane)
    })
    return this.expand(items)
  }

  /**
   * After the tables are prepared: each table's files (scan-partition.ts); one that evolved or
   * failed, has a partition value the present path refuses or more values than the lane's share
   * has room for files gives its scanned records back to the present path (then `expand`).
   */
  settle(tables: TableSet): void {
    for (const [table, lane] of this.#lanes) {
      if (lane === null || lane.released) continue
      const state = tables.get(table)
      const kept = state !== undefined && state.failure === undefined && state.schema['schema-id'] === lane.schemaId
      // A split's other files hold fileBytes each until registered, and one at a time a file's rows gathered (scan-files.ts): as much as the lane's share has room for.
      const files = kept ? laneFiles(state.spec, state.schema, lane.scanner, (p) => tables.partitionProblem(state, p), 1 + Math.floor((this.#share - this.#bytes) / fileBytes(lane))) : undefined
      const held = files === undefined ? 0 : splitBytes(lane, files)
      if (files === undefined || this.#bytes + held > this.#share) this.#release(lane)
      else [lane.files, lane.bytes, this.#bytes] = [files, lane.bytes + held, this.#bytes + held]
    }
  }

  /**
   * Every scanned record back to the present path (a table-limit cut, several registration
   * groups, a retried attempt): `items` with the runs expanded into their records.
   */
  releaseAll(items: Item[]): Item[] {
    for (const lane of this.#lanes.values()) if (lane !== null) this.#release(lane)
    return this.expand(items)
  }

  #release(lane: Lane): void {
    // Its columns are dropped with the scanner: nothing to build or clear.
    this.#bytes -= lane.bytes
    lane.bytes = 0
    lane.released = true
  }

  /** `items` with each run of a released table replaced by its records, parsed and decoded the present way (the same array when none is). */
  expand(items: Item[]): Item[] {
    if (!items.some((item) => item.run !== undefined && this.#lanes.get(item.tables[0]!)?.released)) return items
    const out: Item[] = []
    for (const item of items) {
      const run = item.run
      if (run === undefined || !this.#lanes.get(item.tables[0]!)?.released) out.push(item)
      else for (let k = run.from; k < run.to; k++) out.push(decodeJsonItem(this.#deps, parseRawRecord(run.part, k), item.pkey))
    }
    return out
  }

  /**
   * Each table's scanned rows as files of one partition value each (scan-partition.ts), built one
   * at a time as the group writes them: a file of some rows is those rows gathered from the
   * columns. The scanner is then the next batch's to take; this one never touches it again.
   */
  *take(): Generator<[string, ArrowBuild, PartitionTuple]> {
    this.#bytes = 0 // The sink took its budget (FLOE_MEMORY_BUDGET_MB less `reserved`) when the group began.
    for (const [table, lane] of this.#lanes) {
      if (lane === null || lane.released || lane.built || lane.scanner.rows === 0) continue
      if (lane.files === undefined) throw new FloeError(`writer: the scanner lane's rows of ${table} were taken before the table was settled`)
      yield* laneBuilds(table, lane)
    }
  }
}
