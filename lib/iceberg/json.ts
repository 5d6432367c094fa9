/**
 * Lossless JSON for foreign metadata: integers beyond 2^53 become `bigint`, other numbers stay
 * JS numbers, and `stringify` writes bigints back digit for digit. Callers then coerce the fields
 * the spec declares as 64-bit ids to `bigint` (see `toBigInt`).
 */
import { isInteger, isSafeNumber, LosslessNumber, parse, stringify } from 'lossless-json'

function parseNumber(text: string): number | bigint | LosslessNumber {
  if (isInteger(text)) return isSafeNumber(text) ? Number(text) : BigInt(text)
  // A float that would lose digits keeps its text so a read-modify-write does not change it.
  return isSafeNumber(text) ? Number(text) : new LosslessNumber(text)
}

/** Parses JSON text; throws the parser's SyntaxError on malformed input. */
export function parseJson(text: string): unknown {
  return parse(text, null, parseNumber)
}

/** JSON text with bigints and lossless numbers written exactly. */
export function stringifyJson(value: unknown, space?: number | string): string {
  const out = stringify(value, undefined, space)
  if (out === undefined) throw new TypeError('value cannot be serialized to JSON')
  return out
}

/** A 64-bit integer field as bigint: accepts number, bigint, LosslessNumber and decimal strings. */
export function toBigInt(value: unknown, what: string): bigint {
  if (typeof value === 'bigint') return value
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value)
  if (value instanceof LosslessNumber && isInteger(value.value)) return BigInt(value.value)
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return BigInt(value)
  throw new TypeError(`${what}: expected a 64-bit integer, got ${describe(value)}`)
}

export function describe(value: unknown): string {
  if (value === undefined) return 'nothing'
  try {
    const s = stringifyJson(value)
    return s.length > 120 ? `${s.slice(0, 117)}...` : s
  } catch {
    return String(value)
  }
}

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof LosslessNumber)
