/**
 * The light formats, always loaded: `json`, `string`, `bytes`.
 *
 * `json` parses UTF-8 text without losing digits: integers beyond 2^53 come out as bigint, and
 * other numbers with more than 15 significant digits (what a double keeps) as lossless-json
 * `LosslessNumber`s holding the exact text — lib/schema's inference reads them as double and the
 * writer's coercion turns them into exact decimals or doubles. Every other number is a JS number.
 * lossless-json is used only when the text holds a run of 16+ digits (or digits and points), so
 * ordinary records take the fast JSON.parse path.
 */
import { isInteger, LosslessNumber, parse } from 'lossless-json'

export type TextResult = { ok: true; value: unknown } | { ok: false; reason: string }

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** Integers beyond 2^53 as bigint, numbers a double cannot hold exactly as LosslessNumber, the rest as numbers. */
function parseNumber(text: string): number | bigint | LosslessNumber {
  const n = Number(text)
  if (isInteger(text)) return Number.isSafeInteger(n) ? n : BigInt(text)
  const significant = text.replace(/[eE].*$/, '').replace(/[-+.]/g, '').replace(/^0+/, '').replace(/0+$/, '')
  return significant.length > 15 ? new LosslessNumber(text) : n
}

/** A run of digits (and decimal points) long enough that JSON.parse might round it. */
const LONG_NUMBER = /[0-9.]{16,}/

/** Strict UTF-8 (invalid sequences are an error, not U+FFFD). */
export function decodeUtf8(bytes: Uint8Array): TextResult {
  try {
    return { ok: true, value: utf8.decode(bytes) }
  } catch {
    return { ok: false, reason: `not valid UTF-8 (${bytes.byteLength} bytes)` }
  }
}

/** Any JSON value; exact for 64-bit integers. */
export function parseJsonValue(bytes: Uint8Array): TextResult {
  const text = decodeUtf8(bytes)
  if (!text.ok) return text
  const s = text.value as string
  try {
    return { ok: true, value: LONG_NUMBER.test(s) ? parse(s, null, parseNumber) : JSON.parse(s) }
  } catch (err) {
    return { ok: false, reason: `invalid JSON: ${(err as Error).message} in ${JSON.stringify(s.length > 80 ? `${s.slice(0, 80)}…` : s)}` }
  }
}

/** A JSON object (the `json` value format): anything else is a failure with its reason. */
export function parseJsonObject(bytes: Uint8Array): { ok: true; value: Record<string, unknown> } | { ok: false; reason: string } {
  const r = parseJsonValue(bytes)
  if (!r.ok) return r
  const v = r.value
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    return { ok: false, reason: `JSON value is ${v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v}, expected an object` }
  return { ok: true, value: v as Record<string, unknown> }
}
