/** What a Parquet file's footer says about its column chunks' encodings (first row group), for the encoding tests. */
import { parquetMetadata } from 'hyparquet'

/** Per column path (`a.b`): whether its chunk holds DELTA_BINARY_PACKED pages. */
export function deltaEncoded(bytes: Uint8Array): Record<string, boolean> {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
  const columns = parquetMetadata(file).row_groups[0]!.columns
  return Object.fromEntries(columns.map((c) => [c.meta_data!.path_in_schema.join('.'), c.meta_data!.encodings.includes('DELTA_BINARY_PACKED')]))
}
