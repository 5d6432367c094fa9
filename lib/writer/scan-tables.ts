/**
 * The tables the scanner lane (scan-lane.ts) writes. An existing one it can read (`existingLane`):
 * unpartitioned or partitioned as scan-partition.ts reads, its `_kafka` column of parts the
 * scanner fills, no two field names alike but for case where the table matches keys ignoring case. And one the batch creates, through a probe
 * (`probeLane`). The present path creates a missing table from every record of the batch
 * (table-create.ts: inference over their values); the lane cannot infer, but it can check. The
 * first PROBE_RECORDS records past the checkpoint of each of the table's partitions are decoded
 * the present way and the schema is inferred from them alone; a scanner compiled from it in its
 * `inferred` mode (columnar/scan-inferred.ts) reads only records whose every value inference
 * would type as that schema does, and refuses any key it lacks. So when it reads EVERY record of
 * the table in the batch, no other record goes to the table, and the keys first came in schema
 * order (Scanner.keysInOrder), inference over all of them gives the same schema — same fields, in
 * the same order, with the same ids — and the table is created from those first records. One
 * record it does not read, and all of them take the present path (scan-lane.ts releases the lane
 * before the tables are prepared). Names that are array indexes (`"0"`, `"404"`) are not probed:
 * a JS object lists them first, so inference does not order them as the record's text does.
 *
 * The table created must then be exactly the probed one (schema and metrics properties); one that
 * another writer created first is not evolved from the first records: its records take the
 * present path, which evolves it from all of them.
 */
import { isDeepStrictEqual } from 'node:util'
import { isStruct, type Schema, type StructType } from '../schema/index.js'
import { compileTableScanner, type Scanner } from './columnar/index.js'
import { KAFKA_COLUMN } from './kafka-column.js'
import { laneSpec, type LaneFile } from './scan-partition.js'
import { NO_CHARGES, PLACE_BYTES } from './scan-files.js'
import type { Sample, TableSet, TableState } from './tables.js'
import { jsonTopics, type Item } from './decode.js'
import { parseRawRecord, type EventPart, type KafkaRecord, type RawPartition } from '../kafka/index.js'
import type { ReplayOptions, WriterDeps } from './types.js'

/** A table's share of the lane. */
export interface Lane {
  scanner: Scanner
  /** The schema the rows were scanned under. */
  schemaId: number
  bytes: number
  /** Its memory share was spent: the table's further records take the present path. */
  full: boolean
  /** Given back to the present path: its runs are expanded, its columns dropped. */
  released: boolean
  /** A table the batch creates (read all or nothing). */
  probe?: Probe
  /** Its rows were built (ScanLane.take): the scanner is no longer the lane's. */
  built?: boolean
  /** Once built: keep the (empty) scanner for the next batch (existingLane). */
  stow?: () => void
  /** The files its rows are written as, each of one partition value, once the table is prepared (ScanLane.settle; scan-partition.ts). */
  files?: LaneFile[]
  /** Bytes charged per row besides its columns: PLACE_BYTES where the table may be partitioned. */
  placeBytes: number
  /** Where the table may be partitioned: what each row was charged, by row (scan-files.ts `noteCharge`). */
  charges: Int32Array
  /** The scanner's bytes and, where the table may be partitioned, its list elements, after the last row read (so a row's are one read each). */
  columnBytes: number
  elements: number
}


const newLane = (scanner: Scanner, schemaId: number, partitioned: boolean, probe?: Probe): Lane => ({
  scanner,
  schemaId,
  bytes: 0,
  full: false,
  released: false,
  placeBytes: partitioned ? PLACE_BYTES : 0,
  charges: NO_CHARGES,
  columnBytes: 0,
  elements: 0,
  ...(probe ? { probe } : {}),
})

/** The lane of an existing table, or null when the lane does not write it. */
export function existingLane(deps: WriterDeps, state: TableState): Lane | null {
  if (!scannable(state)) return null
  const kafka = state.kafka.length ? KAFKA_COLUMN : undefined
  const { limits } = deps.config
  const { properties } = state.metadata
  const kept = idle
  idle = undefined
  const reused = kept && kept.schema === state.schema && kept.properties === properties && kept.limits === limits && kept.kafka === kafka && kept.scanner.rows === 0
  const scanner = reused ? kept.scanner : compileTableScanner(state.schema, properties, limits, kafka)
  if (scanner === undefined) return null
  const lane = newLane(scanner, state.schema['schema-id'], state.spec.fields.length > 0)
  lane.stow = () => {
    idle = { schema: state.schema, properties, limits, kafka, scanner }
  }
  return lane
}

/**
 * The scanner of the table the last batch built, empty, with its columns' room: the next batch
 * takes it if it is that table's with the same schema and properties objects (a table state
 * keeps them while they are current: the catalog's metadata cache). Compiling a scanner and
 * allocating its columns for every event was ~0.7 ms of a narrow event (issue 20). One slot,
 * emptied by the next lane asked for: no two batches ever hold the same scanner (tests and the
 * chaos harness run several in one process), and what it keeps — at most one table's lane share
 * of FLOE_MEMORY_BUDGET_MB — is released before the next batch scans anything.
 */
let idle: { schema: StructType; properties: Record<string, string>; limits: WriterDeps['config']['limits']; kafka: string | undefined; scanner: Scanner } | undefined

/**
 * A table the lane writes: unpartitioned, or partitioned so that the lane can find its rows'
 * partition values (scan-partition.ts), and a `_kafka` column, if the table's options ask for one,
 * of exactly those parts (topic, partition, offset, timestamp: the scanner fills no key or
 * headers; a part the column lacks is an evolution).
 */
function scannable(state: TableState): boolean {
  if (state.failure !== undefined || !laneSpec(state.spec, state.schema)) return false
  // Matching keys ignoring case, the present path reads field `a` from key `A` when it has no `a`: the scanner reads keys exactly.
  if (state.options.caseInsensitive && namesAlikeButCase(state.schema)) return false
  if (state.kafka.length === 0) return true
  const column = state.schema.fields.find((f) => f.name === KAFKA_COLUMN)?.type
  if (column === undefined || typeof column !== 'object' || column.type !== 'struct') return false
  const names = column.fields.map((f) => f.name)
  return names.length === state.kafka.length && state.kafka.every((p) => names.includes(p))
}

/** What a probed lane was compiled from: the records, and the table it would create. */
export interface Probe {
  /**
   * The records, decoded again from the event when the table is created: a lane holds none of
   * them while the batch is read (they would be outside FLOE_MEMORY_BUDGET_MB's accounting).
   */
  samples: () => Item[]
  schema: Schema
  properties: Record<string, string>
}

/**
 * Records a missing table's schema is inferred from: the first ones past the checkpoint of each of
 * its partitions, at most PROBE_TOTAL in all. More than one, and from every partition, so a field
 * null in the first records (absent from their schema, which then refuses every record that has
 * it) does not send the batch to the present path; few, as each is decoded three times (the
 * probe, the table's creation, then the lane or the present path).
 */
export const PROBE_RECORDS = 8
export const PROBE_TOTAL = 256

/**
 * The lane of a missing `table` from its first records' present decoding (`firsts`, in batch
 * order), or undefined when the lane cannot create it this way. Anything that goes wrong here is
 * the present path's to meet again and judge.
 */
export function probeLane(deps: WriterDeps, tables: TableSet, table: string, firsts: () => Item[]): Lane | undefined {
  try {
    const samples = firsts()
    if (!probeable(samples)) return undefined
    const proposed = tables.propose(table, samples)
    if (proposed === undefined) return undefined
    const { schema, properties, kafka, caseInsensitive } = proposed
    if (hasIndexName(schema) || (caseInsensitive && namesAlikeButCase(schema))) return undefined
    const scanner = compileTableScanner(schema, properties, deps.config.limits, kafka ? KAFKA_COLUMN : undefined, true)
    // The table it creates may be partitioned (its options): charged as if it is.
    return scanner && newLane(scanner, schema['schema-id'], true, { samples: firsts, schema, properties })
  } catch {
    return undefined
  }
}

/** Records a table can be inferred from: at least one, each a value for the table (no dead letter, no dropped record, no scanned run). */
const probeable = (items: Item[]): items is (Item & Sample)[] =>
  items.length > 0 && items.every((f) => f.dead === undefined && !f.dropped && f.run === undefined && f.value !== undefined)

/** A struct and every struct within it (list elements the scanner reads are primitives). */
const structs = (t: StructType): StructType[] => [t, ...t.fields.flatMap((f) => (isStruct(f.type) ? structs(f.type) : []))]

/** A field named like an array index, which JS lists before every other key of an object. */
const hasIndexName = (schema: StructType): boolean => structs(schema).some((t) => t.fields.some((f) => /^(0|[1-9]\d*)$/.test(f.name)))

/** Two fields of one struct whose names differ only by case. */
const namesAlikeButCase = (schema: StructType): boolean => structs(schema).some((t) => new Set(t.fields.map((f) => f.name.toLowerCase())).size < t.fields.length)

/** Whether other records of the batch (not read by the lane) go to `table`: they would shape it too. */
export const otherRecordsFor = (items: readonly Item[], table: string): boolean =>
  items.some((item) => item.run === undefined && item.dead === undefined && item.tables.includes(table))

/**
 * Create `table` from the probe's records: true when it is then the table the lane read its
 * records for. The records' keys must have come in the schema's order (Scanner.keysInOrder), or
 * inference over all of them would order the fields otherwise: the present path then creates it.
 */
export async function createProbed(tables: TableSet, table: string, lane: Lane): Promise<boolean> {
  const probe = lane.probe!
  if (!lane.scanner.keysInOrder()) return false
  // The same records as the probe's (the event's bytes, decoded the same way).
  let samples: Item[]
  try {
    samples = probe.samples()
  } catch {
    return false
  }
  if (!probeable(samples)) return false
  const state = await tables.createFrom(table, samples)
  return state !== undefined && sameTable(state, probe)
}

const METRICS = 'write.metadata.metrics.'

/** The probed schema, and the metrics properties the scanner's statistics followed. */
function sameTable(state: TableState, probe: Probe): boolean {
  if (state.failure !== undefined || !isDeepStrictEqual(state.schema, probe.schema)) return false
  const metrics = (props: Record<string, string>) => Object.entries(props).filter(([k]) => k.startsWith(METRICS)).sort()
  return isDeepStrictEqual(metrics(state.metadata.properties), metrics(probe.properties))
}

/** The topics whose plain partitions the lane reads (lib/kafka readKafkaEvent's `rawTopic`), or undefined when it reads none. */
export function laneTopics(deps: WriterDeps, replay: ReplayOptions | undefined): ((topic: string) => boolean) | undefined {
  // A replay restricts records to the tables they failed for.
  if (replay !== undefined || !deps.config.writerScan) return undefined
  const json = jsonTopics(deps)
  return (topic) => {
    // A field route needs each value before the table is known: its topics take the present path.
    if (!json(topic) || deps.router.needsValueFor(topic)) return false
    const routed = deps.router.route(topic, undefined)
    return routed.kind === 'tables' && routed.tables.length === 1
  }
}

/** The index of a raw partition's first record at or past `checkpoint` (its offsets are safe integers, increasing). */
export function firstPast(raw: RawPartition, checkpoint: bigint | undefined): number {
  let i = 0
  if (checkpoint !== undefined) while (i < raw.list.length && BigInt(raw.list[i]!.offset as number) < checkpoint) i++
  return i
}

/**
 * The records a missing table is probed from (`probeLane`): the first PROBE_RECORDS past the
 * checkpoint of each raw part `ofTable` (by topic), PROBE_TOTAL in all, decoded the present way.
 */
export function firstRecords(parts: readonly EventPart[], ofTable: (topic: string) => boolean, checkpoints: ReadonlyMap<string, bigint | undefined>, decode: (record: KafkaRecord, pkey: string) => Item): Item[] {
  const out: Item[] = []
  for (const part of parts) {
    if (part.raw === undefined || !ofTable(part.topic)) continue
    const from = firstPast(part.raw, checkpoints.get(part.key))
    const to = Math.min(part.raw.list.length, from + PROBE_RECORDS, from + PROBE_TOTAL - out.length)
    for (let k = from; k < to; k++) out.push(decode(parseRawRecord(part.raw, k), part.key))
  }
  return out
}
