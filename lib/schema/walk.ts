/**
 * Walking and indexing an Iceberg schema: fields by id and by dotted name, the largest field id,
 * and the parameters of parameterised primitives (decimal, fixed). Dotted names follow Iceberg
 * Java's name index: a list's element is `<list>.element`, a map's parts `<map>.key` / `<map>.value`.
 */
import { SchemaError } from '../errors.js'
import { isList, isMap, isStruct, type IcebergType, type NestedField, type StructType } from './types.js'

/** One field of a schema with where it sits: its dotted name and whether a list or map encloses it. */
export interface IndexedField {
  id: number
  name: string
  type: IcebergType
  required: boolean
  /** Inside a list element or a map key/value (its values are repeated per row). */
  repeated: boolean
  /** The struct field itself, when the id is a struct field's (not a list element or map key/value). */
  field?: NestedField
}

/** Visit every field id of a type tree in depth-first order (struct fields, list elements, map keys and values). */
export function visitFields(struct: StructType, visit: (f: IndexedField) => void, prefix = '', repeated = false): void {
  for (const field of struct.fields) {
    const name = prefix + field.name
    visit({ id: field.id, name, type: field.type, required: field.required, repeated, field })
    visitType(field.type, name, repeated, visit)
  }
}

function visitType(type: IcebergType, name: string, repeated: boolean, visit: (f: IndexedField) => void): void {
  if (isStruct(type)) visitFields(type, visit, `${name}.`, repeated)
  else if (isList(type)) {
    const n = `${name}.element`
    visit({ id: type['element-id'], name: n, type: type.element, required: type['element-required'], repeated: true })
    visitType(type.element, n, true, visit)
  } else if (isMap(type)) {
    const k = `${name}.key`
    const v = `${name}.value`
    visit({ id: type['key-id'], name: k, type: type.key, required: true, repeated: true })
    visitType(type.key, k, true, visit)
    visit({ id: type['value-id'], name: v, type: type.value, required: type['value-required'], repeated: true })
    visitType(type.value, v, true, visit)
  }
}

/** Every field of a schema by id. Throws SchemaError on a duplicate id. */
export function indexById(struct: StructType): Map<number, IndexedField> {
  const out = new Map<number, IndexedField>()
  visitFields(struct, (f) => {
    const seen = out.get(f.id)
    if (seen) throw new SchemaError(`field id ${f.id} is used twice: '${seen.name}' and '${f.name}'`)
    out.set(f.id, f)
  })
  return out
}

/** Every field of a schema by dotted name. */
export function indexByName(struct: StructType): Map<string, IndexedField> {
  const out = new Map<string, IndexedField>()
  visitFields(struct, (f) => out.set(f.name, f))
  return out
}

/** The field with this id, or undefined. */
export function fieldById(struct: StructType, id: number): IndexedField | undefined {
  return indexById(struct).get(id)
}

/** The field with this dotted name (`payload.user.id`), or undefined. */
export function fieldByName(struct: StructType, name: string): IndexedField | undefined {
  return indexByName(struct).get(name)
}

/** The largest field id used anywhere in the type tree (0 for an empty struct). */
export function maxFieldId(struct: StructType): number {
  let max = 0
  visitFields(struct, (f) => {
    if (f.id > max) max = f.id
  })
  return max
}

/** Primitive leaves (columns as Parquet stores them), depth-first in schema order. */
export function leafFields(struct: StructType): IndexedField[] {
  const out: IndexedField[] = []
  visitFields(struct, (f) => {
    if (typeof f.type === 'string') out.push(f)
  })
  return out
}

/** `decimal(P, S)` → { precision, scale }, or undefined for another type. */
export function decimalParams(type: IcebergType): { precision: number; scale: number } | undefined {
  if (typeof type !== 'string') return undefined
  const m = /^decimal\(\s*(\d+)\s*,\s*(-?\d+)\s*\)$/.exec(type)
  return m ? { precision: Number(m[1]), scale: Number(m[2]) } : undefined
}

/** `fixed[L]` → L, or undefined for another type. */
export function fixedLength(type: IcebergType): number | undefined {
  if (typeof type !== 'string') return undefined
  const m = /^fixed\[\s*(\d+)\s*\]$/.exec(type)
  return m ? Number(m[1]) : undefined
}

/** A type as a short string for messages: primitives as-is, `struct<…>`, `list<…>`, `map<…, …>`. */
export function typeToString(type: IcebergType): string {
  if (typeof type === 'string') return type
  if (isStruct(type)) return `struct<${type.fields.map((f) => `${f.name}: ${typeToString(f.type)}`).join(', ')}>`
  if (isList(type)) return `list<${typeToString(type.element)}>`
  if (isMap(type)) return `map<${typeToString(type.key)}, ${typeToString(type.value)}>`
  return JSON.stringify(type)
}

/**
 * The struct with every field (and list element, map value) whose type is a struct with no
 * fields made optional: Parquet cannot store an empty group, so files leave such a column out
 * and readers read it as null — which only an optional column may be.
 */
export function relaxEmptyStructs<T extends StructType>(struct: T): T {
  const empty = (t: IcebergType) => isStruct(t) && t.fields.length === 0
  const relax = (t: IcebergType): IcebergType => {
    if (isStruct(t)) return relaxEmptyStructs(t)
    if (isList(t)) return { ...t, element: relax(t.element), 'element-required': t['element-required'] && !empty(t.element) }
    if (isMap(t)) return { ...t, value: relax(t.value), 'value-required': t['value-required'] && !empty(t.value) }
    return t
  }
  return { ...struct, fields: struct.fields.map((f) => ({ ...f, type: relax(f.type), required: f.required && !empty(f.type) })) }
}
