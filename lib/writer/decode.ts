/**
 * Stage 1 of writeBatch (pipeline.ts): the event's records → routed items. Records below their
 * partition's checkpoint are skipped; each other record is decoded (JSON synchronously, other
 * formats through lib/codec), judged by the guard (guard.ts) and routed. A record that cannot be
 * decoded or routed becomes an item carrying its dead letter, never an exception.
 */
import { FloeError, RecordError } from '../errors.js'
import { parseJsonObject, parseJsonObjectFast, type DecodedValue } from '../codec/index.js'
import { isTombstone, type EventPart, type KafkaRecord, type RawPartition } from '../kafka/index.js'
import type { Schema } from '../schema/index.js'
import type { DeadLetter } from './dead-letters.js'
import type { Sample } from './table-state.js'
import { inspectRecord } from './guard.js'
import { keepLayout } from './columnar/layout.js'
import type { ReplayOptions, WriterDeps } from './types.js'

/** One record of the batch after decoding and routing. */
export interface Item {
  record: KafkaRecord
  pkey: string
  /** The decoded value; released (undefined) once its rows are coerced — `decodeItem` decodes it again for a retry. */
  value?: Record<string, unknown>
  /** The value's schema when the format has one (Avro, Connect envelope). */
  schema?: Schema
  tables: string[]
  /** Set when `value` is JSON.parse's: `exactJson(record)` is the exact decoding, for where digits matter (decodeJson). */
  fast?: true
  dead?: DeadLetter
  dropped?: boolean
  /** The row table evolution coerced (Sample.coercedRow), until buildRow takes it. */
  coercedBy?: Sample['coercedBy']
  coercedRow?: Sample['coercedRow']
  /**
   * Records whose rows are in the scanner lane's columns (scan-lane.ts): consecutive records of
   * one raw partition, `record` standing for them all (the first offset, the latest timestamp).
   */
  run?: Run
}

/** Records `from` to `to` (exclusive) of a raw partition, scanned into their table's columns. */
export interface Run {
  part: RawPartition
  from: number
  to: number
}

/** What decodeRecords needs of the scanner lane (scan-lane.ts ScanLane). */
export interface RawReader {
  /** Once, before `read`: the checkpoints are known (a table the batch creates is probed from its first records). */
  probe(parts: readonly EventPart[], checkpoints: ReadonlyMap<string, bigint | undefined>): void
  /** A raw partition's records at or past `checkpoint` onto `items`: runs the lane scanned, the rest decoded; how many were below it. */
  read(part: EventPart, checkpoint: bigint | undefined, items: Item[]): number
}

/** The records at or past their checkpoints as items, and how many were below. */
export async function decodeRecords(
  deps: WriterDeps,
  parts: readonly EventPart[],
  checkpoints: ReadonlyMap<string, bigint | undefined>,
  replay: ReplayOptions | undefined,
  lane?: RawReader,
): Promise<{ items: Item[]; belowCheckpoint: number }> {
  const items: Item[] = []
  const json = jsonTopics(deps)
  let belowCheckpoint = 0
  lane?.probe(parts, checkpoints)
  for (const part of parts) {
    const pkey = part.key
    const cp = checkpoints.get(pkey)
    if (part.raw !== undefined) {
      if (lane === undefined) throw new FloeError(`writer: partition ${pkey} was left raw with no scanner lane to read it`)
      belowCheckpoint += lane.read(part, cp, items)
      continue
    }
    const isJson = json(part.topic)
    const records = part.records
    // Indexed: for…of allocated an iterator result per record in this async function.
    for (let i = 0; i < records.length; i++) {
      const record = records[i]!
      if (record.offset >= 0n && cp !== undefined && record.offset < cp) {
        belowCheckpoint++
        continue
      }
      const prepared = decodeItem(deps, record, pkey, isJson, replay)
      // JSON is decoded synchronously: no Promise per record where nothing is awaited.
      items.push(prepared instanceof Promise ? await prepared : prepared)
    }
  }
  return { items, belowCheckpoint }
}

/** A JSON topic's record decoded as decodeItem decodes it, which is synchronous for JSON (the scanner lane's records, scan-lane.ts). */
export function decodeJsonItem(deps: WriterDeps, record: KafkaRecord, pkey: string): Item {
  const item = decodeItem(deps, record, pkey, true)
  if (item instanceof Promise) throw new FloeError(`writer: record ${pkey}@${record.offset} of a json topic decoded asynchronously`)
  return item
}

/** One record → its item (decoded, judged, routed; restricted to its replay tables). */
export function decodeItem(deps: WriterDeps, record: KafkaRecord, pkey: string, json: boolean, replay?: ReplayOptions): Item | Promise<Item> {
  const { error, value } = record
  // Flagged, tombstone or too large: a dead letter without decoding.
  if (error !== undefined || isTombstone(value) || value.byteLength > deps.config.limits.maxRecordBytes) return restrict(routeItem(deps, record, pkey, undefined, false), replay)
  // No closure per record here: esbuild's keepNames (tsx, the cdk bundle) wraps each in a defineProperty.
  if (json) {
    // JSON.parse's value as it is (`fast`): no second result object per record.
    const r = parseJsonObjectFast(value)
    // A wide record of a known shape comes with its keys and values: the guard and the coercer read those (columnar/layout.ts).
    if ('values' in r) keepLayout(r.value, r.keys, r.values)
    return restrict(routeItem(deps, record, pkey, r.ok ? r : { ok: false, reason: `json value: ${r.reason}` }, r.ok), replay)
  }
  return deps.decoders.decodeValue(record).then((decoded) => restrict(routeItem(deps, record, pkey, decoded, false), replay))
}

const restrict = (item: Item, replay: ReplayOptions | undefined): Item => (replay?.tablesFor ? restrictTables(item, replay.tablesFor(item.record)) : item)

/** Per topic (memoised for the batch): true when its value format is `json`, decoded here without a Promise. */
export function jsonTopics(deps: WriterDeps): (topic: string) => boolean {
  const known = new Map<string, boolean>()
  const format = deps.decoders.valueFormat
  return (topic) => {
    let json = known.get(topic)
    if (json === undefined) known.set(topic, (json = format?.(topic) === 'json'))
    return json
  }
}

/** A replayed dead letter goes only to the tables it failed for (it is already in the others). */
function restrictTables(item: Item, allowed: Set<string> | undefined): Item {
  if (allowed === undefined || item.dead || item.dropped) return item
  const before = item.tables
  item.tables = before.filter((t) => allowed.has(t))
  if (item.tables.length === 0) {
    const reason = `replay: the routes no longer send this record to ${[...allowed].join(', ')} (they send it to ${before.join(', ') || 'no table'})`
    item.dead = { record: item.record, reason, stage: 'route' }
  }
  return item
}

/** Exact decodings asked for, by record (few: only records whose digits matter). */
const exactByRecord = new WeakMap<KafkaRecord, Record<string, unknown>>()

/** The exact decoding (parseJsonObject, once per record) of a `fast` item's JSON value; RecordError when it has none. */
export function exactJson(record: KafkaRecord): Record<string, unknown> {
  let exact = exactByRecord.get(record)
  if (exact !== undefined) return exact
  const e = record.value === null ? { ok: false as const, reason: 'record has no value' } : parseJsonObject(record.value)
  if (!e.ok) throw new RecordError(`json value: ${e.reason}`)
  exactByRecord.set(record, (exact = e.value))
  return exact
}

const deadItem = (record: KafkaRecord, pkey: string, reason: string, stage: DeadLetter['stage']): Item => ({ record, pkey, tables: [], dead: { record, reason, stage } })

/**
 * A record with its decoded value (undefined: not decoded, because it is flagged, a tombstone or
 * too large) → routed item or dead letter. `isFast`: the value is the `json` format's decoding
 * without the Promise, JSON.parse's (the reason as lib/codec's decodeValue gives it);
 * `exactJson(record)` is the record decoded exactly, on demand, where digits JSON.parse may have
 * rounded matter (guard.ts inspectRecord, columnar/coerce.ts NeedsExact).
 */
function routeItem(deps: WriterDeps, record: KafkaRecord, pkey: string, decoded: DecodedValue | undefined, isFast: boolean): Item {
  if (record.error !== undefined) return deadItem(record, pkey, record.error, 'event')
  // A tombstone (null value) has no row to write; it is a dead letter so it is never silent.
  if (isTombstone(record.value)) return deadItem(record, pkey, 'record has no value (tombstone)', 'decode')
  const limits = deps.config.limits
  if (record.value.byteLength > limits.maxRecordBytes) {
    return deadItem(record, pkey, `record value is ${record.value.byteLength} bytes, more than FLOE_MAX_RECORD_KB=${limits.maxRecordBytes / 1024}`, 'decode')
  }
  if (decoded === undefined) throw new FloeError(`writer: record ${pkey}@${record.offset} reached routing undecoded`)
  if (!decoded.ok) return deadItem(record, pkey, decoded.reason, 'decode')
  let value = decoded.value
  let fast: true | undefined = isFast ? true : undefined
  const schema = decoded.schema
  let inspected = inspectRecord(value, limits, { declared: schema !== undefined })
  if (fast && (inspected.problem !== undefined || inspected.unsafeInteger)) {
    // JSON.parse rounded an integer beyond 2^53, or the record breaks a limit (an overflowing
    // literal is Infinity only to JSON.parse): this record alone is decoded exactly and judged on that.
    const e = parseJsonObject(record.value)
    if (!e.ok) return deadItem(record, pkey, `json value: ${e.reason}`, 'decode')
    value = e.value
    fast = undefined
    inspected = inspectRecord(value, limits, { declared: false })
  }
  if (inspected.problem !== undefined) return deadItem(record, pkey, inspected.problem, 'decode')
  const routed = deps.router.route(record.topic, value)
  if (routed.kind === 'tables') return fast ? { record, pkey, value, schema, tables: routed.tables, fast } : { record, pkey, value, schema, tables: routed.tables }
  if (routed.kind === 'drop') return { record, pkey, tables: [], dropped: true }
  return deadItem(record, pkey, routed.reason, 'route')
}

/** The item of records `from`…`to` (exclusive) of a raw part: the first offset, the latest timestamp. */
export function runItem(part: EventPart, tables: string[], from: number, to: number, latest: number): Item {
  const raw = part.raw!
  const record: KafkaRecord = {
    topic: part.topic,
    partition: part.partition,
    offset: BigInt(raw.list[from]!.offset as number),
    timestamp: latest,
    timestampType: undefined,
    key: null,
    value: null,
    headers: [],
    rawKey: null,
    rawValue: null,
    error: undefined,
  }
  return { record, pkey: part.key, tables, run: { part: raw, from, to } }
}
