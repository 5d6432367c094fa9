/**
 * A raw partition's records (event-parts.ts) read one at a time, with nothing allocated per
 * record: the topic, partition, offset, timestamp and value bytes of a record that readRecord
 * (event.ts) would parse without a problem. A record it does not read — a problem of any kind,
 * no value — is for readRecord to parse (`parseRawRecord`), which says what is wrong.
 *
 * Offsets and timestamps are kept in a typed array, not in fields: on Node 20 a double stored in
 * an object's field (an offset past 2^31, any epoch millis) is a new heap number each time.
 */
import { decodedSize, isBase64, writeBase64 } from './base64.js'
import { isTimestamp, parseHeaders, parseTimestamp, readRecord, type KafkaRecord } from './event.js'
import type { RawPartition } from './event-parts.js'

export class RawRecordReader {
  /** The last record read: its topic, partition, offset (a safe integer: the partition is plain), timestamp (epoch millis, -1 for none) and value. */
  topic = ''
  partition = 0
  /** The offset and the timestamp. */
  readonly #numbers = new Float64Array(2)
  get offset(): number {
    return this.#numbers[0]!
  }
  get timestamp(): number {
    return this.#numbers[1]!
  }
  /** A view of the value's bytes, valid until the next `read`. */
  value: Uint8Array = new Uint8Array(0)
  #buf: Buffer = Buffer.allocUnsafeSlow(64 * 1024)
  /**
   * The buffer's first n bytes, by n up to VIEWS: a value of a length read before gets the same
   * view again. A view per record was 1.5 MB of young garbage per 6 MB event — more scavenges,
   * and each promotes whatever of the event is alive then — and ~30 ns of CPU (issue 20).
   */
  #views: (Uint8Array | undefined)[] = []

  /** Record `i` of `part`; false when readRecord would flag it or it has no value. */
  read(part: RawPartition, i: number): boolean {
    const r = part.list[i]!
    const { timestamp, timestampType, key, headers, value } = r
    if (!isTimestamp(timestamp)) return false
    if (timestampType !== undefined && timestampType !== null && typeof timestampType !== 'string') return false
    if (key !== undefined && key !== null && (typeof key !== 'string' || !isBase64(key))) return false
    // Headers are validated as readRecord validates them (the lane's tables keep none).
    if (headers !== undefined && headers !== null && !(Array.isArray(headers) && headers.length === 0) && typeof parseHeaders(headers) === 'string') return false
    if (typeof value !== 'string') return false
    const size = decodedSize(value.length)
    if (size > this.#buf.length) {
      this.#buf = Buffer.allocUnsafeSlow(Math.max(size, this.#buf.length * 2))
      this.#views = []
    }
    const n = writeBase64(this.#buf, 0, value)
    if (n < 0) return false
    this.topic = part.topic
    this.partition = part.partition
    this.#numbers[0] = r.offset as number
    this.#numbers[1] = typeof timestamp === 'number' ? timestamp : parseTimestamp(timestamp)!
    this.value = n <= VIEWS ? (this.#views[n] ??= this.#view(n)) : this.#view(n)
    return true
  }

  #view(n: number): Uint8Array {
    return new Uint8Array(this.#buf.buffer, this.#buf.byteOffset, n)
  }
}

/** Value lengths whose views are kept (at most this many views, ~100 bytes each). */
const VIEWS = 8192

/** Record `i` of `part` parsed as parseKafkaEvent parses it. */
export function parseRawRecord(part: RawPartition, i: number): KafkaRecord {
  return readRecord(part.list[i], part.groupKey, part, undefined)
}
