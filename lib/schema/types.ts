/**
 * The Iceberg schema model, in the spec's own JSON shape (https://iceberg.apache.org/spec/#schemas),
 * so metadata round-trips losslessly. Primitive types are their spec strings:
 * boolean int long float double date time timestamp timestamptz timestamp_ns timestamptz_ns
 * string uuid binary `decimal(P, S)` `fixed[L]` (and v3's unknown, variant, geometry, geography).
 */
export type PrimitiveType = string

export interface StructType {
  type: 'struct'
  fields: NestedField[]
}

export interface ListType {
  type: 'list'
  'element-id': number
  element: IcebergType
  'element-required': boolean
}

export interface MapType {
  type: 'map'
  'key-id': number
  key: IcebergType
  'value-id': number
  value: IcebergType
  'value-required': boolean
}

export type IcebergType = PrimitiveType | StructType | ListType | MapType

export interface NestedField {
  id: number
  name: string
  required: boolean
  type: IcebergType
  doc?: string
  'initial-default'?: unknown
  'write-default'?: unknown
  [extra: string]: unknown
}

export interface Schema extends StructType {
  'schema-id': number
  'identifier-field-ids'?: number[]
  [extra: string]: unknown
}

export const isStruct = (t: IcebergType): t is StructType => typeof t === 'object' && t.type === 'struct'
export const isList = (t: IcebergType): t is ListType => typeof t === 'object' && t.type === 'list'
export const isMap = (t: IcebergType): t is MapType => typeof t === 'object' && t.type === 'map'
export const isPrimitive = (t: IcebergType): t is PrimitiveType => typeof t === 'string'
