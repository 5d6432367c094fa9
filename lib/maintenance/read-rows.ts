/**
 * Reading a data file back as rows of the table's current schema, in bounded chunks, for
 * compaction: hyparquet decodes one window of rows at a time (never a whole file's rows at once),
 * and each value is turned into the representation lib/writer/columnar builds Arrow from (long,
 * time and timestamps as bigint, dates as day numbers, binary/fixed/uuid as bytes, maps as Map).
 *
 * Columns are matched by Iceberg field id (the Parquet `field_id`), so a renamed column is read
 * from files written before the rename, and a column added later reads as null. Exactness comes
 * first: a type this reader cannot return exactly (decimal — hyparquet converts it to a float —,
 * maps with non-string keys, an unknown timestamp unit) fails with CompactionUnsupportedError
 * naming the column, and compaction skips the table instead of rewriting a value inexactly.
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { decompress as zstdDecompress } from 'fzstd'
import { parquetMetadataAsync, parquetReadObjects, parquetSchema, type AsyncBuffer, type FileMetaData } from 'hyparquet'
import { IcebergError } from '../errors.js'
import { isList, isMap, isStruct, type IcebergType, type NestedField, type StructType } from '../schema/index.js'
import { compileCoercer, type Row } from '../writer/index.js'
import type { FileIO } from '../io/index.js'

/** A table or file compaction cannot rewrite exactly; the message names the column. */
export class CompactionUnsupportedError extends IcebergError {}

type Tree = ReturnType<typeof parquetSchema>
type Convert = (v: unknown) => unknown

const compressors = {
  ZSTD: (input: Uint8Array, outputLength: number) => {
    const out = zstdDecompress(input, new Uint8Array(outputLength))
    return out.length === outputLength ? out : out.subarray(0, outputLength)
  },
  GZIP: (input: Uint8Array) => new Uint8Array(gunzipSync(input)),
  BROTLI: (input: Uint8Array) => new Uint8Array(brotliDecompressSync(input)),
}

/** Values as the columnar builder takes them: timestamps stay integers in their own unit. */
const parsers = {
  timestampFromMilliseconds: (v: bigint) => ({ unit: 'ms', v: BigInt(v) }),
  timestampFromMicroseconds: (v: bigint) => ({ unit: 'us', v: BigInt(v) }),
  timestampFromNanoseconds: (v: bigint) => ({ unit: 'ns', v: BigInt(v) }),
  dateFromDays: (d: number) => d,
  uuidFromBytes: (b: Uint8Array) => b,
}

const SCALE: Record<string, bigint> = { ms: 1_000_000n, us: 1_000n, ns: 1n }

function timestamp(path: string, targetNanosPer: bigint): Convert {
  return (v) => {
    if (typeof v === 'bigint') return v // INT64 without a logical type: already in the column's unit
    const t = v as { unit?: string; v?: bigint }
    const scale = t?.unit === undefined ? undefined : SCALE[t.unit]
    if (scale === undefined || typeof t.v !== 'bigint') throw new CompactionUnsupportedError(`column ${path}: cannot read timestamp value ${String(v)}`)
    const nanos = t.v * scale
    if (nanos % targetNanosPer !== 0n) throw new CompactionUnsupportedError(`column ${path}: timestamp ${t.v}${t.unit} does not fit the column's unit exactly`)
    return nanos / targetNanosPer
  }
}

function primitive(type: string, path: string): Convert {
  switch (type) {
    case 'boolean':
    case 'int':
    case 'date':
    case 'float':
    case 'double':
    case 'string':
      return (v) => v
    case 'long':
    case 'time':
      return (v) => (typeof v === 'number' ? BigInt(v) : v)
    case 'timestamp':
    case 'timestamptz':
      return timestamp(path, 1_000n)
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return timestamp(path, 1n)
    case 'uuid':
    case 'binary':
      return (v) => (typeof v === 'string' ? new TextEncoder().encode(v) : v)
  }
  if (type.startsWith('fixed[')) return (v) => v
  throw new CompactionUnsupportedError(`column ${path}: type ${type} cannot be read back exactly for compaction`)
}

const childById = (node: Tree, id: number): Tree | undefined => node.children.find((c) => c.element.field_id === id)

function compile(type: IcebergType, node: Tree, path: string): Convert {
  if (isStruct(type)) return struct(type, node, path)
  if (isList(type)) {
    const element = node.children[0]?.children[0] ?? node.children[0]
    if (!element) throw new CompactionUnsupportedError(`column ${path}: list without an element in the file`)
    const conv = compile(type.element, element, `${path}.element`)
    return (v) => (Array.isArray(v) ? v.map((e) => (e === null || e === undefined ? null : conv(e))) : v)
  }
  if (isMap(type)) {
    if (type.key !== 'string') throw new CompactionUnsupportedError(`column ${path}: map keys of type ${JSON.stringify(type.key)} are not read back exactly`)
    const kv = node.children[0]
    const valueNode = kv?.children[1]
    if (!valueNode) throw new CompactionUnsupportedError(`column ${path}: map without values in the file`)
    const conv = compile(type.value, valueNode, `${path}.value`)
    return (v) => {
      if (v === null || v === undefined) return null
      const entries = v instanceof Map ? [...v.entries()] : Object.entries(v as Record<string, unknown>)
      return new Map(entries.map(([k, x]) => [k, x === null || x === undefined ? null : conv(x)]))
    }
  }
  return primitive(type, path)
}

function struct(type: StructType, node: Tree, path: string): Convert {
  const fields = type.fields.map((f) => {
    const child = childById(node, f.id)
    const p = path ? `${path}.${f.name}` : f.name
    if (!child) {
      const missing = initialDefault(f, p)
      if (missing === null && f.required) throw new CompactionUnsupportedError(`column ${p}: required but missing from a file written before it was added`)
      return { name: f.name, source: undefined, conv: undefined, missing }
    }
    return { name: f.name, source: child.element.name, conv: compile(f.type, child, p), missing: null }
  })
  return (v) => {
    if (v === null || v === undefined) return null
    const rec = v as Record<string, unknown>
    const out: Row = {}
    for (const f of fields) {
      if (f.source === undefined) {
        out[f.name] = f.missing
        continue
      }
      const x = rec[f.source]
      out[f.name] = x === null || x === undefined ? null : f.conv!(x)
    }
    return out
  }
}

/**
 * What a file written before a field was added holds for it: the field's v3 `initial-default`
 * (null without one), in the builder's representation. The JSON single-value form is converted
 * by the writer's own coercion (as for `write-default`), so compaction writes exactly the value
 * every reader returns for the old file; a default it cannot convert skips the table.
 */
function initialDefault(field: NestedField, path: string): unknown {
  const raw = field['initial-default']
  if (raw === undefined || raw === null) return null
  const one: StructType = { type: 'struct', fields: [{ ...field, 'write-default': raw }] }
  try {
    return compileCoercer(one, { table: path })({}).row[field.name] ?? null
  } catch (err) {
    throw new CompactionUnsupportedError(`column ${path}: initial-default ${JSON.stringify(raw)} cannot be converted exactly (${(err as Error).message})`)
  }
}

export interface RowGroupInfo {
  rows: number
  /** Bytes fetched to read it (its column chunks, compressed). */
  compressed: number
  /** Uncompressed bytes of its pages. */
  uncompressed: number
}

export interface RowSource {
  metadata: FileMetaData
  rows: number
  /** Average uncompressed bytes per row (sizes chunks). */
  rowBytes: number
  groups: RowGroupInfo[]
  /** Leaf columns (pages read per window: up to one partial page each beyond the window). */
  leaves: number
  /** Rows [start, end) as current-schema rows. */
  read(start: number, end: number): Promise<Row[]>
}

/**
 * A file read by byte ranges (hyparquet fetches only the column chunks of the row groups a read
 * needs). A file of at most `wholeBelow` bytes is read once, whole, on the first slice: hyparquet's
 * first footer fetch is 512 KB anyway, and the windows then cost no further requests.
 */
export function rangedFile(io: Pick<FileIO, 'readRange'>, path: string, size: number, wholeBelow = 0): AsyncBuffer {
  const toBuffer = (b: Uint8Array) => (b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b.buffer : b.slice().buffer) as ArrayBuffer
  let whole: Promise<ArrayBuffer> | undefined
  return {
    byteLength: size,
    async slice(start, end) {
      if (size <= wholeBelow) {
        whole ??= io.readRange(path, 0, size).then(toBuffer)
        return (await whole).slice(start, end ?? size)
      }
      return toBuffer(await io.readRange(path, start, end ?? size))
    },
  }
}

/** Opens one data file for chunked reading into `schema`: only its footer is read here. */
export async function openRows(file: AsyncBuffer, schema: StructType, what: string): Promise<RowSource> {
  const metadata = await parquetMetadataAsync(file)
  const root = parquetSchema(metadata)
  const conv = struct(schema, root, '')
  const rows = Number(metadata.num_rows)
  const groups = metadata.row_groups.map((rg) => ({
    rows: Number(rg.num_rows),
    compressed: rg.columns.reduce((a, c) => a + Number(c.meta_data?.total_compressed_size ?? 0), 0),
    uncompressed: Number(rg.total_byte_size),
  }))
  const uncompressed = groups.reduce((a, g) => a + g.uncompressed, 0)
  return {
    metadata,
    rows,
    rowBytes: rows > 0 ? Math.max(1, uncompressed / rows) : 1,
    groups,
    leaves: metadata.row_groups[0]?.columns.length ?? 0,
    async read(start, end) {
      // With the offset index (parquet-wasm writes one), only the pages overlapping the window are fetched and decoded.
      const raw = await parquetReadObjects({ file, metadata, rowStart: start, rowEnd: end, useOffsetIndex: true, utf8: false, parsers: parsers as never, compressors: compressors as never })
      if (raw.length !== end - start) throw new IcebergError(`${what}: read ${raw.length} rows for [${start}, ${end})`)
      return raw.map((r) => conv(r) as Row)
    },
  }
}
