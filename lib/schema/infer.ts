/**
 * Schema inference from decoded JSON records (auto-created tables, new fields of evolving ones).
 * Objects → struct, arrays → list, integral numbers → long, other numbers → double, ISO-8601
 * date-times with a zone → timestamptz, booleans → boolean, other strings → string. Across
 * records types widen (long + double → double, timestamptz + string → string); any other
 * conflict falls back to string (coercion stores such values as text). Every inferred field is
 * optional, except identifier columns, which Iceberg requires to be required. A field that was
 * only ever null, `[]` or `{}` says nothing about its type and is left out until it has a value.
 */
import { SchemaError } from '../errors.js'
import type { IcebergType, NestedField, Schema, StructType } from './types.js'
import { isZonedTimestampText } from './temporal.js'

export interface InferOptions {
  /** First field id to assign (default 1). */
  startId?: number
  /** Schema id of the result (default 0). */
  schemaId?: number
  /** Top-level columns that identify a row: made required and listed in `identifier-field-ids`. */
  idColumns?: string[]
}

type Shape =
  | { kind: 'boolean' | 'long' | 'double' | 'timestamptz' | 'string' | 'binary' }
  | { kind: 'struct'; fields: Map<string, Shape> }
  | { kind: 'list'; element: Shape | undefined }

const STRING: Shape = { kind: 'string' }

function shapeOf(v: unknown): Shape | undefined {
  if (v === null || v === undefined) return undefined
  switch (typeof v) {
    case 'boolean':
      return { kind: 'boolean' }
    case 'bigint':
      return { kind: 'long' }
    case 'number':
      return { kind: Number.isSafeInteger(v) ? 'long' : 'double' }
    case 'string':
      return { kind: isZonedTimestampText(v) ? 'timestamptz' : 'string' }
    case 'object':
      break
    default:
      return STRING
  }
  const obj = v as Record<string, unknown>
  if (obj.isLosslessNumber === true && typeof obj.value === 'string') {
    const text = obj.value
    // An integer literal is a long, also beyond int64 (such a value is then a dead letter that
    // names it, never a rounded double); a literal with a point or an exponent is a double.
    return { kind: /^[+-]?\d+$/.test(text) ? 'long' : 'double' }
  }
  if (v instanceof Date) return { kind: 'timestamptz' }
  if (v instanceof Uint8Array) return { kind: 'binary' }
  if (Array.isArray(v)) {
    let element: Shape | undefined
    for (const e of v) element = merge(element, shapeOf(e))
    return { kind: 'list', element }
  }
  const fields = new Map<string, Shape>()
  for (const [k, e] of v instanceof Map ? v : Object.entries(obj)) {
    const s = shapeOf(e)
    if (s !== undefined) fields.set(String(k), s)
  }
  return { kind: 'struct', fields }
}

/**
 * A shape with no type information: `[]`, `{}`, `[null]`, `{"a": null}`… It still takes part in
 * merging (`{}` in one record and `false` in another conflict, so the column becomes a string),
 * but a field whose merged shape is empty is left out of the schema.
 */
function isEmpty(shape: Shape | undefined): boolean {
  if (shape === undefined) return true
  if (shape.kind === 'list') return isEmpty(shape.element)
  if (shape.kind === 'struct') return [...shape.fields.values()].every(isEmpty)
  return false
}

function merge(a: Shape | undefined, b: Shape | undefined): Shape | undefined {
  if (a === undefined) return b
  if (b === undefined) return a
  if (a.kind === 'struct' && b.kind === 'struct') {
    const fields = new Map(a.fields)
    for (const [k, s] of b.fields) fields.set(k, merge(fields.get(k), s)!)
    return { kind: 'struct', fields }
  }
  if (a.kind === 'list' && b.kind === 'list') return { kind: 'list', element: merge(a.element, b.element) }
  if (a.kind === b.kind) return a
  const pair = new Set([a.kind, b.kind])
  if (pair.has('long') && pair.has('double')) return { kind: 'double' }
  return STRING
}

/** Infer an Iceberg schema from records, with fresh ids (Iceberg's order: a struct's fields first, then their children). */
export function inferSchema(records: readonly object[], opts: InferOptions = {}): Schema {
  let shape: Shape | undefined
  for (const r of records) shape = merge(shape, shapeOf(r))
  const root: Shape = shape?.kind === 'struct' ? shape : { kind: 'struct', fields: new Map() }
  let next = opts.startId ?? 1
  const struct = toStruct(root as Extract<Shape, { kind: 'struct' }>, () => next++)
  const schema: Schema = { type: 'struct', 'schema-id': opts.schemaId ?? 0, fields: struct.fields }
  const idColumns = opts.idColumns ?? []
  if (idColumns.length) {
    schema['identifier-field-ids'] = idColumns.map((name) => {
      const field = schema.fields.find((f) => f.name === name)
      if (!field) throw new SchemaError(`identifier column '${name}' is not in the records (fields: ${schema.fields.map((f) => f.name).join(', ') || 'none'})`)
      if (typeof field.type !== 'string' || field.type === 'double' || field.type === 'float')
        throw new SchemaError(`identifier column '${name}' must be a non-floating primitive, got ${typeof field.type === 'string' ? field.type : field.type.type}`)
      field.required = true
      return field.id
    })
  }
  return schema
}

function toStruct(shape: Extract<Shape, { kind: 'struct' }>, nextId: () => number): StructType {
  const fields: NestedField[] = [...shape.fields]
    .filter(([, s]) => !isEmpty(s))
    .map(([name]) => ({ id: nextId(), name, required: false, type: 'string' }))
  fields.forEach((f) => (f.type = toType(shape.fields.get(f.name)!, nextId)))
  return { type: 'struct', fields }
}

function toType(shape: Shape, nextId: () => number): IcebergType {
  if (shape.kind === 'struct') return toStruct(shape, nextId)
  if (shape.kind === 'list') {
    const id = nextId()
    return { type: 'list', 'element-id': id, element: toType(shape.element ?? STRING, nextId), 'element-required': false }
  }
  return shape.kind
}
