/**
 * Scalar conversions for coercion, each returning `undefined` when the input cannot be converted
 * (the caller turns that into a RecordError naming field, type and value). Exact: timestamps and
 * decimals are parsed from their text with integer arithmetic, never through a float.
 */

export { isoToEpochDays, isoToEpochNanos, isoToTimeMicros, isZonedTimestampText, parseDateTime } from '../../schema/index.js'

/** A lossless-json LosslessNumber (or anything shaped like it): its exact decimal text. */
export function losslessText(v: unknown): string | undefined {
  if (typeof v === 'object' && v !== null && (v as { isLosslessNumber?: unknown }).isLosslessNumber === true) {
    const value = (v as { value?: unknown }).value
    return typeof value === 'string' ? value : undefined
  }
  return undefined
}

const INTEGER = /^[+-]?\d+$/

/** An exact integer from a number (safe integers only), bigint, integer string or LosslessNumber. */
export function toBigInt(v: unknown): bigint | undefined {
  if (typeof v === 'bigint') return v
  if (typeof v === 'number') return Number.isSafeInteger(v) ? BigInt(v) : undefined
  const text = typeof v === 'string' ? v.trim() : losslessText(v)
  if (text !== undefined && INTEGER.test(text)) return BigInt(text)
  return undefined
}

const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/

/** A float from a number, bigint, numeric string (incl. NaN, Infinity, -Infinity) or LosslessNumber. */
export function toFloat(v: unknown): number | undefined {
  if (typeof v === 'number') return v
  if (typeof v === 'bigint') return Number(v)
  const text = typeof v === 'string' ? v.trim() : losslessText(v)
  if (text === undefined) return undefined
  if (NUMERIC.test(text)) return Number(text)
  if (text === 'NaN') return NaN
  if (text === 'Infinity' || text === '+Infinity') return Infinity
  if (text === '-Infinity') return -Infinity
  return undefined
}

/**
 * The unscaled value of a decimal with `scale` digits after the point, from its exact text
 * (numbers go through their shortest round-trip text, so 0.1 is 1 tenth, not 0.1000000000000000055…).
 * Extra digits round half up (as Iceberg's Kafka Connect converter does); `undefined` when the
 * text is not a number or needs more than `precision` digits.
 */
export function toDecimal(v: unknown, precision: number, scale: number): bigint | undefined {
  let text: string | undefined
  if (typeof v === 'number') text = Number.isFinite(v) ? String(v) : undefined
  else if (typeof v === 'bigint') text = v.toString()
  else if (typeof v === 'string') text = v.trim()
  else text = losslessText(v)
  if (text === undefined) return undefined
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text)
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return undefined
  const negative = m[1] === '-'
  let digits = m[2]! + (m[3] ?? '')
  // Value = digits × 10^(exp - fractionLength); we want it × 10^scale.
  const shift = Number(m[4] ?? 0) - (m[3] ?? '').length + scale
  if (Math.abs(shift) > 400) return digits.replace(/0/g, '') === '' ? 0n : undefined
  let unscaled: bigint
  if (shift >= 0) unscaled = BigInt(digits + '0'.repeat(shift))
  else {
    digits = digits.padStart(-shift + 1, '0')
    const keep = digits.slice(0, digits.length + shift)
    const dropped = digits.slice(digits.length + shift)
    unscaled = BigInt(keep) + (dropped.charCodeAt(0) >= 53 /* '5' */ ? 1n : 0n)
  }
  if (unscaled.toString().length > precision) return undefined
  return negative ? -unscaled : unscaled
}

const UUID = /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/

/** The 16 bytes of a UUID text (with or without dashes). */
export function uuidBytes(text: string): Uint8Array | undefined {
  if (!UUID.test(text)) return undefined
  return Buffer.from(text.replace(/-/g, ''), 'hex')
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/

/** Bytes from base64 (standard or URL-safe, padding optional). */
export function base64Bytes(text: string): Uint8Array | undefined {
  if (text.length % 4 === 1 || !BASE64.test(text)) return undefined
  const buf = Buffer.from(text, text.includes('-') || text.includes('_') ? 'base64url' : 'base64')
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength)
}

/**
 * Names every plain object inherits (Object.prototype's: `constructor`, `toString`, `__proto__`…).
 * A record has a field of such a name only as a key of its own: read plainly, a record without
 * the key would give the inherited member (a function, or the prototype) as its value.
 */
export const INHERITED: ReadonlySet<string> = new Set(Object.getOwnPropertyNames(Object.prototype))

/**
 * A record's value for a schema field: by exact name (its own key), or — for a table with
 * `caseInsensitive` — the first key equal ignoring case.
 */
export function fieldValue(record: Record<string, unknown>, name: string, caseInsensitive: boolean): unknown {
  const v = INHERITED.has(name) && !Object.hasOwn(record, name) ? undefined : record[name]
  if (v !== undefined || !caseInsensitive) return v
  const lower = name.toLowerCase()
  for (const key in record) if (key.toLowerCase() === lower) return record[key]
  return undefined
}
