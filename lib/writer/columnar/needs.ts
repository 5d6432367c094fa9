/**
 * What a table schema would need to hold a value that did not coerce: for each field whose value
 * does not fit its column, the narrowest type the spec lets the column be promoted to that holds
 * the value exactly (an int column and 5000000000 → long; a float column and 0.1 → double; a
 * decimal(9, 2) column and 12345678901.25 → decimal(18, 2)), and for each required field with no
 * value, that it become optional. Run only on values whose coercion failed (the compiled coercer
 * stops at the first failure; this walks them all). Fields the table lacks are not looked at
 * (inference adds them), nor values no promotion holds (coercion dead-letters them with the
 * field, the table type and the value).
 */
import { promotionsOf, isList, isMap, isStruct, type IcebergType, type StructType } from '../../schema/index.js'
import { compilePrimitive, type Convert } from './primitives.js'
import { fieldValue } from './values.js'

/** A need at `path` (struct field names, `element` for a list's, `value` for a map's): a promoted `type`, or `optional`. */
export interface ValueNeed {
  path: string[]
  type?: string
  optional?: true
}

export interface NeedsOptions {
  formatVersion: number
  caseInsensitive: boolean
  /** Identifier fields stay required: a value without them is a dead letter. */
  identifiers: ReadonlySet<number>
  /** Partition transforms by source field id (see lib/schema/promote.ts). */
  transforms: ReadonlyMap<number, readonly string[]>
}

const converters = new Map<string, Convert>()
function fits(type: string, v: unknown): boolean {
  let convert = converters.get(type)
  if (!convert) converters.set(type, (convert = compilePrimitive(type)))
  try {
    convert(v, { unknown: undefined })
    return true
  } catch {
    return false
  }
}

/** The needs of one value against a schema (empty when it fits, or when nothing the spec allows would make it fit). */
export function valueNeeds(schema: StructType, value: unknown, opts: NeedsOptions): ValueNeed[] {
  const out: ValueNeed[] = []
  walkStruct(schema, value, [], opts, out)
  return out
}

function walkStruct(struct: StructType, v: unknown, path: string[], opts: NeedsOptions, out: ValueNeed[]): void {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || v instanceof Uint8Array || v instanceof Map) return
  for (const f of struct.fields) {
    const fv = fieldValue(v as Record<string, unknown>, f.name, opts.caseInsensitive)
    const p = [...path, f.name]
    if (fv === null || fv === undefined) {
      if (f.required && !opts.identifiers.has(f.id)) out.push({ path: p, optional: true })
    } else walkType(f.type, f.id, fv, p, opts, out)
  }
}

function walkType(type: IcebergType, id: number, v: unknown, path: string[], opts: NeedsOptions, out: ValueNeed[]): void {
  if (isStruct(type)) return walkStruct(type, v, path, opts, out)
  if (isList(type)) {
    if (!Array.isArray(v)) return
    const p = [...path, 'element']
    walkRepeated(v, type.element, type['element-id'], type['element-required'], p, opts, out)
    return
  }
  if (isMap(type)) {
    const values = v instanceof Map ? [...v.values()] : typeof v === 'object' && v !== null ? Object.values(v) : undefined
    if (values) walkRepeated(values, type.value, type['value-id'], type['value-required'], [...path, 'value'], opts, out)
    return
  }
  if (fits(type, v)) return
  const to = promotionsOf(type, { formatVersion: opts.formatVersion, transforms: opts.transforms.get(id) }).find((t) => fits(t, v))
  if (to !== undefined) out.push({ path, type: to })
}

/** List elements or map values: one need per kind, however many elements have it. */
function walkRepeated(values: unknown[], type: IcebergType, id: number, required: boolean, path: string[], opts: NeedsOptions, out: ValueNeed[]): void {
  let optional = false
  for (const e of values) {
    if (e === null || e === undefined) optional = true
    else walkType(type, id, e, path, opts, out)
  }
  if (optional && required) out.push({ path, optional: true })
}
