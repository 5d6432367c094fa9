/**
 * Kafka Connect JsonConverter envelopes (`schemas.enable=true`): `{"schema": …, "payload": …}`.
 *
 * Connect schema → Iceberg type (as Iceberg's Kafka Connect sink does):
 * int8/int16/int32 → int, int64 → long, float (float32) → float, double (float64) → double, boolean, string,
 * bytes → binary, array → list, map → map, struct → struct, `optional` → not required.
 * Logical names: org.apache.kafka.connect.data.Decimal → decimal(P, S) (P from the
 * `connect.decimal.precision` parameter, else 38), Date → date, Time → time, Timestamp →
 * timestamptz (Connect timestamps are UTC instants). Other names (e.g. Debezium's) map by their
 * underlying type.
 *
 * Payload values, converted by the schema (the envelope is parsed with lossless-json, so int64
 * and decimals are exact): int64 → bigint; bytes (base64) → Uint8Array; Decimal (base64
 * two's-complement, or a JSON number with `decimal.format=NUMERIC`) → exact decimal string;
 * Date (epoch days) → "YYYY-MM-DD"; Time (millis of day) → "HH:MM:SS.ffffff"; Timestamp (epoch
 * millis) → "YYYY-MM-DDTHH:MM:SS.ffffffZ"; a map with string keys → object, otherwise ([[k, v], …]) → Map.
 */
import { isLosslessNumber, parse, stringify, type LosslessNumber } from 'lossless-json'
import { RecordError, SchemaError } from '../errors.js'
import type { IcebergType, NestedField, Schema, StructType } from '../schema/index.js'
import { decimalFromBytes, IdAllocator, isoDate, isoMicros, isoTime } from './shape.js'

export const CONNECT_DECIMAL = 'org.apache.kafka.connect.data.Decimal'
export const CONNECT_DATE = 'org.apache.kafka.connect.data.Date'
export const CONNECT_TIME = 'org.apache.kafka.connect.data.Time'
export const CONNECT_TIMESTAMP = 'org.apache.kafka.connect.data.Timestamp'

export interface ConnectSchema {
  type: string
  optional?: boolean
  name?: string
  doc?: string
  default?: unknown
  parameters?: Record<string, string>
  fields?: (ConnectSchema & { field: string })[]
  items?: ConnectSchema
  keys?: ConnectSchema
  values?: ConnectSchema
}

/** `wrapped`: the schema is not a struct, so the value was wrapped as `{ value }`. */
export type EnvelopeResult = { ok: true; value: Record<string, unknown>; schema: Schema; wrapped: boolean } | { ok: false; reason: string; tombstone?: true }

/** Decoder for one container's life: schemas are mapped once per distinct schema text. */
export function createEnvelopeDecoder(): (text: string) => EnvelopeResult {
  const schemas = new Map<string, Schema>()
  return (text) => {
    let doc: unknown
    try {
      doc = parse(text)
    } catch (err) {
      return { ok: false, reason: `invalid JSON: ${(err as Error).message}` }
    }
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc) || !('schema' in doc) || !('payload' in doc))
      return { ok: false, reason: 'not a Kafka Connect envelope: expected a JSON object with "schema" and "payload"' }
    const { schema: raw, payload } = doc as { schema: unknown; payload: unknown }
    if (payload === null) return { ok: false, reason: 'payload is null (tombstone)', tombstone: true }
    const key = stringify(raw) ?? 'null'
    let schema = schemas.get(key)
    try {
      const connect = normalizeSchema(raw, '$schema')
      if (schema === undefined) {
        schema = connectToIcebergSchema(connect)
        if (schemas.size > 1000) schemas.clear()
        schemas.set(key, schema)
      }
      const value = convertConnectValue(connect, payload, '$')
      const wrapped = connect.type !== 'struct'
      return { ok: true, schema, wrapped, value: wrapped ? { value } : (value as Record<string, unknown>) }
    } catch (err) {
      if (err instanceof RecordError || err instanceof SchemaError) return { ok: false, reason: err.message }
      throw err
    }
  }
}

function normalizeSchema(raw: unknown, path: string): ConnectSchema {
  if (typeof raw !== 'object' || raw === null || typeof (raw as { type?: unknown }).type !== 'string')
    throw new SchemaError(`${path}: Connect schema must be an object with a "type", got ${stringify(raw)?.slice(0, 100)}`)
  return raw as ConnectSchema
}

/** Connect schema → Iceberg schema; a non-struct root becomes a one-field struct `{ value }`. */
export function connectToIcebergSchema(schema: ConnectSchema): Schema {
  const ids = new IdAllocator()
  if (schema.type === 'struct') return { 'schema-id': 0, ...(connectToIcebergType(schema, ids, '$schema') as StructType) }
  return { 'schema-id': 0, ...structOf([{ ...schema, field: 'value' }], ids, '$schema') }
}

export function connectToIcebergType(s: ConnectSchema, ids: IdAllocator = new IdAllocator(), path = '$schema'): IcebergType {
  switch (s.name) {
    case CONNECT_DECIMAL: {
      const scale = Number(s.parameters?.scale ?? 0)
      const precision = Number(s.parameters?.['connect.decimal.precision'] ?? 38)
      if (!Number.isInteger(scale) || !Number.isInteger(precision) || precision < 1 || precision > 38 || scale < 0 || scale > precision)
        throw new SchemaError(`${path}: Connect Decimal with precision ${precision} and scale ${scale} cannot be an Iceberg decimal (1 ≤ P ≤ 38, 0 ≤ S ≤ P)`)
      return `decimal(${precision}, ${scale})`
    }
    case CONNECT_DATE:
      return 'date'
    case CONNECT_TIME:
      return 'time'
    case CONNECT_TIMESTAMP:
      return 'timestamptz'
  }
  switch (s.type) {
    case 'int8':
    case 'int16':
    case 'int32':
      return 'int'
    case 'int64':
      return 'long'
    case 'float': // the JSON converter's names; float32/float64 are Connect's Schema.Type names
    case 'float32':
      return 'float'
    case 'double':
    case 'float64':
      return 'double'
    case 'boolean':
    case 'string':
      return s.type
    case 'bytes':
      return 'binary'
    case 'array': {
      const items = normalizeSchema(s.items, `${path}.items`)
      const id = ids.take()
      return { type: 'list', 'element-id': id, element: connectToIcebergType(items, ids, `${path}.items`), 'element-required': !items.optional }
    }
    case 'map': {
      const keys = normalizeSchema(s.keys, `${path}.keys`)
      const values = normalizeSchema(s.values, `${path}.values`)
      const keyId = ids.take()
      const valueId = ids.take()
      return {
        type: 'map',
        'key-id': keyId,
        key: connectToIcebergType(keys, ids, `${path}.keys`),
        'value-id': valueId,
        value: connectToIcebergType(values, ids, `${path}.values`),
        'value-required': !values.optional,
      }
    }
    case 'struct':
      return structOf(s.fields ?? [], ids, path)
    default:
      throw new SchemaError(`${path}: unknown Connect schema type ${JSON.stringify(s.type)}`)
  }
}

function structOf(fields: (ConnectSchema & { field: string })[], ids: IdAllocator, path: string): StructType {
  if (!Array.isArray(fields)) throw new SchemaError(`${path}: struct "fields" must be an array`)
  const own = fields.map(() => ids.take())
  return {
    type: 'struct',
    fields: fields.map((f, i) => {
      if (typeof f?.field !== 'string') throw new SchemaError(`${path}.fields[${i}]: missing "field" name`)
      const s = normalizeSchema(f, `${path}.${f.field}`)
      const out: NestedField = { id: own[i]!, name: f.field, required: !s.optional, type: connectToIcebergType(s, ids, `${path}.${f.field}`) }
      if (typeof s.doc === 'string') out.doc = s.doc
      return out
    }),
  }
}

/** Convert a payload value by its Connect schema into the value shape of ./index.ts. Throws RecordError. */
export function convertConnectValue(s: ConnectSchema, v: unknown, path: string): unknown {
  if (v === null || v === undefined) {
    if (s.default !== undefined && s.default !== null) return convertConnectValue({ ...s, default: undefined }, s.default, path)
    if (s.optional) return null
    throw new RecordError(`${path}: required ${s.name ?? s.type} is ${v === null ? 'null' : 'missing'}`)
  }
  const bad = (expected: string): never => {
    throw new RecordError(`${path}: expected ${expected}, got ${describe(v)}`)
  }
  switch (s.name) {
    case CONNECT_DECIMAL: {
      const scale = Number(s.parameters?.scale ?? 0)
      if (typeof v === 'string') return decimalFromBytes(base64(v, path), scale)
      if (isLosslessNumber(v)) return exactDecimal(v, scale, path)
      return bad('a decimal (base64 or number)')
    }
    case CONNECT_DATE:
      return isoDate(integer(v, path, 'a date (epoch days)'))
    case CONNECT_TIME:
      return isoTime(BigInt(integer(v, path, 'a time (millis of day)')) * 1000n)
    case CONNECT_TIMESTAMP:
      return isoMicros(bigint(v, path) * 1000n, true)
  }
  switch (s.type) {
    case 'int8':
    case 'int16':
    case 'int32':
      return integer(v, path, s.type)
    case 'int64':
      return bigint(v, path)
    case 'float':
    case 'float32':
      // The JSON text of a Java float (0.1 for 0.1f): the float32 it stands for, exactly.
      return isLosslessNumber(v) ? Math.fround(Number(v.value)) : bad(s.type)
    case 'double':
    case 'float64':
      return isLosslessNumber(v) ? Number(v.value) : bad(s.type)
    case 'boolean':
      return typeof v === 'boolean' ? v : bad('boolean')
    case 'string':
      return typeof v === 'string' ? v : bad('string')
    case 'bytes':
      return typeof v === 'string' ? base64(v, path) : bad('base64 bytes')
    case 'array':
      return Array.isArray(v) ? v.map((item, i) => convertConnectValue(s.items!, item, `${path}[${i}]`)) : bad('array')
    case 'map': {
      if (Array.isArray(v)) {
        const out = new Map<unknown, unknown>()
        v.forEach((pair, i) => {
          if (!Array.isArray(pair) || pair.length !== 2) bad('map entries as [key, value] pairs')
          out.set(convertConnectValue(s.keys!, pair[0], `${path}[${i}].key`), convertConnectValue(s.values!, pair[1], `${path}[${i}].value`))
        })
        return out
      }
      if (typeof v !== 'object') return bad('map object')
      const out: Record<string, unknown> = {}
      for (const [k, item] of Object.entries(v as Record<string, unknown>)) out[k] = convertConnectValue(s.values!, item, `${path}.${k}`)
      return out
    }
    case 'struct': {
      if (typeof v !== 'object' || Array.isArray(v) || isLosslessNumber(v)) return bad('struct object')
      const obj = v as Record<string, unknown>
      const out: Record<string, unknown> = {}
      for (const f of s.fields ?? []) out[f.field] = convertConnectValue(f, obj[f.field], `${path}.${f.field}`)
      return out
    }
    default:
      throw new RecordError(`${path}: unknown Connect schema type ${JSON.stringify(s.type)}`)
  }
}

function integer(v: unknown, path: string, what: string): number {
  if (isLosslessNumber(v) && /^-?\d+$/.test(v.value)) {
    const n = Number(v.value)
    if (Number.isSafeInteger(n)) return n
  }
  throw new RecordError(`${path}: expected ${what}, got ${describe(v)}`)
}

function bigint(v: unknown, path: string): bigint {
  if (isLosslessNumber(v) && /^-?\d+$/.test(v.value)) return BigInt(v.value)
  throw new RecordError(`${path}: expected int64, got ${describe(v)}`)
}

function base64(text: string, path: string): Uint8Array {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 === 1) throw new RecordError(`${path}: expected base64, got ${JSON.stringify(text.slice(0, 60))}`)
  return new Uint8Array(Buffer.from(text, 'base64'))
}

/** A JSON number (exact text) rescaled to `scale` digits; more fractional digits than the scale is an error, not rounding. */
function exactDecimal(n: LosslessNumber, scale: number, path: string): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(n.value)
  if (!m) throw new RecordError(`${path}: expected a decimal, got ${n.value}`)
  let digits = m[2]! + (m[3] ?? '')
  let exp = Number(m[4] ?? 0) - (m[3]?.length ?? 0) // value = digits × 10^exp
  while (exp < -scale && digits.endsWith('0') && digits.length > 1) {
    digits = digits.slice(0, -1)
    exp++
  }
  if (exp < -scale) throw new RecordError(`${path}: decimal ${n.value} has more than ${scale} fractional digits`)
  const unscaled = BigInt(digits) * 10n ** BigInt(exp + scale)
  const sign = m[1] === '-' && unscaled !== 0n ? '-' : ''
  const text = unscaled.toString().padStart(scale + 1, '0')
  return scale > 0 ? `${sign}${text.slice(0, -scale)}.${text.slice(-scale)}` : `${sign}${text}`
}

function describe(v: unknown): string {
  if (isLosslessNumber(v)) return `number ${v.value}`
  if (typeof v === 'string') return `string ${JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}…` : v)}`
  if (Array.isArray(v)) return 'an array'
  if (typeof v === 'object' && v !== null) return 'an object'
  return `${typeof v} ${String(v)}`
}
