/**
 * The parts of coercion (coerce.ts) that do not depend on how a struct is compiled: lists and
 * maps over their compiled children, a field's `write-default`, the size share of a value, and
 * the text of a value and a type in messages.
 */
import { SchemaError } from '../../errors.js'
import type { IcebergType, MapType, NestedField } from '../../schema/index.js'
import { Failure, safeJson, type Convert } from './primitives.js'
import { estimateRowBytes } from './sizes.js'
import { losslessText } from './values.js'

export const typeName = (t: IcebergType): string => (typeof t === 'string' ? t : t.type)

/** `<jsType> <value>` for messages: strings quoted, long values cut at 100 characters. */
export function describe(value: unknown): string {
  if (value === undefined) return 'undefined'
  if (value === null) return 'null'
  const type = Array.isArray(value) ? 'array' : value instanceof Uint8Array ? 'bytes' : typeof value
  let shown: string
  if (typeof value === 'string') shown = `'${value}'`
  else if (typeof value === 'bigint') shown = `${value}`
  else if (value instanceof Uint8Array) shown = `[${value.length} bytes]`
  else if (typeof value === 'object') shown = losslessText(value) ?? safeJson(value)
  else shown = String(value)
  if (shown.length > 100) shown = `${shown.slice(0, 100)}…`
  return `${type} ${shown}`
}

/** A value that says something about its type (not null, not an empty or all-null array/object). */
export function isInformative(v: unknown): boolean {
  if (v === null || v === undefined) return false
  if (Array.isArray(v)) return v.some(isInformative)
  if (typeof v === 'object' && !(v instanceof Uint8Array) && !(v instanceof Date) && losslessText(v) === undefined)
    return Object.values(v as object).some(isInformative)
  return true
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array) && !(v instanceof Date) && !(v instanceof Map) && losslessText(v) === undefined

export const LONG_TYPES = new Set(['long', 'time', 'timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns'])

/** A coerced value's share of sizes.ts's estimate: a primitive's inline, anything else walked. */
export const valueBytes = (c: unknown): number =>
  typeof c === 'string' ? 24 + 2 * c.length : typeof c === 'number' || typeof c === 'boolean' ? 16 : typeof c === 'bigint' ? 32 : estimateRowBytes(c)

/**
 * A field's v3 `write-default`, converted once: the value a record that lacks the field gets (an
 * explicit null stays null). JSON single-value form: binary and fixed as hex, structs as `{}`
 * (whose fields take their own defaults); everything else as coercion accepts it.
 */
export function writeDefault(field: NestedField, convert: Convert, path: string): unknown {
  const raw = field['write-default']
  if (raw === undefined || raw === null) return undefined
  const hex = (field.type === 'binary' || /^fixed\[/.test(String(field.type))) && typeof raw === 'string'
  const input = hex && /^(?:[0-9a-fA-F]{2})*$/.test(raw) ? Uint8Array.from(raw.match(/../g) ?? [], (b) => parseInt(b, 16)) : raw
  try {
    return convert(input, { unknown: undefined })
  } catch (err) {
    if (!(err instanceof Failure)) throw err
    const name = path ? `${path}.${field.name}` : field.name
    throw new SchemaError(`field '${name}': write-default ${describe(raw)} is not a valid ${typeName(field.type)}`)
  }
}

/** A list of `element`s (`required`: no null element; `expected`, `text`: the element's and the list's type names). */
export function compileList(element: Convert, required: boolean, expected: string, text: string): Convert {
  return (v, ctx) => {
    if (!Array.isArray(v)) throw new Failure([], text, v)
    const out = new Array(v.length)
    let i = 0
    try {
      for (; i < v.length; i++) {
        const e = v[i]
        if (e === null || e === undefined) {
          if (required) throw new Failure([], `${expected} (required)`, e)
          out[i] = null
        } else out[i] = element(e, ctx)
      }
    } catch (err) {
      if (err instanceof Failure) err.segments.unshift(`[${i}]`)
      throw err
    }
    return out
  }
}

/** A map from a Map or a JSON object, its keys through `key` and its values through `value`. */
export function compileMap(key: Convert, value: Convert, type: MapType): Convert {
  const required = type['value-required']
  const expected = typeName(type.value)
  const keyText = typeName(type.key)
  const text = typeName(type)
  return (v, ctx) => {
    const entries: Iterable<[unknown, unknown]> | undefined = v instanceof Map ? v : isPlainObject(v) ? Object.entries(v) : undefined
    if (entries === undefined) throw new Failure([], text, v)
    const out = new Map<unknown, unknown>()
    for (const [k, e] of entries) {
      try {
        if (k === null || k === undefined) throw new Failure([], `${keyText} (map key)`, k)
        const ck = key(k, ctx)
        if (e === null || e === undefined) {
          if (required) throw new Failure([], `${expected} (required)`, e)
          out.set(ck, null)
        } else out.set(ck, value(e, ctx))
      } catch (err) {
        if (err instanceof Failure) err.segments.unshift(`[${JSON.stringify(String(k))}]`)
        throw err
      }
    }
    return out
  }
}
