/** Columnar encoding: coercion to a schema, Arrow building, Parquet encoding, column metrics. */
import type { StructType } from '../../schema/index.js'
import { compileCoercer, type Coercer, type Row, type UnknownField } from './coerce.js'

export { compileCoercer, describe, isInformative, type Coerced, type Coercer, type Row, type UnknownField } from './coerce.js'
export { compileArrowBuilder, type ArrowBuild, type ArrowBuildOptions } from './arrow-build.js'
export { footerLayout, type FooterLayout } from './footer.js'
export { tableToStream } from './ipc.js'
export type { LeafStats } from './columns.js'
export { columnMetrics, columnSizes, metricsModes, splitOffsets, type ColumnMetrics } from './metrics.js'
export { compileScanner, compileTableScanner, type Scanner, type ScanOptions } from './scan.js'
export type { KafkaMeta } from './scan-nested.js'
export { grow } from './scan-leaves.js'
export type { ColumnRange } from './scan-range.js'
export { compressionOf, encodeBuilt, encodeParquet, integerColumns, type IntegerEncoding, parquetSettings, type EncodedParquet, type EncodeOptions, type ParquetSettings, writeWithSettings } from './parquet.js'

const cache = new WeakMap<StructType, Map<string, Coercer>>()

/**
 * Coerce one record with a coercer compiled once per (schema object, table) and cached.
 * `unknownFields` is `unknown.length`, for callers that only count them.
 */
export function coerceRecord(schema: StructType, record: unknown, opts: { table?: string } = {}): { row: Row; unknown: UnknownField[]; unknownFields: number } {
  const table = opts.table ?? '(unnamed)'
  let bySchema = cache.get(schema)
  if (!bySchema) cache.set(schema, (bySchema = new Map()))
  let coercer = bySchema.get(table)
  if (!coercer) bySchema.set(table, (coercer = compileCoercer(schema, { table })))
  const { row, unknown } = coercer(record)
  return { row, unknown, unknownFields: unknown.length }
}
