/**
 * A lossless reader and writer of Thrift's compact protocol, generic over structs (no IDL): a
 * struct is its fields in order, each with its id, wire type and value, so decode → encode gives
 * back the same bytes and a caller can add one field to a Parquet footer without knowing the rest
 * (parquet-format's FileMetaData). hyparquet's reader drops the wire types, so it cannot do this.
 */
export const T = { TRUE: 1, FALSE: 2, BYTE: 3, I16: 4, I32: 5, I64: 6, DOUBLE: 7, BINARY: 8, LIST: 9, SET: 10, MAP: 11, STRUCT: 12 } as const

export interface TField {
  id: number
  type: number
  value: TValue
}
export type TStruct = TField[]
export interface TList {
  elem: number
  items: TValue[]
}
export interface TMap {
  key: number
  val: number
  entries: [TValue, TValue][]
}
/** booleans as boolean, integers as bigint, doubles as their 8 raw bytes, binary as bytes. */
export type TValue = boolean | bigint | Uint8Array | TList | TMap | TStruct

class Reader {
  pos = 0
  constructor(readonly b: Uint8Array) {}
  byte(): number {
    if (this.pos >= this.b.length) throw new Error(`thrift: read past the end (${this.b.length} bytes)`)
    return this.b[this.pos++]!
  }
  varint(): bigint {
    let out = 0n
    for (let shift = 0n; ; shift += 7n) {
      const x = this.byte()
      out |= BigInt(x & 0x7f) << shift
      if (!(x & 0x80)) return out
    }
  }
  zigzag = (): bigint => {
    const n = this.varint()
    return n & 1n ? -(n >> 1n) - 1n : n >> 1n
  }
  bytes(n: number): Uint8Array {
    if (this.pos + n > this.b.length) throw new Error(`thrift: ${n} bytes past the end at ${this.pos}`)
    const out = this.b.subarray(this.pos, this.pos + n)
    this.pos += n
    return out
  }
}

function readValue(r: Reader, type: number): TValue {
  switch (type) {
    case T.TRUE:
    case T.FALSE:
      // Inside lists and maps a boolean is a whole byte (1 true, 2 false as written by Thrift's own libraries).
      return r.byte() === 1
    case T.BYTE:
      return BigInt(r.byte())
    case T.I16:
    case T.I32:
    case T.I64:
      return r.zigzag()
    case T.DOUBLE:
      return r.bytes(8)
    case T.BINARY:
      return r.bytes(Number(r.varint()))
    case T.LIST:
    case T.SET: {
      const h = r.byte()
      const size = h >> 4 === 15 ? Number(r.varint()) : h >> 4
      const items: TValue[] = []
      for (let i = 0; i < size; i++) items.push(readValue(r, h & 15))
      return { elem: h & 15, items }
    }
    case T.MAP: {
      const size = Number(r.varint())
      const kv = size ? r.byte() : 0
      const entries: [TValue, TValue][] = []
      for (let i = 0; i < size; i++) entries.push([readValue(r, kv >> 4), readValue(r, kv & 15)])
      return { key: kv >> 4, val: kv & 15, entries }
    }
    case T.STRUCT:
      return readStruct(r)
    default:
      throw new Error(`thrift: unknown compact type ${type} at byte ${r.pos}`)
  }
}

function readStruct(r: Reader): TStruct {
  const fields: TStruct = []
  let last = 0
  for (;;) {
    const h = r.byte()
    if (h === 0) return fields
    const type = h & 15
    const id = h >> 4 ? last + (h >> 4) : Number(r.zigzag())
    last = id
    const value = type === T.TRUE || type === T.FALSE ? type === T.TRUE : readValue(r, type)
    fields.push({ id, type, value })
  }
}

/** Decodes one struct at the start of `bytes`; `end` is where it stopped. */
export function decodeStruct(bytes: Uint8Array): { struct: TStruct; end: number } {
  const r = new Reader(bytes)
  return { struct: readStruct(r), end: r.pos }
}

class Writer {
  private chunks: number[] = []
  byte(x: number) {
    this.chunks.push(x & 0xff)
  }
  varint(n: bigint) {
    do {
      const low = Number(n & 0x7fn)
      n >>= 7n
      this.byte(n ? low | 0x80 : low)
    } while (n)
  }
  zigzag(n: bigint) {
    this.varint(n < 0n ? (-n << 1n) - 1n : n << 1n)
  }
  bytes(b: Uint8Array) {
    for (const x of b) this.chunks.push(x)
  }
  done = () => Uint8Array.from(this.chunks)
}

function writeValue(w: Writer, type: number, v: TValue): void {
  switch (type) {
    case T.TRUE:
    case T.FALSE:
      return w.byte(v ? 1 : 2)
    case T.BYTE:
      return w.byte(Number(v as bigint))
    case T.I16:
    case T.I32:
    case T.I64:
      return w.zigzag(v as bigint)
    case T.DOUBLE:
      return w.bytes(v as Uint8Array)
    case T.BINARY:
      w.varint(BigInt((v as Uint8Array).length))
      return w.bytes(v as Uint8Array)
    case T.LIST:
    case T.SET: {
      const { elem, items } = v as TList
      if (items.length < 15) w.byte((items.length << 4) | elem)
      else {
        w.byte(0xf0 | elem)
        w.varint(BigInt(items.length))
      }
      for (const item of items) writeValue(w, elem, item)
      return
    }
    case T.MAP: {
      const { key, val, entries } = v as TMap
      w.varint(BigInt(entries.length))
      if (entries.length) w.byte((key << 4) | val)
      for (const [k, x] of entries) {
        writeValue(w, key, k)
        writeValue(w, val, x)
      }
      return
    }
    case T.STRUCT:
      return writeStruct(w, v as TStruct)
    default:
      throw new Error(`thrift: unknown compact type ${type}`)
  }
}

function writeStruct(w: Writer, fields: TStruct): void {
  let last = 0
  for (const f of fields) {
    const type = f.type === T.TRUE || f.type === T.FALSE ? (f.value ? T.TRUE : T.FALSE) : f.type
    const delta = f.id - last
    if (delta > 0 && delta <= 15) w.byte((delta << 4) | type)
    else {
      w.byte(type)
      w.zigzag(BigInt(f.id))
    }
    last = f.id
    if (type !== T.TRUE && type !== T.FALSE) writeValue(w, type, f.value)
  }
  w.byte(0)
}

export function encodeStruct(fields: TStruct): Uint8Array {
  const w = new Writer()
  writeStruct(w, fields)
  return w.done()
}
