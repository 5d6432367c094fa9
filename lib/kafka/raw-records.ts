/**
 * A raw partition's records (event-parts.ts) read one at a time, with nothing allocated per
 * record but a view of its value: the offset, timestamp and value bytes of a record that
 * readRecord (event.ts) would parse without a problem. A record it does not read — a problem of
 * any kind, no value — is for readRecord to parse (`parseRawRecord`), which says what is wrong.
 */
import { decodedSize, isBase64, writeBase64 } from './base64.js'
import { parseHeaders, parseTimestamp, readRecord, type KafkaRecord } from './event.js'
import type { RawPartition } from './event-parts.js'

export class RawRecordReader {
  /** The last record read: its offset (a safe integer: the partition is plain), timestamp (epoch millis, -1 for none) and value. */
  offset = 0
  timestamp = 0
  /** A view of the value's bytes, valid until the next `read`. */
  value: Uint8Array = new Uint8Array(0)
  #buf: Buffer = Buffer.allocUnsafeSlow(64 * 1024)

  /** Record `i` of `part`; false when readRecord would flag it or it has no value. */
  read(part: RawPartition, i: number): boolean {
    const r = part.list[i]!
    const timestamp = parseTimestamp(r.timestamp)
    if (timestamp === undefined) return false
    const { timestampType, key, headers, value } = r
    if (timestampType !== undefined && timestampType !== null && typeof timestampType !== 'string') return false
    if (key !== undefined && key !== null && (typeof key !== 'string' || !isBase64(key))) return false
    // Headers are validated as readRecord validates them (the lane's tables keep none).
    if (headers !== undefined && headers !== null && !(Array.isArray(headers) && headers.length === 0) && typeof parseHeaders(headers) === 'string') return false
    if (typeof value !== 'string') return false
    const size = decodedSize(value.length)
    if (size > this.#buf.length) this.#buf = Buffer.allocUnsafeSlow(Math.max(size, this.#buf.length * 2))
    const n = writeBase64(this.#buf, 0, value)
    if (n < 0) return false
    this.offset = r.offset as number
    this.timestamp = timestamp
    this.value = new Uint8Array(this.#buf.buffer, this.#buf.byteOffset, n)
    return true
  }
}

/** Record `i` of `part` parsed as parseKafkaEvent parses it. */
export function parseRawRecord(part: RawPartition, i: number): KafkaRecord {
  return readRecord(part.list[i], part.groupKey, part, undefined)
}
