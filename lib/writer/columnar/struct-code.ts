/**
 * A struct's coercion compiled to code (issue 20: "straight into columns through an extractor
 * compiled from the table schema"): one generated function per struct that reads each field by
 * its constant name (`v["id"]`, a monomorphic load, not one keyed lookup per field and record)
 * and stores it into the row literal the same way. It does exactly what coerce.ts's generic loop
 * does — same row (same key order: the row literal has every field), same size figure, same
 * Failure path, same unknown-field scan — so it is used wherever that loop would be, except for
 * case-insensitive tables (keys matched by fieldValue) and schemas with a field named
 * `__proto__` (which a literal or a constant-name store would take as the prototype).
 */
import { generated } from './codegen.js'
import type { Row } from './coerce.js'
import type { IcebergType } from '../../schema/index.js'
import { layoutPlan, type Layout } from './layout.js'
import { INHERITED } from './values.js'
import { Failure, type Convert, type Ctx } from './primitives.js'

/** What coerce.ts's compileStruct has worked out per field, and the helpers it shares. */
export interface StructParts {
  names: string[]
  required: boolean[]
  expected: string[]
  converts: Convert[]
  defaults: unknown[]
  keyBytes: number[]
  defaultBytes: number[]
  structField: boolean[]
  longField: boolean[]
  /** Per field, the primitive whose common input is checked inline (the value as is, its size known): string, double, boolean, long (as a number). */
  inline: (InlineKind | undefined)[]
  known: ReadonlySet<string>
  path: string
  typeText: string
  objectOverhead: number
  make: () => Row
  isPlainObject: (v: unknown) => v is Record<string, unknown>
  isInformative: (v: unknown) => boolean
  valueBytes: (c: unknown) => number
}

export type InlineKind = 'string' | 'double' | 'boolean' | 'long'

/** A primitive whose common input is checked inline (a long only where it stays a number: `numbers`). */
export const inlineKind = (t: IcebergType, numbers: boolean): InlineKind | undefined =>
  t === 'string' || t === 'double' || t === 'boolean' ? t : t === 'long' && numbers ? 'long' : undefined

export const bareRow = (): Row => Object.create(null) as Row

/**
 * Rows of a struct from one compiled object literal with every field (null): one hidden class
 * with fast properties however wide the schema (a `{}` given 200 keyed stores is slow to build
 * and to read: docs/benchmarks.md), in schema order as before. A field named `__proto__` (which
 * a literal would take as the prototype) keeps the plain `{}`.
 */
export function rowFactory(names: string[]): () => Row {
  // A row with no prototype: `out["__proto__"] = v` is then a field, not the row's prototype (a `{}` drops a number and takes an object or null as its prototype).
  if (names.includes('__proto__')) return bareRow
  return generated<() => Row>([], `return { ${names.map((name) => `${JSON.stringify(name)}: null`).join(', ')} }`)
}

/** The inline test of an input the conversion would return unchanged, and the size valueBytes (coerce.ts) gives it. */
const INLINE: Record<InlineKind, { test: string; size: string }> = {
  string: { test: `typeof value === 'string'`, size: '24 + 2 * value.length' },
  double: { test: `typeof value === 'number'`, size: '16' },
  boolean: { test: `typeof value === 'boolean'`, size: '16' },
  long: { test: `typeof value === 'number' && Number.isSafeInteger(value)`, size: '32' },
}

/** A struct's conversion from a record's layout (layout.ts): the same as its Convert on that record. */
export type LaidConvert = (v: Record<string, unknown>, layout: Layout, ctx: Ctx) => Row

/** The per-field statements of the generated body, each field's value read by `read(k, key)`. */
function fieldStatements(p: StructParts, read: (k: number, key: string) => string): string {
  const body: string[] = []
  p.names.forEach((name, k) => {
    const key = JSON.stringify(name)
    const nullBytes = p.keyBytes[k]! + 8
    const fail = `throw new Failure([], ${JSON.stringify(`${p.expected[k]} (required)`)}, value)`
    const missing =
      p.defaults[k] !== undefined ? `out[${key}] = defaults[${k}]; bytes += ${p.keyBytes[k]! + p.defaultBytes[k]!}` : p.required[k] ? fail : `bytes += ${nullBytes}`
    const size = p.structField[k] ? 'ctx.bytes' : p.longField[k] ? `(typeof c === 'number' ? 32 : valueBytes(c))` : 'valueBytes(c)'
    const inline = p.inline[k] && INLINE[p.inline[k]]
    const convert = `c = c${k}(value, ctx); out[${key}] = c; bytes += ${p.keyBytes[k]} + ${size}`
    body.push(
      `i = ${k}; value = ${read(k, key)}`,
      `if (value === undefined) { ${missing} } else { matched++`,
      `  if (value === null) { ${p.required[k] ? fail : `bytes += ${nullBytes}`} }`,
      inline ? `  else if (${inline.test}) { out[${key}] = value; bytes += ${p.keyBytes[k]} + ${inline.size} }` : '',
      `  else { ${convert} } }`,
    )
  })
  return body.join('\n')
}

/** A generated function's frame: the plain-object check, the row, the Failure path (the field's name prepended), the size. */
const wrap = (name: string, params: string, prelude: string, body: string, unknown: string, overhead: number): string => `
    function ${name}(${params}) {
      if (!isPlainObject(v)) throw new Failure([], typeText, v)
      ${prelude}
      const out = make()
      let bytes = ${overhead}, matched = 0, i = 0, value, c
      try {
        ${body}
      } catch (err) {
        if (err instanceof Failure) err.segments.unshift(names[i])
        throw err
      }
      ${unknown}
      ctx.bytes = bytes
      return out
    }`

/** Unknown keys by enumerating the record (only when it has keys the fields did not match). */
const UNKNOWN_BY_KEYS = `
      let keys = 0
      for (const _ in v) keys++
      if (keys > matched) {
        for (const key in v) if (!known.has(key) && isInformative(v[key])) (ctx.unknown ??= []).push({ path: path ? path + '.' + key : key, value: v[key] })
      }`

/** Unknown keys from the layout's plan: the positions of the keys the struct does not know, in enumeration order. */
const UNKNOWN_BY_PLAN = `
      for (let u = 0; u < plan.unknown.length; u++) {
        const j = plan.unknown[u], x = vals[j]
        if (isInformative(x)) (ctx.unknown ??= []).push({ path: path ? path + '.' + layout.keys[j] : layout.keys[j], value: x })
      }`

/**
 * The generated conversion, and (`laid`) the same conversion from a record's layout; undefined
 * when the generic loop must be used (see the module comment).
 */
export function compiledStruct(p: StructParts, ci: boolean): (Convert & { laid: LaidConvert }) | undefined {
  if (ci || p.names.includes('__proto__')) return undefined
  const plans = `let plan = plans.get(layout.keys); if (plan === undefined) plans.set(layout.keys, (plan = layoutPlan(names, known, layout.keys)))
      const at = plan.at, vals = layout.values; let j`
  const source = `
    ${p.converts.map((_, k) => `const c${k} = converts[${k}]`).join('\n')}
    // Keyed weakly by the shape's keys array (layout.ts keeps the last 8 shapes): a producer whose
    // records come in ever new key orders leaves no plan behind once its shapes are gone.
    const plans = new WeakMap()
    ${wrap('coerceStruct', 'v, ctx', '', fieldStatements(p, (k, key) => (INHERITED.has(p.names[k]!) ? `(Object.hasOwn(v, ${key}) ? v[${key}] : undefined)` : `v[${key}]`)), UNKNOWN_BY_KEYS, p.objectOverhead)}
    ${wrap('coerceLaid', 'v, layout, ctx', plans, fieldStatements(p, (k) => `(j = at[${k}]) < 0 ? undefined : vals[j]`), UNKNOWN_BY_PLAN, p.objectOverhead)}
    coerceStruct.laid = coerceLaid
    return coerceStruct`
  const build = generated<(...args: unknown[]) => Convert & { laid: LaidConvert }>(
    ['converts', 'defaults', 'names', 'known', 'path', 'typeText', 'make', 'isPlainObject', 'isInformative', 'valueBytes', 'Failure', 'layoutPlan'],
    source,
  )
  return build(p.converts, p.defaults, p.names, p.known, p.path, p.typeText, p.make, p.isPlainObject, p.isInformative, p.valueBytes, Failure, layoutPlan)
}
