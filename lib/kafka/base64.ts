/**
 * Base64 keys and values of the Lambda Kafka event: strict standard base64 (padding optional),
 * decoded without a regex or a Buffer per record (event parsing was 15 % of the writer's encode
 * pass, issue 20).
 */

/** 1 for the characters of the standard base64 alphabet (A-Z a-z 0-9 + /), by char code. */
const BASE64_ALPHABET = new Uint8Array(128)
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/') BASE64_ALPHABET[c.charCodeAt(0)] = 1

/**
 * Strict standard base64, padding optional: quads, then a 2- or 3-character tail, padded to a
 * quad or not. Same language as /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2,3})?$/,
 * checked with one pass over the char codes and a table.
 */
export function isBase64(text: string): boolean {
  let end = text.length
  while (end > 0 && text.charCodeAt(end - 1) === 0x3d) end--
  const pad = text.length - end
  if (pad > 2) return false
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i)
    if (c >= 128 || BASE64_ALPHABET[c] === 0) return false
  }
  const tail = end % 4
  return tail !== 1 && (pad === 0 || tail + pad === 4)
}

/** Strict standard base64 (padding optional); undefined when the text is not base64. */
export function decodeBase64(text: string): Uint8Array | undefined {
  if (!isBase64(text)) return undefined
  const buf = Buffer.from(text, 'base64')
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength)
}

/** The most bytes base64 text of `length` characters decodes to. */
export const decodedSize = (length: number): number => Math.ceil(length / 4) * 3

/**
 * `text` decoded into `buf` at `pos` (which has room for decodedSize(text.length)); the number of
 * bytes written, or -1 when the text is not strict base64. The common case is checked natively,
 * without encoding back: Node's decoder skips every character outside its alphabets (`=`
 * anywhere included), so padded ASCII text with no `-` or `_` (its URL-safe alphabet) decodes to
 * exactly 3/4 of its length less its padding only when every character was base64. (Not any
 * text: the decoder reads a character past U+00FF by its low byte, so `ő`, U+0151, counts as `Q`;
 * a string is ASCII when its UTF-8 length is its length.) Anything else takes isBase64.
 */
export function writeBase64(buf: Buffer, pos: number, text: string): number {
  const len = text.length
  if (len % 4 === 0) {
    const n = base64Write.call(buf, text, pos, buf.length - pos)
    const pad = len === 0 || text.charCodeAt(len - 1) !== 0x3d ? 0 : text.charCodeAt(len - 2) === 0x3d ? 2 : 1
    if (n === (len / 4) * 3 - pad && !text.includes('-') && !text.includes('_') && Buffer.byteLength(text, 'utf8') === len) return n
  }
  return isBase64(text) ? base64Write.call(buf, text, pos, buf.length - pos) : -1
}

/**
 * Node's native base64 decoder, which `buf.write(text, pos, 'base64')` reaches after checking its
 * arguments and looking the encoding up (~25 ns a call: measured 0.5 % of the narrow writer).
 */
const base64Write = (Buffer.prototype as unknown as { base64Write(this: Buffer, text: string, offset: number, length: number): number }).base64Write

/**
 * One buffer for every key and value of an event, sized from the base64 lengths: a record's bytes
 * are a view into it (no Buffer allocated per record; measured 3× cheaper than Buffer.from per
 * value, issue 20). The views live as long as the event's records do.
 */
export interface Base64Sink {
  buf: Buffer
  pos: number
}

/** A sink for the keys and values of `lists` (records as the event has them). */
export function base64Sink(lists: readonly (readonly unknown[])[]): Base64Sink {
  let size = 0
  for (const list of lists) {
    for (const raw of list) {
      if (typeof raw !== 'object' || raw === null) continue
      const { key, value } = raw as Record<string, unknown>
      if (typeof key === 'string') size += decodedSize(key.length)
      if (typeof value === 'string') size += decodedSize(value.length)
    }
  }
  return { buf: Buffer.allocUnsafeSlow(size), pos: 0 }
}

/** Decode `text` into the sink; undefined when it is not strict base64. */
export function sinkBase64(sink: Base64Sink, text: string): Uint8Array | undefined {
  const { buf, pos } = sink
  const n = writeBase64(buf, pos, text)
  if (n < 0) return undefined
  sink.pos = pos + n
  return new Uint8Array(buf.buffer, buf.byteOffset + pos, n)
}
