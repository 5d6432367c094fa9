/**
 * The few footer facts Iceberg's data file entry needs from a Parquet file — each leaf's field
 * id, each column chunk's compressed size and first page offset, each row group's offset — read
 * straight from the footer's Thrift compact bytes, skipping every other field. Reading the whole
 * FileMetaData into objects (hyparquet's parquetMetadata: statistics, encodings, paths, BigInts)
 * cost ~15 % of a one-row, 200-column file's encode CPU, paid once per file by an event fanned
 * out to 1,200 files (docs/benchmarks.md, "Per-file cost").
 *
 * parquet-format's field ids: FileMetaData 2 schema, 4 row_groups; SchemaElement 5 num_children,
 * 9 field_id; RowGroup 1 columns, 5 file_offset; ColumnChunk 3 meta_data; ColumnMetaData 7
 * total_compressed_size, 9 data_page_offset, 11 dictionary_page_offset. The shape is the subset
 * of hyparquet's FileMetaData that metrics.ts reads, so either footer serves it.
 */
import { IcebergError } from '../../errors.js'

export interface FooterLayout {
  schema: { num_children?: number; field_id?: number }[]
  row_groups: {
    file_offset?: number | bigint
    columns: { meta_data?: { total_compressed_size: number | bigint; data_page_offset: number | bigint; dictionary_page_offset?: number | bigint } }[]
  }[]
}

/** Thrift compact protocol wire types. */
const TRUE = 1
const FALSE = 2
const BYTE = 3
const I16 = 4
const I32 = 5
const I64 = 6
const DOUBLE = 7
const BINARY = 8
const LIST = 9
const SET = 10
const MAP = 11
const STRUCT = 12

const MAGIC = 0x31524150 // "PAR1", little-endian

class Cursor {
  pos: number
  constructor(
    readonly b: Uint8Array,
    start: number,
    readonly end: number,
  ) {
    this.pos = start
  }

  byte(): number {
    if (this.pos >= this.end) throw new IcebergError(`Parquet footer ends early (byte ${this.pos} of ${this.end})`)
    return this.b[this.pos++]!
  }

  /** An unsigned varint as a number (exact below 2^53: sizes and offsets of a file). */
  varint(): number {
    let out = 0
    for (let scale = 1; ; scale *= 128) {
      const x = this.byte()
      out += (x & 0x7f) * scale
      if (x < 0x80) return out
    }
  }

  /** A zigzag integer (i16, i32, i64) as a number. */
  int(): number {
    const n = this.varint()
    return n % 2 === 1 ? -(n + 1) / 2 : n / 2
  }

  skip(type: number): void {
    switch (type) {
      case TRUE:
      case FALSE:
        return // a struct field's boolean is in its header; list elements go through skipList
      case BYTE:
        this.pos++
        return
      case I16:
      case I32:
      case I64:
        this.varint()
        return
      case DOUBLE:
        this.pos += 8
        return
      case BINARY: {
        const length = this.varint() // read before pos: `pos += varint()` would add to the pos before the length
        this.pos += length
        return
      }
      case LIST:
      case SET:
        return this.list((elem) => this.element(elem))
      case MAP: {
        const size = this.varint()
        if (size === 0) return
        const kv = this.byte()
        for (let i = 0; i < size; i++) {
          this.element(kv >> 4)
          this.element(kv & 15)
        }
        return
      }
      case STRUCT:
        return this.struct(() => false)
      default:
        throw new IcebergError(`Parquet footer: unknown Thrift compact type ${type} at byte ${this.pos}`)
    }
  }

  /** A list's elements, each read by `read` (given the element type). */
  list(read: (elem: number) => void): void {
    const h = this.byte()
    const size = h >> 4 === 15 ? this.varint() : h >> 4
    for (let i = 0; i < size; i++) read(h & 15)
  }

  /** One collection element: a boolean there is a whole byte. */
  element(type: number): void {
    if (type === TRUE || type === FALSE) this.pos++
    else this.skip(type)
  }

  /** A struct's fields; `read(id, type)` consumes the ones it wants and returns true, the rest are skipped. */
  struct(read: (id: number, type: number) => boolean): void {
    let last = 0
    for (;;) {
      const h = this.byte()
      if (h === 0) return
      const type = h & 15
      const id = h >> 4 ? last + (h >> 4) : this.int()
      last = id
      if (!read(id, type)) this.skip(type)
    }
  }
}

/** The footer facts of a whole Parquet file (its last 8 bytes: footer length, PAR1). */
export function footerLayout(file: Uint8Array): FooterLayout {
  const n = file.length
  const tail = new DataView(file.buffer, file.byteOffset, n)
  if (n < 12 || tail.getUint32(n - 4, true) !== MAGIC) throw new IcebergError(`not a Parquet file: no PAR1 at its end (${n} bytes)`)
  const length = tail.getUint32(n - 8, true)
  if (length > n - 12) throw new IcebergError(`Parquet footer of ${length} bytes in a file of ${n}`)
  const c = new Cursor(file, n - 8 - length, n - 8)
  const out: FooterLayout = { schema: [], row_groups: [] }
  c.struct((id, type) => {
    if (id === 2 && type === LIST) c.list((e) => (e === STRUCT ? out.schema.push(schemaElement(c)) : c.skip(e)))
    else if (id === 4 && type === LIST) c.list((e) => (e === STRUCT ? out.row_groups.push(rowGroup(c)) : c.skip(e)))
    else return false
    return true
  })
  return out
}

function schemaElement(c: Cursor): FooterLayout['schema'][number] {
  const el: FooterLayout['schema'][number] = {}
  c.struct((id, type) => {
    if (id === 5 && type === I32) el.num_children = c.int()
    else if (id === 9 && type === I32) el.field_id = c.int()
    else return false
    return true
  })
  return el
}

function rowGroup(c: Cursor): FooterLayout['row_groups'][number] {
  const rg: FooterLayout['row_groups'][number] = { columns: [] }
  c.struct((id, type) => {
    if (id === 1 && type === LIST) c.list((e) => (e === STRUCT ? rg.columns.push(columnChunk(c)) : c.skip(e)))
    else if (id === 5 && type === I64) rg.file_offset = c.int()
    else return false
    return true
  })
  return rg
}

function columnChunk(c: Cursor): FooterLayout['row_groups'][number]['columns'][number] {
  const chunk: FooterLayout['row_groups'][number]['columns'][number] = {}
  c.struct((id, type) => {
    if (id !== 3 || type !== STRUCT) return false
    const meta = { total_compressed_size: 0, data_page_offset: 0 } as { total_compressed_size: number; data_page_offset: number; dictionary_page_offset?: number }
    c.struct((mid, mtype) => {
      if (mtype !== I64) return false
      if (mid === 7) meta.total_compressed_size = c.int()
      else if (mid === 9) meta.data_page_offset = c.int()
      else if (mid === 11) meta.dictionary_page_offset = c.int()
      else return false
      return true
    })
    chunk.meta_data = meta
    return true
  })
  return chunk
}
