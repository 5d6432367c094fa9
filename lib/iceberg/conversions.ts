/**
 * Iceberg's binary single-value serialization (https://iceberg.apache.org/spec/#binary-single-value-serialization,
 * spec Appendix D; pyiceberg's `conversions.py`): the bytes of one value of a primitive type, as
 * column bounds in manifests (metrics.ts) and partition values and bucket hashing use them
 * (transforms.ts, partition.ts, manifest.ts).
 *
 * Values are in the writer's representation (shared with transforms.ts):
 *   boolean → boolean; int, date (days) → number; long, time (µs), timestamp[tz] (µs),
 *   timestamp[tz]_ns (ns) → bigint (a safe-integer number is accepted); float, double → number;
 *   string → string; uuid → string (or its 16 bytes); fixed[L], binary → Uint8Array;
 *   decimal(P, S) → the unscaled value as bigint (10.65 in decimal(4, 2) is 1065n).
 */
import { IcebergError } from '../errors.js'

export type BoundValue = boolean | number | bigint | string | Uint8Array

const utf8 = new TextEncoder()
const utf8Decoder = new TextDecoder('utf-8', { fatal: true })

function fail(type: string, value: unknown, why: string): never {
  const shown = typeof value === 'bigint' ? `${value}n` : value instanceof Uint8Array ? `bytes[${value.length}]` : JSON.stringify(value)
  throw new IcebergError(`cannot serialize ${type} bound ${shown}: ${why}`)
}

function asBigInt(type: string, value: unknown): bigint {
  if (typeof value === 'bigint') return value
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value)
  return fail(type, value, 'expected a bigint (or a safe integer)')
}

function le(size: 4 | 8, write: (view: DataView) => void): Uint8Array {
  const out = new Uint8Array(size)
  write(new DataView(out.buffer))
  return out
}

/** Minimal two's-complement big-endian bytes of a bigint (decimal unscaled values; also used by bucket hashing). */
export function bigIntToMinBytes(value: bigint): Uint8Array {
  const bytes: number[] = []
  let v = value
  // Emit low bytes until the remaining value is pure sign extension of the last byte emitted.
  for (;;) {
    const byte = Number(BigInt.asUintN(8, v))
    bytes.unshift(byte)
    v >>= 8n
    const signBit = (byte & 0x80) !== 0
    if ((v === 0n && !signBit) || (v === -1n && signBit)) break
  }
  return Uint8Array.from(bytes)
}

/** The bigint a two's-complement big-endian byte string stands for. */
export function minBytesToBigInt(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n
  let v = 0n
  for (const b of bytes) v = (v << 8n) | BigInt(b)
  return BigInt.asIntN(bytes.length * 8, v)
}

/** A UUID string (any case, with dashes) to its 16 big-endian bytes. */
export function uuidToBytes(uuid: string): Uint8Array {
  const hex = uuid.replace(/-/g, '')
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new IcebergError(`invalid uuid '${uuid}'`)
  return Uint8Array.from(hex.match(/../g)!.map((h) => parseInt(h, 16)))
}

export function bytesToUuid(bytes: Uint8Array): string {
  if (bytes.length !== 16) throw new IcebergError(`a uuid is 16 bytes, got ${bytes.length}`)
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** `type` is the primitive `prefix`, bare or with parameters (`fixed[16]`, `decimal(9, 2)`). */
export const typeIs = (type: string, prefix: string): boolean => type === prefix || type.startsWith(`${prefix}(`) || type.startsWith(`${prefix}[`)

/** Serialize one value of a primitive Iceberg type (spec Appendix D). */
export function toBoundBytes(type: string, value: BoundValue): Uint8Array {
  switch (type) {
    case 'boolean':
      if (typeof value !== 'boolean') fail(type, value, 'expected a boolean')
      return Uint8Array.of(value ? 1 : 0)
    case 'int':
    case 'date':
      if (typeof value !== 'number' || !Number.isInteger(value) || value < -(2 ** 31) || value >= 2 ** 31) fail(type, value, 'expected a 32-bit integer')
      return le(4, (v) => v.setInt32(0, value, true))
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns': {
      const big = asBigInt(type, value)
      if (BigInt.asIntN(64, big) !== big) fail(type, value, 'out of the 64-bit range')
      return le(8, (v) => v.setBigInt64(0, big, true))
    }
    case 'float':
      if (typeof value !== 'number') fail(type, value, 'expected a number')
      return le(4, (v) => v.setFloat32(0, value, true))
    case 'double':
      if (typeof value !== 'number') fail(type, value, 'expected a number')
      return le(8, (v) => v.setFloat64(0, value, true))
    case 'string':
      if (typeof value !== 'string') fail(type, value, 'expected a string')
      return utf8.encode(value)
    case 'uuid':
      if (value instanceof Uint8Array && value.length === 16) return value
      if (typeof value !== 'string') fail(type, value, 'expected a uuid string or 16 bytes')
      return uuidToBytes(value)
    case 'binary':
      if (!(value instanceof Uint8Array)) fail(type, value, 'expected bytes')
      return value
  }
  if (typeIs(type, 'fixed')) {
    if (!(value instanceof Uint8Array)) fail(type, value, 'expected bytes')
    return value
  }
  if (typeIs(type, 'decimal')) return bigIntToMinBytes(asBigInt(type, value))
  return fail(type, value, 'the type has no single-value binary serialization')
}

/** Read one value back (inverse of toBoundBytes; int/date as number, 64-bit types as bigint, uuid as string). */
export function fromBoundBytes(type: string, bytes: Uint8Array): BoundValue {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const need = (n: number) => {
    if (bytes.length !== n) throw new IcebergError(`a ${type} bound is ${n} bytes, got ${bytes.length}`)
  }
  switch (type) {
    case 'boolean':
      need(1)
      return bytes[0] !== 0
    case 'int':
    case 'date':
      need(4)
      return view.getInt32(0, true)
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      // Some writers stored int bounds for a column later promoted to long: accept 4 bytes too.
      if (type === 'long' && bytes.length === 4) return BigInt(view.getInt32(0, true))
      need(8)
      return view.getBigInt64(0, true)
    case 'float':
      need(4)
      return view.getFloat32(0, true)
    case 'double':
      if (bytes.length === 4) return view.getFloat32(0, true) // promoted from float
      need(8)
      return view.getFloat64(0, true)
    case 'string':
      try {
        return utf8Decoder.decode(bytes)
      } catch (err) {
        throw new IcebergError(`a string bound is not valid UTF-8 (${bytes.length} bytes)`, { cause: err })
      }
    case 'uuid':
      return bytesToUuid(bytes)
    case 'binary':
      return bytes.slice()
  }
  if (typeIs(type, 'fixed')) return bytes.slice()
  if (typeIs(type, 'decimal')) return minBytesToBigInt(bytes)
  throw new IcebergError(`type ${type} has no single-value binary serialization`)
}
