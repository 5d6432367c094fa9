/**
 * The record guard (DESIGN.md invariant 9, "a record can only hurt itself"): before a decoded
 * value is routed, inferred or coerced, one iterative walk (no recursion, so no depth can
 * overflow the stack) checks what it contains against the FLOE_MAX_* limits:
 *
 * - nesting depth (objects and arrays) ≤ `maxDepth`;
 * - distinct columns ≤ `maxColumns` (leaf paths, list elements counted once: what the table
 *   would get) — the walk stops at the first column past the limit, so a 100,000-key record
 *   costs a few milliseconds, not a Parquet encoding of 100,000 columns;
 * - field names ≤ `maxFieldNameLength` characters, and well-formed UTF-16 (a lone surrogate
 *   would be stored as U+FFFD: inexact);
 * - string values well-formed UTF-16 too, for the same reason;
 * - for formats without a declared schema (JSON), no ±Infinity/NaN number: JSON has no such
 *   literal, so one is an overflow (`1e400`) that would be stored as Infinity.
 *
 * A value past a limit yields the reason (field, limit, value truncated); nothing throws.
 */
import type { RecordLimits } from '../config.js'
import { keepLayout, layoutOf, shapeOf, WIDE_KEYS, type Shape } from './columnar/layout.js'
import { losslessText } from './columnar/values.js'

/** Longest excerpt of a value or path shown in a reason. */
const SHOWN = 80

export const excerpt = (text: string): string => (text.length > SHOWN ? `${text.slice(0, SHOWN)}…(${text.length} characters)` : text)

/** A lone surrogate (a `u`-flag class matches whole pairs as one code point, so only lone halves match). */
const LONE_SURROGATE = /\p{Cs}/u

/** A value to check, or (with `next`) an array being walked element by element, so a long array never floods the stack. */
type Frame = { value: unknown; path: string; column: string; depth: number; next?: number }

/** Why `value` breaks a limit, or undefined when it is within all of them. */
export function checkRecord(value: Record<string, unknown>, limits: RecordLimits, opts: { declared: boolean }): string | undefined {
  return inspectRecord(value, limits, opts).problem
}

/**
 * checkRecord, and whether the value holds an integer-valued number beyond 2^53 (JSON.parse
 * rounded it: the writer then decodes that record exactly, lib/codec parseJsonObject).
 */
export function inspectRecord(value: Record<string, unknown>, limits: RecordLimits, opts: { declared: boolean }): { problem?: string; unsafeInteger: boolean } {
  const fast = withinLimits(value, limits, opts.declared)
  if (fast !== LOOK_CLOSELY) return { unsafeInteger: fast === WITHIN_UNSAFE }
  const problem = findProblem(value, limits, opts)
  return problem !== undefined ? { problem, unsafeInteger: false } : { unsafeInteger: hasUnsafeInteger(value) }
}

const LOOK_CLOSELY = 0
const WITHIN = 1
const WITHIN_UNSAFE = 2

/** An integer-valued number a double cannot tell from its neighbours (|n| > 2^53), anywhere in the value. */
function hasUnsafeInteger(value: unknown): boolean {
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const v = stack.pop()
    if (typeof v === 'number') {
      if (Number.isInteger(v) && !Number.isSafeInteger(v)) return true
    } else if (Array.isArray(v)) {
      for (const e of v) stack.push(e)
    } else if (typeof v === 'object' && v !== null && !(v instanceof Uint8Array) && !(v instanceof Date) && !(v instanceof Map)) for (const k in v) stack.push((v as Record<string, unknown>)[k])
  }
  return false
}

const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed()

/**
 * The per-record fast path (issue 20: the guard cost as much as JSON.parse): WITHIN only when
 * findProblem would find nothing — no strings or paths built, no regex, non-null leaves counted
 * instead of distinct columns (distinct columns ≤ leaves), every value counted so the exact
 * walk's stack (at most the values pushed plus one frame per array level) stays under its cap.
 * LOOK_CLOSELY: the exact walk below then finds the reason (or that there is none, e.g. a long
 * array of one column). Recursive (depth ≤ FLOE_MAX_DEPTH ≤ 200) over module state: no
 * allocation per record; synchronous, so walks never interleave.
 */
function withinLimits(value: Record<string, unknown>, limits: RecordLimits, declared: boolean): typeof LOOK_CLOSELY | typeof WITHIN | typeof WITHIN_UNSAFE {
  walk.maxColumns = limits.maxColumns
  walk.maxDepth = limits.maxDepth
  walk.maxName = limits.maxFieldNameLength
  walk.maxValues = limits.maxColumns * 4
  walk.declared = declared
  walk.leaves = 0
  walk.values = 0
  walk.unsafe = false
  if (!fits(value, 0)) return LOOK_CLOSELY
  return walk.unsafe ? WITHIN_UNSAFE : WITHIN
}

const walk = { maxColumns: 0, maxDepth: 0, maxName: 0, maxValues: 0, declared: false, leaves: 0, values: 0, unsafe: false }

function fits(v: unknown, depth: number): boolean {
  if (++walk.values > walk.maxValues) return false
  if (typeof v === 'string') return isWellFormed(v) && ++walk.leaves <= walk.maxColumns
  if (typeof v === 'number') {
    if ((!walk.declared && !Number.isFinite(v)) || ++walk.leaves > walk.maxColumns) return false
    if (!walk.unsafe && Number.isInteger(v) && !Number.isSafeInteger(v)) walk.unsafe = true
    return true
  }
  if (typeof v !== 'object' || v === null || v instanceof Uint8Array || v instanceof Date || losslessText(v) !== undefined)
    return v === null || v === undefined || ++walk.leaves <= walk.maxColumns
  if (depth >= walk.maxDepth) return false
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!fits(v[i], depth + 1)) return false
    return true
  }
  if (v instanceof Map) {
    for (const e of v.values()) if (!fits(e, depth + 1)) return false
    return true
  }
  if (depth === 0 && Object.getPrototypeOf(v) === Object.prototype) return fitsRecord(v as Record<string, unknown>)
  for (const key in v) {
    if (key.length > walk.maxName || !isWellFormed(key) || !fits((v as Record<string, unknown>)[key], depth + 1)) return false
  }
  return true
}

/**
 * The top level of a plain record, the same checks as fits's `for…in` (a plain object's own
 * keys are what it enumerates): a wide record (columnar/layout.ts) keeps the keys and values
 * read here, so coercion reads neither from the dictionary-mode object again.
 */
function fitsRecord(v: Record<string, unknown>): boolean {
  // Decoded with its layout (lib/codec json-wide.ts): its keys and values are not read again.
  const laid = layoutOf(v)
  if (laid !== undefined) return fitsShape(shapeOf(laid.keys), laid.values)
  // for…in, not Object.keys: no array per record (a narrow record's keys come from V8's enum cache).
  const { values, leaves } = walk
  let n = 0
  for (const key in v) {
    if (++n >= WIDE_KEYS) {
      // Wide after all: walked again as a layout, counted from where this record started.
      walk.values = values
      walk.leaves = leaves
      return fitsWide(v, Object.keys(v))
    }
    if (key.length > walk.maxName || !isWellFormed(key) || !fits(v[key], 1)) return false
  }
  return true
}

/** A wide record: its names checked once per shape, its values kept as its layout. */
function fitsWide(v: Record<string, unknown>, keys: string[]): boolean {
  const shape = shapeOf(keys)
  const n = keys.length
  const values = new Array<unknown>(n)
  for (let i = 0; i < n; i++) values[i] = v[keys[i]!]
  if (!fitsShape(shape, values)) return false
  keepLayout(v, shape.keys, values)
  return true
}

/** A wide record's names (once per shape) and its values in order: a layout read here or kept by decoding. */
function fitsShape(shape: Shape, values: readonly unknown[]): boolean {
  if (shape.longest > walk.maxName || !shape.wellFormed) return false
  for (let i = 0; i < values.length; i++) if (!fits(values[i], 1)) return false
  return true
}

/** The exact walk: the first problem in walk order, with its path. */
function findProblem(value: Record<string, unknown>, limits: RecordLimits, opts: { declared: boolean }): string | undefined {
  const columns = new Set<string>()
  const stack: Frame[] = [{ value, path: '', column: '', depth: 0 }]
  while (stack.length > 0) {
    const frame = stack.pop()!
    const { value: v, path, column, depth } = frame
    if (frame.next !== undefined) {
      const list = v as unknown[]
      const i = frame.next
      if (i + 1 < list.length) stack.push({ ...frame, next: i + 1 })
      stack.push({ value: list[i], path: `${path}[${i}]`, column: `${column}.element`, depth: depth + 1 })
      continue
    }
    if (typeof v === 'string') {
      if (LONE_SURROGATE.test(v)) return `field '${excerpt(path)}' holds a string that is not valid Unicode (a lone surrogate) and cannot be stored exactly`
      if (!columns.has(column) && addColumn(columns, column, limits)) return tooWide(limits, path)
      continue
    }
    if (typeof v === 'number') {
      if (!opts.declared && !Number.isFinite(v)) return `field '${excerpt(path)}' is ${v}: a JSON number that overflows a double, cannot be stored exactly`
      if (!columns.has(column) && addColumn(columns, column, limits)) return tooWide(limits, path)
      continue
    }
    if (typeof v !== 'object' || v === null || v instanceof Uint8Array || v instanceof Date || losslessText(v) !== undefined) {
      if (v !== null && v !== undefined && !columns.has(column) && addColumn(columns, column, limits)) return tooWide(limits, path)
      continue
    }
    if (depth >= limits.maxDepth) return `field '${excerpt(path)}' nests deeper than FLOE_MAX_DEPTH=${limits.maxDepth}`
    if (Array.isArray(v)) {
      if (v.length > 0) stack.push({ value: v, path, column, depth, next: 0 })
      continue
    }
    if (v instanceof Map) {
      // A map's keys are data, not columns (Avro maps): one key column, one value column.
      for (const [, e] of v) stack.push({ value: e, path: `${path}.value`, column: `${column}.value`, depth: depth + 1 })
      continue
    }
    for (const key in v) {
      if (key.length > limits.maxFieldNameLength)
        return `field name '${excerpt(key)}' at '${excerpt(path) || '(top)'}' is ${key.length} characters, more than FLOE_MAX_FIELD_NAME_LENGTH=${limits.maxFieldNameLength}`
      if (LONE_SURROGATE.test(key)) return `field name ${JSON.stringify(excerpt(key))} at '${excerpt(path) || '(top)'}' is not valid Unicode (a lone surrogate)`
      const child = path ? `${path}.${key}` : key
      stack.push({ value: (v as Record<string, unknown>)[key], path: child, column: column ? `${column}.${key}` : key, depth: depth + 1 })
      // Keys alone can pass the limit (objects of objects): count the pending frames too.
      if (stack.length > limits.maxColumns * 4 + limits.maxDepth) return tooWide(limits, child)
    }
  }
  return undefined
}

/** Adds a column; true when that passes the limit. */
function addColumn(columns: Set<string>, column: string, limits: RecordLimits): boolean {
  columns.add(column)
  return columns.size > limits.maxColumns
}

const tooWide = (limits: RecordLimits, path: string): string =>
  `record has more than FLOE_MAX_COLUMNS=${limits.maxColumns} columns (the first past the limit: '${excerpt(path)}')`

/** The columns (leaf paths, list elements as `.element`, map values as `.value`) a value brings. Iterative. */
export function recordColumns(value: Record<string, unknown>): Set<string> {
  const columns = new Set<string>()
  const stack: [unknown, string][] = [[value, '']]
  while (stack.length > 0) {
    const [v, column] = stack.pop()!
    if (v === null || v === undefined) continue
    if (typeof v !== 'object' || v instanceof Uint8Array || v instanceof Date || losslessText(v) !== undefined) columns.add(column)
    else if (Array.isArray(v)) for (const e of v) stack.push([e, `${column}.element`])
    else if (v instanceof Map) for (const [, e] of v) stack.push([e, `${column}.value`])
    else for (const key in v) stack.push([(v as Record<string, unknown>)[key], column ? `${column}.${key}` : key])
  }
  return columns
}
