/**
 * The light formats, always loaded: `json`, `string`, `bytes`.
 *
 * `json` parses UTF-8 text. Integers beyond 2^53 come out as bigint (lossless-json, used only
 * when the text holds a run of 16+ digits, so ordinary records take the fast JSON.parse path);
 * other numbers are JS numbers.
 */
import { isInteger, parse } from 'lossless-json'

export type TextResult = { ok: true; value: unknown } | { ok: false; reason: string }

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** Integers beyond 2^53 as bigint; every other number as a JS number. */
function parseNumber(text: string): number | bigint {
  const n = Number(text)
  return isInteger(text) && !Number.isSafeInteger(n) ? BigInt(text) : n
}

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
    return { ok: true, value: /\d{16,}/.test(s) ? parse(s, null, parseNumber) : JSON.parse(s) }
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
