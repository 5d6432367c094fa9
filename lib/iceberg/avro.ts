/**
 * The Avro object container format (https://avro.apache.org/docs/1.11.1/specification/#object-container-files)
 * over avsc types, synchronously: codecs `null` and `deflate` (raw DEFLATE via node:zlib), and
 * 64-bit longs as `bigint` so snapshot ids above 2^53 survive. The writer's raw schema JSON is
 * kept (readers need its `field-id`s) and written verbatim into the header.
 */
import { randomBytes } from 'node:crypto'
import { deflateRawSync, inflateRawSync } from 'node:zlib'
import avro from 'avsc'
import { IcebergError } from '../errors.js'

/** avsc long whose values are bigint (the default refuses anything beyond 2^53). */
// oxlint-disable-next-line no-underscore-dangle -- avsc's documented API for custom long types
export const BigLongType = avro.types.LongType.__with({
  fromBuffer: (buf: Buffer) => buf.readBigInt64LE(),
  toBuffer: (n: bigint) => {
    const buf = Buffer.alloc(8)
    buf.writeBigInt64LE(BigInt(n))
    return buf
  },
  fromJSON: (v: unknown) => BigInt(v as string),
  toJSON: (n: bigint) => n.toString(),
  isValid: (n: unknown) => typeof n === 'bigint',
  compare: (a: bigint, b: bigint) => (a === b ? 0 : a < b ? -1 : 1),
})

const typeHook = (schema: unknown): avro.Type | undefined => {
  if (schema === 'long') return BigLongType
  if (typeof schema === 'object' && schema !== null && (schema as { type?: unknown }).type === 'long') return BigLongType
  return undefined
}

/** An avsc type for a raw schema, with bigint longs. */
export function avroType(schema: unknown): avro.Type {
  return avro.Type.forSchema(schema as avro.Schema, { typeHook: typeHook as never, wrapUnions: false })
}

const MAGIC = Buffer.from([0x4f, 0x62, 0x6a, 0x01]) // "Obj" 1
const metaType = avro.Type.forSchema({ type: 'map', values: 'bytes' })
const plainLong = avro.Type.forSchema('long')

export interface AvroFile {
  /** The writer schema exactly as in the header (with `field-id`s when the writer put them there). */
  schema: unknown
  /** Header metadata other than the schema, as UTF-8 strings (`avro.codec`, `format-version`, ...). */
  meta: Record<string, string>
  records: unknown[]
}

/** Decodes a whole container file. `what` names the file in error messages. */
export function readAvroFile(bytes: Uint8Array, what: string): AvroFile {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (buf.length === 0) throw new IcebergError(`${what}: empty file, not an Avro container`)
  if (buf.subarray(0, 4).toString('latin1') === 'AGS1')
    throw new IcebergError(`${what}: the file is encrypted (AES-GCM stream 'AGS1'); encrypted tables are not supported`)
  if (buf.length < 4 || !buf.subarray(0, 4).equals(MAGIC)) throw new IcebergError(`${what}: not an Avro container file (bad magic)`)
  try {
    let pos = 4
    const header = metaType.decode(buf, pos)
    if (header.offset < 0) throw new Error('truncated header')
    pos = header.offset
    const rawMeta = header.value as Record<string, Buffer>
    const sync = buf.subarray(pos, pos + 16)
    pos += 16
    if (sync.length !== 16) throw new Error('truncated sync marker')
    const meta: Record<string, string> = {}
    for (const [k, v] of Object.entries(rawMeta)) if (k !== 'avro.schema') meta[k] = v.toString('utf8')
    if (!rawMeta['avro.schema']) throw new Error('no avro.schema in the header')
    const schema = JSON.parse(rawMeta['avro.schema'].toString('utf8')) as unknown
    const type = avroType(schema)
    const codec = meta['avro.codec'] ?? 'null'
    if (codec !== 'null' && codec !== 'deflate') throw new Error(`unsupported codec '${codec}' (null and deflate are supported)`)
    const records: unknown[] = []
    while (pos < buf.length) {
      const count = plainLong.decode(buf, pos)
      if (count.offset < 0) throw new Error('truncated block header')
      const size = plainLong.decode(buf, count.offset)
      if (size.offset < 0) throw new Error('truncated block header')
      const start = size.offset
      const end = start + (size.value as number)
      if (end + 16 > buf.length) throw new Error('truncated block')
      let block = buf.subarray(start, end)
      if (codec === 'deflate') block = inflateRawSync(block)
      let p = 0
      for (let i = 0; i < (count.value as number); i++) {
        const r = type.decode(block, p)
        if (r.offset < 0) throw new Error('truncated record')
        records.push(r.value)
        p = r.offset
      }
      if (!buf.subarray(end, end + 16).equals(sync)) throw new Error('sync marker mismatch')
      pos = end + 16
    }
    return { schema, meta, records }
  } catch (err) {
    if (err instanceof IcebergError) throw err
    throw new IcebergError(`${what}: cannot decode Avro: ${(err as Error).message}`, { cause: err })
  }
}

/** Encodes records as one deflate (or null) container file with `schema` written verbatim. */
export function writeAvroFile(
  schema: object,
  records: unknown[],
  meta: Record<string, string>,
  codec: 'deflate' | 'null' = 'deflate',
): Uint8Array {
  const type = avroType(schema)
  const header: Record<string, Buffer> = { 'avro.schema': Buffer.from(JSON.stringify(schema)), 'avro.codec': Buffer.from(codec) }
  for (const [k, v] of Object.entries(meta)) header[k] = Buffer.from(v)
  const sync = randomBytes(16)
  const parts: Buffer[] = [MAGIC, metaType.toBuffer(header), sync]
  const BLOCK = 4096
  for (let i = 0; i < records.length; i += BLOCK) {
    const chunk = records.slice(i, i + BLOCK)
    const encoded = Buffer.concat(chunk.map((r, j) => encodeRecord(type, r, i + j)))
    const data = codec === 'deflate' ? deflateRawSync(encoded) : encoded
    parts.push(plainLong.toBuffer(chunk.length), plainLong.toBuffer(data.length), data, sync)
  }
  return new Uint8Array(Buffer.concat(parts))
}

/** Encodes one record; an invalid one fails naming the offending field paths, not with avsc's raw dump. */
function encodeRecord(type: avro.Type, record: unknown, index: number): Buffer {
  try {
    return type.toBuffer(record)
  } catch (err) {
    const bad: string[] = []
    type.isValid(record, { errorHook: (path: string[], value: unknown) => bad.push(`${path.join('.')} = ${show(value)}`) })
    throw new IcebergError(`cannot encode Avro record ${index}: invalid ${bad.join(', ') || (err as Error).message}`, { cause: err })
  }
}

const show = (v: unknown): string => {
  if (typeof v === 'bigint') return `${v}n`
  if (v instanceof Uint8Array) return `bytes[${v.length}]`
  try {
    return JSON.stringify(v) ?? String(v)
  } catch {
    return String(v)
  }
}

/** Java's AvroSchemaUtil.makeCompatibleName: Avro names are [A-Za-z_][A-Za-z0-9_]*. */
export function avroName(name: string): string {
  let out = ''
  for (let i = 0; i < name.length; i++) {
    const c = name[i]!
    const ok = i === 0 ? /[A-Za-z_]/.test(c) : /[A-Za-z0-9_]/.test(c)
    if (ok) out += c
    else if (i === 0 && /[0-9]/.test(c)) out += `_${c}`
    else out += `_x${c.codePointAt(0)!.toString(16).toUpperCase()}`
  }
  return out
}
