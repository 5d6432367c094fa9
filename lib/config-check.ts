/**
 * Messages for configuration a person wrote by hand (FLOE_ROUTES, `--routes FILE`): where the
 * problem is (the file, the line and column of a JSON syntax error, the JSON path of a bad
 * value), what the value was, and the nearest known key ("did you mean"). Pure helpers: the
 * schemas themselves stay in lib/config.ts.
 */
import type { z } from 'zod'
import { parsePartitionExpr, canTransform } from './iceberg/index.js'

/** Levenshtein distance, for "did you mean". */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1))
      prev = cur
    }
  }
  return row[b.length]!
}

/** The candidate closest to `word` if it is close enough to be a typo of it. */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Infinity
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase())
    if (d < bestDistance) [best, bestDistance] = [c, d]
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined
}

/** `$.routes[0].table` from a path of keys and indexes. */
export function jsonPath(path: readonly PropertyKey[]): string {
  return `$${path.map((p) => (typeof p === 'number' ? `[${p}]` : /^[A-Za-z_][A-Za-z0-9_]*$/.test(String(p)) ? `.${String(p)}` : `[${JSON.stringify(String(p))}]`)).join('')}`
}

/** JSON.parse with the error placed at its line and column. */
export function parseJsonText(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch (err) {
    const message = (err as Error).message
    const pos = /position (\d+)/.exec(message)
    if (!pos) return { ok: false, message: `not valid JSON: ${message}` }
    const at = Number(pos[1])
    const before = text.slice(0, at)
    const line = before.split('\n').length
    const column = at - before.lastIndexOf('\n')
    const context = text.split('\n')[line - 1] ?? ''
    return { ok: false, message: `not valid JSON at line ${line}, column ${column}: ${message.replace(/\s*\(line \d+ column \d+\)/, '')}\n    ${context.trim().slice(0, 120)}` }
  }
}

/** Which keys an object may have at a JSON path (null: any key, e.g. the table names of `tables`). */
export type KnownKeys = (path: readonly (string | number)[]) => readonly string[] | null | undefined

/** The first key no schema allows, with its path and the nearest allowed key. */
export function unknownKey(value: unknown, known: KnownKeys, path: (string | number)[] = []): string | undefined {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unknownKey(value[i], known, [...path, i])
      if (found) return found
    }
    return undefined
  }
  if (typeof value !== 'object' || value === null) return undefined
  const allowed = known(path)
  for (const key of Object.keys(value)) {
    if (allowed && !allowed.includes(key)) {
      const near = nearest(key, allowed)
      return `${jsonPath([...path, key])}: unknown key ${JSON.stringify(key)}${near ? ` (did you mean ${JSON.stringify(near)}?)` : ` (known keys: ${allowed.join(', ')})`}`
    }
    if (allowed !== undefined) {
      const found = unknownKey((value as Record<string, unknown>)[key], known, [...path, key])
      if (found) return found
    }
  }
  return undefined
}

/** A value as shown in a message: JSON, cut short. */
export function shown(value: unknown): string {
  const text = value === undefined ? 'nothing' : JSON.stringify(value)
  return text.length > 80 ? `${text.slice(0, 80)}…` : text
}

/** The value at a path of the parsed JSON. */
export function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root
  for (const p of path) v = v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[p] : undefined
  return v
}

/** One line per zod issue: the JSON path, what was expected, and the value found there. */
export function describeIssues(issues: readonly z.core.$ZodIssue[], root: unknown): string {
  return issues
    .map((i) => {
      const path = i.path as PropertyKey[]
      const what = i.code === 'invalid_union' ? 'not one of the allowed shapes' : i.message
      return `${jsonPath(path)}: ${what}; got ${shown(valueAt(root, path))}`
    })
    .join('; ')
}

/** Iceberg primitive types a `columns` hint may pin (types the writer's coercion handles). */
export const HINT_TYPES = /^(boolean|int|long|float|double|date|time|timestamp|timestamptz|timestamp_ns|timestamptz_ns|string|binary|decimal\(\s*\d{1,2}\s*,\s*\d{1,2}\s*\))$/

/**
 * Checks partitionBy expressions before anything runs: the syntax, the transform and its
 * argument (`bucket(0, ts)` is rejected), and — where the source column's type is pinned with a
 * `columns` hint — that the transform accepts that type (`day(id)` of a long is rejected). A
 * column the records must bring is checked when the table is created (its records are dead
 * letters naming the expression if they lack it).
 * Returns the first problem, or undefined.
 */
export function checkPartitionBy(exprs: readonly string[], columns: Readonly<Record<string, string>>): string | undefined {
  for (const [i, expr] of exprs.entries()) {
    let parsed: ReturnType<typeof parsePartitionExpr>
    try {
      parsed = parsePartitionExpr(expr)
    } catch (err) {
      return `partitionBy[${i}]: ${(err as Error).message}`
    }
    const type = columns[parsed.column]
    if (type === undefined) continue
    if (!canTransform(parsed.transform, type.replace(/\s+/g, ''))) return `partitionBy[${i}] ${JSON.stringify(expr)}: the transform does not apply to column ${JSON.stringify(parsed.column)} of type ${type}`
  }
  return undefined
}
