/**
 * The Iceberg spec's primitive type promotions (https://iceberg.apache.org/spec/#schema-evolution),
 * per table format version — the one rule every source of a new schema goes through (lib/schema/evolve.ts):
 *
 * | from            | v1, v2            | v3+                            |
 * |-----------------|-------------------|--------------------------------|
 * | `unknown`       |                   | any type                       |
 * | `int`           | `long`            | `long`                         |
 * | `date`          |                   | `timestamp`, `timestamp_ns`    |
 * | `float`         | `double`          | `double`                       |
 * | `decimal(P, S)` | `decimal(P', S)`, P' > P (same scale) | same           |
 *
 * date → timestamptz is not allowed. A date column that is the source of a partition field whose
 * transform would give other values after the promotion (identity, bucket, truncate: anything
 * but year, month, day and void) may not be promoted.
 */
import { decimalParams } from './walk.js'
import type { IcebergType } from './types.js'

/** Transforms of a date column that give the same partition values for the promoted timestamp. */
const DATE_SAFE_TRANSFORMS = new Set(['year', 'month', 'day', 'void'])

export interface PromoteContext {
  /** The table's format version (default 2). */
  formatVersion?: number
  /** Transforms of the partition fields the column is the source of (none: not a partition source). */
  transforms?: readonly string[]
}

/** True when a column of type `from` may become `to` under the spec (equal types included). */
export function canPromote(from: IcebergType, to: IcebergType, ctx: PromoteContext = {}): boolean {
  const v3 = (ctx.formatVersion ?? 2) >= 3
  if (from === to) return true
  if (typeof from !== 'string') return false
  if (v3 && from === 'unknown') return true
  if (typeof to !== 'string') return false
  if (from === 'int' && to === 'long') return true
  if (from === 'float' && to === 'double') return true
  if (v3 && from === 'date' && (to === 'timestamp' || to === 'timestamp_ns')) return (ctx.transforms ?? []).every((t) => DATE_SAFE_TRANSFORMS.has(t))
  const a = decimalParams(from)
  const b = decimalParams(to)
  return a !== undefined && b !== undefined && a.scale === b.scale && b.precision >= a.precision
}

/**
 * The types a column of `type` may be promoted to, narrowest first — what a value that does not
 * fit the column is tried against. Decimals go to the largest precision of the next Parquet
 * physical type (9 → int32, 18 → int64, 38 → fixed bytes), so a growing value costs at most two
 * schema changes, not one per digit.
 */
export function promotionsOf(type: IcebergType, ctx: PromoteContext = {}): string[] {
  if (typeof type !== 'string') return []
  const candidates: string[] = []
  if (type === 'int') candidates.push('long')
  else if (type === 'float') candidates.push('double')
  else if (type === 'date') candidates.push('timestamp', 'timestamp_ns')
  else {
    const d = decimalParams(type)
    if (d) for (const p of [9, 18, 38]) if (p > d.precision && p >= d.scale) candidates.push(`decimal(${p}, ${d.scale})`)
  }
  return candidates.filter((to) => canPromote(type, to, ctx))
}

/** The rule as text for messages. */
export function promotionRule(formatVersion = 2): string {
  const v3 = formatVersion >= 3 ? ', date → timestamp/timestamp_ns and unknown → any type' : ''
  return `format v${formatVersion} allows only int → long, float → double, decimal(P, S) → decimal(P', S) with P' > P${v3}`
}
