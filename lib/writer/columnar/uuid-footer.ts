/**
 * parquet-wasm writes an Iceberg `uuid` column as FIXED_LEN_BYTE_ARRAY(16) without Parquet's UUID
 * logical type, so pyarrow reads it as fixed_size_binary[16] and readers that check the Parquet
 * type against the Iceberg schema may refuse it. This adds the logical type to the footer: the
 * Thrift FileMetaData is decoded losslessly, each schema element whose field_id is a uuid field
 * of the Iceberg schema gets `logicalType = UUID` (LogicalType union field 14, an empty struct),
 * and the footer is written back. Data pages and every offset before the footer are untouched.
 */
import { IcebergError } from '../../errors.js'
import { type StructType, visitFields } from '../../schema/index.js'
import { decodeStruct, encodeStruct, T, type TStruct } from './thrift-compact.js'

/** parquet-format field ids: FileMetaData.schema, SchemaElement.type / field_id / logicalType, LogicalType.UUID. */
const FILE_SCHEMA = 2
const EL_TYPE = 1
const EL_FIELD_ID = 9
const EL_LOGICAL_TYPE = 10
const LOGICAL_UUID = 14
const FIXED_LEN_BYTE_ARRAY = 7n
const MAGIC = [0x50, 0x41, 0x52, 0x31] // PAR1

/** Iceberg field ids of the schema's uuid fields, at any depth. */
export function uuidFieldIds(schema: StructType): Set<number> {
  const ids = new Set<number>()
  visitFields(schema, (f) => {
    if (f.type === 'uuid') ids.add(f.id)
  })
  return ids
}

/** The file with UUID logical types on the given field ids' columns (the same bytes when there are none). */
export function tagUuidColumns(file: Uint8Array, ids: Set<number>): Uint8Array {
  if (ids.size === 0) return file
  const n = file.length
  const tail = new DataView(file.buffer, file.byteOffset + n - 8, 8)
  if (MAGIC.some((b, i) => file[n - 4 + i] !== b)) throw new IcebergError('not a Parquet file: no PAR1 at its end')
  const footerLength = tail.getUint32(0, true)
  const footerStart = n - 8 - footerLength
  const { struct: meta } = decodeStruct(file.subarray(footerStart, n - 8))
  const schema = meta.find((f) => f.id === FILE_SCHEMA)?.value as { items: TStruct[] } | undefined
  if (!schema) throw new IcebergError('Parquet footer without a schema')
  let changed = 0
  for (const element of schema.items) {
    const fieldId = element.find((f) => f.id === EL_FIELD_ID)?.value
    const type = element.find((f) => f.id === EL_TYPE)?.value
    if (typeof fieldId !== 'bigint' || !ids.has(Number(fieldId)) || type !== FIXED_LEN_BYTE_ARRAY) continue
    if (element.some((f) => f.id === EL_LOGICAL_TYPE)) continue
    element.push({ id: EL_LOGICAL_TYPE, type: T.STRUCT, value: [{ id: LOGICAL_UUID, type: T.STRUCT, value: [] }] })
    element.sort((a, b) => a.id - b.id)
    changed++
  }
  if (changed === 0) return file
  const footer = encodeStruct(meta)
  const out = new Uint8Array(footerStart + footer.length + 8)
  out.set(file.subarray(0, footerStart), 0)
  out.set(footer, footerStart)
  new DataView(out.buffer).setUint32(footerStart + footer.length, footer.length, true)
  out.set(MAGIC, footerStart + footer.length + 4)
  return out
}
