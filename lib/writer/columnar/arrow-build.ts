/**
 * Arrow data for a schema from coerced rows (see coerce.ts for the value representation),
 * assembled with `makeData` from typed arrays: structs split their rows into one value array
 * per child, lists and maps flatten their elements and record offsets.
 *
 * Leaf statistics follow Parquet's counting, which Iceberg Java and PyIceberg copy into
 * manifests: a leaf inside a list or map gets one entry per element, plus one null entry for
 * every null or empty list/map above it ("placeholders"); under a null struct it is null.
 */
import * as arrow from 'apache-arrow'
import { toArrowField, toArrowSchema, toArrowType, isList, isMap, isStruct, type IcebergType, type ListType, type MapType, type StructType } from '../../schema/index.js'
import { leafBuilder, validity, type LeafBuilder, type LeafStats } from './columns.js'
import type { Row } from './coerce.js'
import { generated } from './codegen.js'
import { resetStats } from './column-parts.js'

type Builder = (values: unknown[], placeholders: number) => arrow.Data

export interface ArrowBuild {
  table: arrow.Table
  /** Per leaf field id, in schema order. */
  stats: Map<number, LeafStats>
  /** Top-level string columns the `dictionary` option chose, in schema order (none without it). */
  dictionary: string[]
}

export interface ArrowBuildOptions {
  /** Whether min/max are tracked for a (non-repeated) leaf: false for metric modes none/counts. Default: all. */
  bounds?: (fieldId: number, dottedName: string) => boolean
  /**
   * Whether a top-level string column is worth dictionary encoding, judged from its values (a
   * null for a row without it): asked while the rows are split into columns, so the choice reads
   * each value from its column array rather than from every row again by name.
   */
  dictionary?: (values: readonly unknown[]) => boolean
}

/** Compile a builder for a schema once; call it per chunk of rows. */
export function compileArrowBuilder(schema: StructType, opts: ArrowBuildOptions = {}): (rows: Row[]) => ArrowBuild {
  const arrowSchema = toArrowSchema(schema)
  const stats: LeafStats[] = []
  const wantBounds = opts.bounds ?? (() => true)
  const rootType = new arrow.Struct(schema.fields.map(toArrowField))
  const split = compileSplit(schema.fields.map((f) => f.name))
  const children = schema.fields.map((f) => compileType(f.type, f.id, f.name, false, stats, wantBounds))
  const judge = opts.dictionary
  const strings = judge ? schema.fields.flatMap((f, c) => (f.type === 'string' ? [c] : [])) : []
  return (rows) => {
    resetStats(stats)
    const columns = split(rows)
    const dictionary = strings.filter((c) => judge!(columns[c]!)).map((c) => schema.fields[c]!.name)
    const childData = columns.map((col, c) => children[c]!.build(col, 0))
    const data = arrow.makeData({ type: rootType, length: rows.length, nullCount: 0, children: childData })
    const batch = new arrow.RecordBatch(arrowSchema, data)
    // The table keeps the compiled schema object (the batch's is a copy per batch), so ipc.ts encodes its message once.
    return { table: new arrow.Table(arrowSchema, [batch]), stats: new Map(stats.map((s) => [s.id, { ...s }])), dictionary }
  }
}

interface Compiled {
  build: Builder
}

function compileStruct(type: StructType, prefix: string, repeated: boolean, stats: LeafStats[], bounds: Bounds): Compiled {
  const arrowType = new arrow.Struct(type.fields.map(toArrowField))
  const names = type.fields.map((f) => f.name)
  const children = type.fields.map((f) => compileType(f.type, f.id, prefix + f.name, repeated, stats, bounds))
  const split = compileSplit(names)
  return {
    build: (values, placeholders) => {
      const n = values.length
      const childData = split(values as (Row | null)[]).map((col, c) => children[c]!.build(col, placeholders))
      const { nullBitmap, nullCount } = validity(values)
      return arrow.makeData({ type: arrowType, length: n, nullCount, nullBitmap: nullCount ? nullBitmap : undefined, children: childData })
    },
  }
}

/**
 * One pass over the rows that splits them into one value array per field (missing → null): a
 * compiled function whose property reads have constant names, so each read site sees one row
 * shape (coerce.ts builds rows of a struct from one object literal) instead of one generic keyed
 * read per row and column.
 */
function compileSplit(names: string[]): (rows: (Row | null)[]) => unknown[][] {
  const cols = names.map((_, c) => `c${c}`)
  const body = [
    'const n = rows.length',
    ...cols.map((c) => `const ${c} = new Array(n)`),
    'for (let i = 0; i < n; i++) {',
    '  const v = rows[i]',
    `  if (v === null) { ${cols.map((c) => `${c}[i] = null`).join('; ')} }`,
    `  else { ${names.map((name, c) => `${cols[c]}[i] = v[${JSON.stringify(name)}] ?? null`).join('; ')} }`,
    '}',
    `return [${cols.join(', ')}]`,
  ].join('\n')
  return generated<(rows: (Row | null)[]) => unknown[][]>(['rows'], body)
}

type Bounds = ArrowBuildOptions['bounds'] & {}

function compileType(type: IcebergType, id: number, name: string, repeated: boolean, stats: LeafStats[], bounds: Bounds): Compiled {
  if (isStruct(type)) return compileStruct(type, `${name}.`, repeated, stats, bounds)
  if (isList(type)) return compileList(type, name, stats, bounds)
  if (isMap(type)) return compileMap(type, name, stats, bounds)
  return compileLeaf(type, id, name, repeated, stats, bounds)
}

/** A list: its elements flattened into one child array, offsets per row; a null or empty list is a placeholder for the leaves below. */
function compileList(type: ListType, name: string, stats: LeafStats[], bounds: Bounds): Compiled {
  const arrowType = toArrowType(type) as arrow.List
  const element = compileType(type.element, type['element-id'], `${name}.element`, true, stats, bounds)
  return {
    build: (values, placeholders) => {
      const n = values.length
      const offsets = new Int32Array(n + 1)
      let total = 0
      let empty = 0
      for (let i = 0; i < n; i++) {
        const v = values[i] as unknown[] | null
        if (v === null || v.length === 0) empty++
        else total += v.length
        offsets[i + 1] = total
      }
      const flat = new Array(total)
      let k = 0
      for (let i = 0; i < n; i++) {
        const v = values[i] as unknown[] | null
        if (v !== null) for (let j = 0; j < v.length; j++) flat[k++] = v[j] ?? null
      }
      const child = element.build(flat, placeholders + empty)
      const { nullBitmap, nullCount } = validity(values)
      return arrow.makeData({ type: arrowType, length: n, nullCount, nullBitmap, valueOffsets: offsets, child })
    },
  }
}

/** A map: its entries flattened into key and value children of one entries struct, offsets per row. */
function compileMap(type: MapType, name: string, stats: LeafStats[], bounds: Bounds): Compiled {
  const arrowType = toArrowType(type) as arrow.Map_
  const entriesType = arrowType.children[0]!.type as arrow.Struct
  const key = compileType(type.key, type['key-id'], `${name}.key`, true, stats, bounds)
  const value = compileType(type.value, type['value-id'], `${name}.value`, true, stats, bounds)
  return {
    build: (values, placeholders) => {
      const n = values.length
      const offsets = new Int32Array(n + 1)
      const keys: unknown[] = []
      const vals: unknown[] = []
      let empty = 0
      for (let i = 0; i < n; i++) {
        const m = values[i] as Map<unknown, unknown> | null
        if (m === null || m.size === 0) empty++
        if (m !== null)
          for (const [k, v] of m) {
            keys.push(k)
            vals.push(v ?? null)
          }
        offsets[i + 1] = keys.length
      }
      const children = [key.build(keys, placeholders + empty), value.build(vals, placeholders + empty)]
      const entries = arrow.makeData({ type: entriesType, length: keys.length, nullCount: 0, children })
      const { nullBitmap, nullCount } = validity(values)
      return arrow.makeData({ type: arrowType, length: n, nullCount, nullBitmap, valueOffsets: offsets, child: entries })
    },
  }
}

/** A primitive: its statistics registered in schema order; bounds only where the leaf is not repeated and its metrics mode keeps them. */
function compileLeaf(type: string, id: number, name: string, repeated: boolean, stats: LeafStats[], bounds: Bounds): Compiled {
  const s: LeafStats = { id, type, valueCount: 0, nullCount: 0 }
  if (type === 'float' || type === 'double') s.nanCount = 0
  stats.push(s)
  const leaf: LeafBuilder = leafBuilder(type, toArrowType(type), s, !repeated && bounds(id, name))
  return { build: leaf }
}
