/**
 * The scanner lane of writeBatch (FLOE_WRITER_SCAN, issue 20). A JSON record routed by its topic
 * alone to one table arrives undecoded (decode.ts `raw`). Once the tables are loaded, each raw
 * record of an existing, unpartitioned table (whose `_kafka` column, if any, holds no key or
 * headers) is read by a scanner compiled from the table's schema (columnar/scan.ts) straight from
 * its bytes into that table's columns, its Kafka metadata into `_kafka`: no decoded value, no
 * guard walk, no coerced row. A record the scanner does not read exactly —
 * anything the present path might store differently, evolve the table for or dead-letter — is
 * decoded the present way where it stands and goes on as before.
 *
 * The lane's rows are one file per table, written with the group's other files and registered in
 * the same transaction. They are given back to the present path (decoded in place) whenever the
 * premise breaks: the table evolved or failed while it was prepared (scanned under a schema it no
 * longer has), the batch needs more than one registration group, or a group attempt is retried.
 *
 * Memory: the lane holds at most FLOE_MEMORY_BUDGET_MB / 2 of records (counted by their JSON
 * bytes, more than their columns take), and a table at most FLOE_TARGET_FILE_MB; past that,
 * records take the present path. The sink's row budget is what the lane leaves (`reserved`).
 */
import { mapBounded } from '../concurrency.js'
import { compileTableScanner, type Scanner } from './columnar/index.js'
import type { ArrowBuild } from './columnar/arrow-build.js'
import { decodeNow, type Item } from './decode.js'
import { KAFKA_COLUMN } from './kafka-column.js'
import type { TableSet, TableState } from './tables.js'
import type { WriterDeps } from './types.js'

interface Lane {
  scanner: Scanner
  /** The schema the rows were scanned under. */
  schemaId: number
  items: Item[]
  bytes: number
}

/** Tables loaded at once (prepare.ts prepares as many at a time). */
const PRELOADS = 8

export class ScanLane {
  readonly #deps: WriterDeps
  readonly #lanes = new Map<string, Lane>()
  #bytes = 0

  constructor(deps: WriterDeps) {
    this.#deps = deps
  }

  /** The JSON bytes of the records the lane holds, charged against FLOE_MEMORY_BUDGET_MB. */
  get reserved(): number {
    return this.#bytes
  }

  /** Load each table raw items go to, scan them, and decode in place what the scanner does not read. */
  async scan(tables: TableSet, items: Item[]): Promise<void> {
    const raw = new Map<string, Item[]>()
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!
      if (!item.raw) continue
      const table = item.tables[0]!
      let list = raw.get(table)
      if (!list) raw.set(table, (list = []))
      list.push(item)
    }
    // Loaded a few at a time, as prepareTables loads; scanned one table after another (CPU only).
    const states = await mapBounded([...raw.keys()], PRELOADS, (table) => tables.preload(table))
    let k = 0
    for (const [table, list] of raw) {
      const state = states[k++]!
      const scanner = state !== null && scannable(state) ? compileTableScanner(state.schema, state.metadata.properties, this.#deps.config.limits, state.kafka.length ? KAFKA_COLUMN : undefined) : undefined
      if (scanner === undefined || state === null) {
        for (const item of list) decodeNow(this.#deps, item)
        continue
      }
      this.#fill(table, { scanner, schemaId: state.schema['schema-id'], items: [], bytes: 0 }, list)
    }
  }

  #fill(table: string, lane: Lane, list: Item[]): void {
    const { memoryBudgetBytes, targetFileBytes } = this.#deps.config
    let full = false
    for (let i = 0; i < list.length; i++) {
      const item = list[i]!
      const value = item.record.value!
      // Once a record does not fit, the rest of the table's records take the present path too.
      full ||= this.#bytes + value.byteLength > memoryBudgetBytes / 2 || lane.bytes + value.byteLength > targetFileBytes
      if (!full && lane.scanner.add(value, item.record)) {
        item.raw = undefined
        item.scanned = true
        lane.items.push(item)
        lane.bytes += value.byteLength
        this.#bytes += value.byteLength
      } else decodeNow(this.#deps, item)
    }
    if (lane.items.length > 0) this.#lanes.set(table, lane)
  }

  /** After the tables are prepared: a table that evolved or failed takes its scanned records back to the present path. */
  settle(tables: TableSet): void {
    for (const [table, lane] of this.#lanes) {
      const state = tables.get(table)
      if (state === undefined || state.failure !== undefined || state.schema['schema-id'] !== lane.schemaId) this.#release(table, lane)
    }
  }

  /** Every scanned record back to the present path (several registration groups, or a retried attempt). */
  releaseAll(): void {
    for (const [table, lane] of this.#lanes) this.#release(table, lane)
  }

  #release(table: string, lane: Lane): void {
    // The scanner and its columns go with the lane: nothing to build or clear.
    for (const item of lane.items) decodeNow(this.#deps, item)
    this.#bytes -= lane.bytes
    this.#lanes.delete(table)
  }

  /** Each table's scanned rows, built once (the lane is then empty): the group writes them as one file per table. */
  take(): [string, ArrowBuild][] {
    const out: [string, ArrowBuild][] = []
    for (const [table, lane] of this.#lanes) out.push([table, lane.scanner.build()])
    this.#lanes.clear()
    this.#bytes = 0
    return out
  }
}

/**
 * A table the lane writes: unpartitioned (no partition value per row to compute), and a `_kafka`
 * column, if the table's options ask for one, of exactly those parts (topic, partition, offset,
 * timestamp: the scanner fills no key or headers; a part the column lacks is an evolution).
 */
function scannable(state: TableState): boolean {
  if (state.failure !== undefined || state.spec.fields.length > 0) return false
  if (state.kafka.length === 0) return true
  const column = state.schema.fields.find((f) => f.name === KAFKA_COLUMN)?.type
  if (column === undefined || typeof column !== 'object' || column.type !== 'struct') return false
  const names = column.fields.map((f) => f.name)
  return names.length === state.kafka.length && state.kafka.every((p) => names.includes(p))
}
