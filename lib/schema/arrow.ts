/**
 * Iceberg ⇄ Arrow types. Every Arrow field carries its Iceberg field id as the metadata key
 * `PARQUET:field_id` (list elements and map keys/values included), which the Parquet writer
 * turns into the Parquet schema's field_id — how Iceberg readers match columns to fields.
 * Timestamps are microseconds (timestamptz with zone "UTC"), decimals Decimal128, uuid
 * fixed-size binary 16, dates Date32 (days), times Time64 microseconds.
 */
import * as arrow from 'apache-arrow'
import { SchemaError } from '../errors.js'
import type { IcebergType, NestedField, Schema, StructType } from './types.js'
import { isList, isMap, isStruct } from './types.js'
import { decimalParams, fixedLength } from './walk.js'

export const FIELD_ID_KEY = 'PARQUET:field_id'

const idMeta = (id: number) => new Map([[FIELD_ID_KEY, String(id)]])

/** The Arrow type of an Iceberg type (nested children carry their field ids). */
export function toArrowType(type: IcebergType): arrow.DataType {
  if (typeof type === 'string') return primitiveToArrow(type)
  if (isStruct(type)) return new arrow.Struct(type.fields.map(toArrowField))
  if (isList(type)) return new arrow.List(new arrow.Field('element', toArrowType(type.element), !type['element-required'], fieldMeta(type['element-id'], type.element)))
  if (isMap(type)) {
    const key = new arrow.Field('key', toArrowType(type.key), false, fieldMeta(type['key-id'], type.key))
    const value = new arrow.Field('value', toArrowType(type.value), !type['value-required'], fieldMeta(type['value-id'], type.value))
    const entries = new arrow.Struct([key, value] as arrow.Field[])
    // oxlint-disable-next-line no-underscore-dangle -- Arrow's own class name
    return new arrow.Map_(new arrow.Field('entries', entries, false) as never, false)
  }
  throw new SchemaError(`cannot map Iceberg type ${JSON.stringify(type)} to Arrow`)
}

function primitiveToArrow(type: string): arrow.DataType {
  switch (type) {
    case 'boolean':
      return new arrow.Bool()
    case 'int':
      return new arrow.Int32()
    case 'long':
      return new arrow.Int64()
    case 'float':
      return new arrow.Float32()
    case 'double':
      return new arrow.Float64()
    case 'date':
      return new arrow.DateDay()
    case 'time':
      return new arrow.TimeMicrosecond()
    case 'timestamp':
      return new arrow.TimestampMicrosecond(null)
    case 'timestamptz':
      return new arrow.TimestampMicrosecond('UTC')
    case 'timestamp_ns':
      return new arrow.TimestampNanosecond(null)
    case 'timestamptz_ns':
      return new arrow.TimestampNanosecond('UTC')
    case 'string':
      return new arrow.Utf8()
    case 'uuid':
      return new arrow.FixedSizeBinary(16)
    case 'binary':
      return new arrow.Binary()
  }
  const dec = decimalParams(type)
  if (dec) {
    if (dec.precision < 1 || dec.precision > 38) throw new SchemaError(`decimal precision must be 1..38, got ${type}`)
    return new arrow.Decimal(dec.scale, dec.precision, 128)
  }
  const len = fixedLength(type)
  if (len !== undefined) return new arrow.FixedSizeBinary(len)
  throw new SchemaError(`Iceberg type '${type}' has no Arrow mapping in Floe`)
}

/** An Iceberg struct field as an Arrow field (nullable unless required), with `PARQUET:field_id`. */
export function toArrowField(field: NestedField): arrow.Field {
  return new arrow.Field(field.name, toArrowType(field.type), !field.required, fieldMeta(field.id, field.type))
}

/** Arrow's canonical UUID extension marks uuid columns, so the Parquet writer can tag them and the mapping reverses. */
const EXTENSION_KEY = 'ARROW:extension:name'
const UUID_EXTENSION = 'arrow.uuid'

function fieldMeta(id: number, type: IcebergType): Map<string, string> {
  const meta = idMeta(id)
  if (type === 'uuid') meta.set(EXTENSION_KEY, UUID_EXTENSION)
  return meta
}

/** An Iceberg schema as an Arrow schema. */
export function toArrowSchema(schema: StructType): arrow.Schema {
  return new arrow.Schema(schema.fields.map(toArrowField))
}

/**
 * An Arrow schema as an Iceberg schema. Field ids come from `PARQUET:field_id`; fields without
 * one get fresh ids from `nextId` (so a schema from a file without ids can still be mapped).
 */
export function fromArrowSchema(schema: arrow.Schema, opts: { schemaId?: number; nextId?: number } = {}): Schema {
  let next = opts.nextId ?? 1
  const used = new Set<number>()
  const idOf = (f: arrow.Field): number => {
    const raw = f.metadata.get(FIELD_ID_KEY)
    if (raw === undefined) return -1
    const id = Number(raw)
    if (!Number.isInteger(id) || id < 0) throw new SchemaError(`Arrow field '${f.name}' has invalid ${FIELD_ID_KEY} '${raw}'`)
    used.add(id)
    return id
  }
  // First pass collects the ids already present, so fresh ids never collide with them.
  const collect = (f: arrow.Field): void => {
    idOf(f)
    for (const c of f.type.children ?? []) collect(c)
  }
  schema.fields.forEach(collect)
  const fresh = (f: arrow.Field): number => {
    const id = idOf(f)
    if (id >= 0) return id
    while (used.has(next)) next++
    used.add(next)
    return next++
  }
  const convertType = (t: arrow.DataType, name: string, field?: arrow.Field): IcebergType => {
    if (field?.metadata.get(EXTENSION_KEY) === UUID_EXTENSION && arrow.DataType.isFixedSizeBinary(t) && t.byteWidth === 16) return 'uuid'
    if (arrow.DataType.isStruct(t)) return { type: 'struct', fields: t.children.map(convertField) }
    if (arrow.DataType.isList(t)) {
      const e = t.children[0]!
      return { type: 'list', 'element-id': fresh(e), element: convertType(e.type, `${name}.element`, e), 'element-required': !e.nullable }
    }
    if (arrow.DataType.isMap(t)) {
      const [k, v] = t.children[0]!.type.children as arrow.Field[]
      return {
        type: 'map',
        'key-id': fresh(k!),
        key: convertType(k!.type, `${name}.key`, k),
        'value-id': fresh(v!),
        value: convertType(v!.type, `${name}.value`, v),
        'value-required': !v!.nullable,
      }
    }
    return primitiveFromArrow(t, name)
  }
  const convertField = (f: arrow.Field): NestedField => {
    const id = fresh(f)
    return { id, name: f.name, required: !f.nullable, type: convertType(f.type, f.name, f) }
  }
  return { type: 'struct', 'schema-id': opts.schemaId ?? 0, fields: schema.fields.map(convertField) }
}

function primitiveFromArrow(t: arrow.DataType, name: string): string {
  if (arrow.DataType.isBool(t)) return 'boolean'
  if (arrow.DataType.isInt(t)) {
    if (t.bitWidth === 64) return 'long'
    if (t.bitWidth === 32 && !t.isSigned) return 'long'
    return 'int'
  }
  if (arrow.DataType.isFloat(t)) return t.precision === arrow.Precision.DOUBLE ? 'double' : 'float'
  if (arrow.DataType.isDate(t)) return 'date'
  if (arrow.DataType.isTime(t)) return 'time'
  if (arrow.DataType.isTimestamp(t)) {
    const tz = t.timezone ? 'tz' : ''
    return t.unit === arrow.TimeUnit.NANOSECOND ? `timestamp${tz}_ns` : `timestamp${tz}`
  }
  if (arrow.DataType.isUtf8(t) || arrow.DataType.isLargeUtf8(t)) return 'string'
  if (arrow.DataType.isBinary(t) || arrow.DataType.isLargeBinary(t)) return 'binary'
  if (arrow.DataType.isFixedSizeBinary(t)) return `fixed[${t.byteWidth}]`
  if (arrow.DataType.isDecimal(t)) return `decimal(${t.precision}, ${t.scale})`
  throw new SchemaError(`Arrow field '${name}' has type ${String(t)}, which has no Iceberg mapping`)
}
