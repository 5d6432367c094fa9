/**
 * Iceberg column metrics of a data file (the manifest's value/null/NaN counts, bounds and column
 * sizes, keyed by field id), computed from the leaf statistics gathered while building the Arrow
 * arrays — parquet-wasm reports none — plus column sizes and split offsets read from the Parquet
 * footer (footer.ts here; hyparquet's parquetMetadata for compaction's streamed output). Modes per column follow Iceberg Java's MetricsConfig:
 * `write.metadata.metrics.column.<name>`, `write.metadata.metrics.default`, else truncate(16);
 * without an explicit default, only the first `write.metadata.metrics.max-inferred-column-defaults`
 * (100) leaf columns get the default and the rest `none`, as Java does for wide tables.
 * Fields inside lists and maps get counts but no bounds (no engine prunes on them).
 */
import { type BoundValue, boundsFor, metricsModeFor, METRICS_DEFAULT_PROPERTY, type MetricsMode, type DataFile } from '../../iceberg/index.js'
import { type StructType, leafFields } from '../../schema/index.js'
import type { LeafStats } from './columns.js'
import type { FooterLayout } from './footer.js'

export type ColumnMetrics = Pick<
  DataFile,
  'columnSizes' | 'valueCounts' | 'nullValueCounts' | 'nanValueCounts' | 'lowerBounds' | 'upperBounds' | 'splitOffsets'
>

const MAX_INFERRED_PROPERTY = 'write.metadata.metrics.max-inferred-column-defaults'

/** The metrics mode of every leaf field id of a schema, under the table properties. */
export function metricsModes(schema: StructType, properties: Record<string, string> = {}): Map<number, MetricsMode> {
  const leaves = leafFields(schema)
  const explicitDefault = properties[METRICS_DEFAULT_PROPERTY] !== undefined
  const limit = Number.parseInt(properties[MAX_INFERRED_PROPERTY] ?? '100', 10)
  const modes = new Map<number, MetricsMode>()
  leaves.forEach((leaf, i) => {
    const own = properties[`write.metadata.metrics.column.${leaf.name}`]
    if (!explicitDefault && own === undefined && Number.isFinite(limit) && i >= limit) modes.set(leaf.id, { kind: 'none' })
    else modes.set(leaf.id, metricsModeFor(properties, leaf.name))
  })
  return modes
}

/** Whether min/max should be tracked for a leaf (arrow-build's `bounds` option). */
export const tracksBounds = (modes: Map<number, MetricsMode>) => (fieldId: number) => {
  const kind = modes.get(fieldId)?.kind ?? 'truncate'
  return kind === 'truncate' || kind === 'full'
}

/** The DataFile metric maps from leaf statistics and the file footer. */
export function columnMetrics(stats: Map<number, LeafStats>, footer: FooterLayout | undefined, modes: Map<number, MetricsMode>): ColumnMetrics {
  const valueCounts = new Map<number, number>()
  const nullValueCounts = new Map<number, number>()
  const nanValueCounts = new Map<number, number>()
  const lowerBounds = new Map<number, Uint8Array>()
  const upperBounds = new Map<number, Uint8Array>()
  for (const [id, s] of stats) {
    const mode = modes.get(id) ?? { kind: 'truncate', length: 16 }
    if (mode.kind === 'none') continue
    valueCounts.set(id, s.valueCount)
    nullValueCounts.set(id, s.nullCount)
    if (s.nanCount !== undefined) nanValueCounts.set(id, s.nanCount)
    if (s.min === undefined || s.max === undefined) continue
    const { lower, upper } = boundsFor(s.type, mode, s.min as BoundValue, s.max as BoundValue)
    if (lower) lowerBounds.set(id, lower)
    if (upper) upperBounds.set(id, upper)
  }
  const metrics: ColumnMetrics = { valueCounts, nullValueCounts, nanValueCounts, lowerBounds, upperBounds }
  if (footer) {
    metrics.columnSizes = columnSizes(footer)
    metrics.splitOffsets = splitOffsets(footer)
  }
  return metrics
}

/** Compressed bytes per leaf field id, summed over row groups (Iceberg Java's column_sizes). */
export function columnSizes(footer: FooterLayout): Map<number, number> {
  const leafIds = footer.schema.filter((e) => !e.num_children).map((e) => e.field_id)
  const sizes = new Map<number, number>()
  for (const rg of footer.row_groups) {
    rg.columns.forEach((chunk, i) => {
      const id = leafIds[i]
      const size = chunk.meta_data?.total_compressed_size
      if (id === undefined || size === undefined) return
      sizes.set(id, (sizes.get(id) ?? 0) + Number(size))
    })
  }
  return sizes
}

/** Start offset of each row group (where a reader may split the file), ascending. */
export function splitOffsets(footer: FooterLayout): number[] {
  return footer.row_groups
    .map((rg) => {
      const first = rg.columns[0]?.meta_data
      const start = first ? (first.dictionary_page_offset ?? first.data_page_offset) : rg.file_offset
      return Number(start ?? 4)
    })
    .sort((a, b) => a - b)
}
