/**
 * A plain Avro reader for tests: avsc's own container decoder, with no Iceberg knowledge and no
 * field-id resolution, so it checks what any Avro reader sees in the files we write. Longs are
 * decoded as decimal strings: snapshot ids and sequence numbers exceed 2^53.
 */
import { readFile } from 'node:fs/promises'
import { Readable } from 'node:stream'
import avro from 'avsc'

// oxlint-disable-next-line no-underscore-dangle -- avsc's documented API for custom long types
const longAsString = avro.types.LongType.__with({
  fromBuffer: (b: Buffer) => b.readBigInt64LE().toString(),
  toBuffer: (s: string) => {
    const b = Buffer.alloc(8)
    b.writeBigInt64LE(BigInt(s))
    return b
  },
  fromJSON: String,
  toJSON: String,
  isValid: (s: unknown) => typeof s === 'string',
  compare: () => 0,
})

const isLong = (t: unknown) => t === 'long' || (t as { type?: unknown } | null)?.type === 'long'

export interface PlainAvro {
  /** The writer schema from the file header, as JSON (field ids and all); a record in Iceberg's files. */
  schema: { fields: Record<string, unknown>[] } & Record<string, unknown>
  /** The header's metadata, as strings. */
  meta: Record<string, string>
  records: Record<string, unknown>[]
}

/** Decode an Avro object container file. */
export function plainDecode(bytes: Uint8Array): Promise<PlainAvro> {
  return new Promise((resolve, reject) => {
    const records: Record<string, unknown>[] = []
    let schema: PlainAvro['schema'] = { fields: [] }
    let meta: Record<string, string> = {}
    Readable.from([Buffer.from(bytes)])
      .pipe(
        new avro.streams.BlockDecoder({
          parseHook: (s: unknown) => {
            schema = s as PlainAvro['schema']
            return avro.Type.forSchema(s as avro.Schema, { registry: { long: longAsString }, typeHook: ((t: unknown) => (isLong(t) ? longAsString : undefined)) as never })
          },
        }),
      )
      .on('metadata', (_type: unknown, _codec: string, header: { meta: Record<string, Buffer> }) => {
        meta = Object.fromEntries(Object.entries(header.meta).map(([k, v]) => [k, v.toString()]))
      })
      .on('data', (r: Record<string, unknown>) => records.push(r))
      .on('error', reject)
      .on('end', () => resolve({ schema, meta, records }))
  })
}

/** The records of an Avro file on local disk. */
export async function plainRecords(file: string): Promise<Record<string, unknown>[]> {
  return (await plainDecode(await readFile(file))).records
}

/** Dotted paths of record fields (nested too) that carry no integer `field-id`. */
export function fieldsWithoutIds(schema: unknown): string[] {
  const out: string[] = []
  const visit = (t: unknown, p: string): void => {
    if (Array.isArray(t)) return t.forEach((b) => visit(b, p))
    if (!t || typeof t !== 'object') return
    const o = t as Record<string, unknown>
    if (o.type === 'array') visit(o.items, p)
    if (o.type !== 'record') return
    for (const f of o.fields as Record<string, unknown>[]) {
      if (typeof f['field-id'] !== 'number') out.push(`${p}.${String(f.name)}`)
      visit(f.type, `${p}.${String(f.name)}`)
    }
  }
  visit(schema, '')
  return out
}
