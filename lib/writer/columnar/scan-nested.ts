/**
 * The scanner's nested columns (scan.ts): a list of primitives and a struct (the record itself at
 * the top). A struct reads its fields' keys in schema order only, so a record's keys out of order,
 * unknown, escaped or repeated give the record up; a list's null or empty value counts as a
 * placeholder in its element's statistics, as arrow-build.ts counts it.
 */
import * as arrow from 'apache-arrow'
import type { StructType } from '../../schema/index.js'
import { COMMA, nullAt, skip } from './scan-bytes.js'
import { Bits, endRow, grow, type ScanColumn, type StringColumn } from './scan-leaves.js'
import type { LongColumn, NumberColumn } from './scan-numbers.js'

/** A list of primitives: `[` elements `]`; a null or empty list is a placeholder for its element's statistics. */
export class ListColumn implements ScanColumn {
  length = 0
  offsets = new Int32Array(65)
  valid = new Bits()
  constructor(
    readonly arrowType: arrow.DataType,
    readonly element: ScanColumn,
    readonly elementRequired: boolean,
  ) {}

  value(b: Uint8Array, i: number): number {
    if (b[i] !== 0x5b) return -1
    i = skip(b, i + 1)
    const element = this.element
    if (b[i] !== 0x5d) {
      for (;;) {
        const after = nullAt(b, i)
        if (after > 0) {
          if (this.elementRequired) return -1
          element.null()
          i = after
        } else if ((i = element.value(b, i)) < 0) return -1
        i = skip(b, i)
        if (b[i] === 0x5d) break
        if (b[i] !== COMMA) return -1
        i = skip(b, i + 1)
      }
    }
    this.close(element.length, true)
    return i + 1
  }

  null(): void {
    this.close(this.offsets[this.length]!, false)
  }

  close(end: number, valid: boolean): void {
    const k = this.length++
    this.offsets = endRow(this.offsets, k, end)
    this.valid.set(k, valid)
  }

  truncate(n: number): void {
    this.length = n
    this.element.truncate(this.offsets[n]!)
  }

  /** The list rows only: how many elements they hold is not known. */
  reserve(rows: number): void {
    this.valid.reserve(rows)
    if (rows + 1 > this.offsets.length) this.offsets = grow(this.offsets, rows + 1)
  }

  build(placeholders: number): arrow.Data {
    const n = this.length
    let empty = 0
    let nulls = 0
    for (let i = 0; i < n; i++) {
      if (!this.valid.get(i)) nulls++
      if (this.offsets[i + 1] === this.offsets[i]) empty++
    }
    const child = this.element.build(placeholders + empty)
    return arrow.makeData({ type: this.arrowType as arrow.List, length: n, nullCount: nulls, nullBitmap: this.valid.slice(n), valueOffsets: this.offsets.slice(0, n + 1), child })
  }
}

/** A struct (the record itself at the top): `{"name": value, …}`, keys in schema order, each field absent or null only where it is optional (read by scan-code.ts). */
export class StructColumn implements ScanColumn {
  length = 0
  valid = new Bits()
  readonly keys: Uint8Array[]
  readonly required: boolean[]
  /** A scanner of an inferred schema (scan-inferred.ts): the first row each field's key was in, -1 before. */
  firstKey?: Int32Array
  constructor(
    readonly arrowType: arrow.Struct,
    type: StructType,
    readonly children: ScanColumn[],
  ) {
    this.keys = type.fields.map((f) => Buffer.from(JSON.stringify(f.name)))
    this.required = type.fields.map((f) => f.required)
  }

  /** Structs are read by the code compiled for their record (scan-code.ts), never through here. */
  value(): number {
    throw new Error('a struct column is read by its compiled scan (scan-code.ts)')
  }

  null(): void {
    for (const c of this.children) c.null()
    this.valid.set(this.length++, false)
  }

  truncate(n: number): void {
    this.length = n
    for (const c of this.children) c.truncate(n)
    // A key first seen in a dropped row is not seen yet.
    const first = this.firstKey
    if (first !== undefined) for (let k = 0; k < first.length; k++) if (first[k]! >= n) first[k] = -1
  }

  reserve(rows: number): void {
    this.valid.reserve(rows)
    for (const c of this.children) c.reserve(rows)
  }

  build(placeholders: number): arrow.Data {
    const n = this.length
    const nulls = this.valid.zeros(n)
    const children = this.children.map((c) => c.build(placeholders))
    return arrow.makeData({ type: this.arrowType, length: n, nullCount: nulls, nullBitmap: nulls ? this.valid.slice(n) : undefined, children })
  }
}

/** What the `_kafka` column takes of a record (lib/kafka's KafkaRecord has it). */
export interface KafkaMeta {
  topic: string
  partition: number
  /** A bigint, or a safe integer as a number (a raw partition's offsets, lib/kafka raw-records.ts). */
  offset: bigint | number
  timestamp: number
}

/** The `_kafka` parts the scanner fills, and the Iceberg type each has (lib/writer/kafka-column.ts). */
export const KAFKA_SCANNED: Record<string, string> = { topic: 'string', partition: 'int', offset: 'long', timestamp: 'timestamptz' }

/**
 * The `_kafka` column (lib/writer/kafka-column.ts kafkaValue): filled from each record's Kafka
 * metadata once its value is read, never from the value. It is always absent from a value the
 * scanner takes (a value with a `_kafka` key is the present path's: a dead letter).
 */
export class KafkaColumn implements ScanColumn {
  #topic = ''
  #topicBytes = new Uint8Array(0)
  constructor(
    readonly inner: StructColumn,
    /** The part of each of `inner`'s children, in schema order. */
    readonly parts: string[],
  ) {}

  get length(): number {
    return this.inner.length
  }

  value(): number {
    return -1
  }

  /** Absent from the value, as it always is: `append` fills it. */
  null(): void {}

  truncate(n: number): void {
    this.inner.truncate(n)
  }

  reserve(rows: number): void {
    this.inner.reserve(rows)
  }

  build(placeholders: number): arrow.Data {
    return this.inner.build(placeholders)
  }

  /** The record's metadata as the column's next row; false (nothing added) when a value cannot be stored exactly. */
  append(meta: KafkaMeta): boolean {
    const t = meta.timestamp
    // kafkaValue's timestamp: whole epoch milliseconds, or null; the column holds microseconds.
    const micros = Number.isFinite(t) ? Math.trunc(t) * 1000 : null
    if (micros !== null && !Number.isSafeInteger(micros)) return false
    const children = this.inner.children
    for (let k = 0; k < this.parts.length; k++) {
      const part = this.parts[k]
      const col = children[k]!
      if (part === 'topic') {
        if (meta.topic !== this.#topic) this.#topicBytes = Buffer.from((this.#topic = meta.topic))
        ;(col as StringColumn).pushBytes(this.#topicBytes)
      } else if (part === 'partition') (col as NumberColumn).push(meta.partition, true)
      else if (part === 'offset') (col as LongColumn).pushExact(meta.offset)
      else if (micros === null) col.null()
      else (col as NumberColumn).push(micros, true)
    }
    this.inner.valid.set(this.inner.length++, true)
    return true
  }
}
