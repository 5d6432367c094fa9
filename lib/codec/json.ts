/**
 * The light formats, always loaded: `json`, `string`, `bytes`.
 *
 * `json` parses UTF-8 text without losing digits: integer literals beyond 2^53 come out as bigint
 * (even those a double holds exactly, so a long column gets the literal's value and a double
 * column takes it only when the double holds it exactly — lib/writer/columnar/primitives.ts), and
 * other numbers with more than 15 significant digits (what a double keeps) as lossless-json
 * `LosslessNumber`s holding the exact text — lib/schema's inference reads them as double and the
 * writer's coercion turns them into exact decimals or doubles. Every other number is a JS number.
 * lossless-json is used only when the text holds a run of 16+ digits (or digits and points) that
 * a double would not print back as the same text, so ordinary records — including doubles
 * printed in full (`33.583333333333336`, what JSON.stringify and Java write) — take the fast
 * JSON.parse path (measured: 2.3× faster decoding of such records, test/bench).
 */
import { isInteger, LosslessNumber, parse } from 'lossless-json'
import { noteWideObject, parseWideObject, type WideObject } from './json-wide.js'

export type TextResult = { ok: true; value: unknown } | { ok: false; reason: string }

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** Integers beyond 2^53 as bigint, numbers a double cannot hold exactly as LosslessNumber, the rest as numbers. */
function parseNumber(text: string): number | bigint | LosslessNumber {
  const n = Number(text)
  if (isInteger(text)) return Number.isSafeInteger(n) ? n : BigInt(text)
  if (roundTrips(text, n)) return n
  const significant = text.replace(/[eE].*$/, '').replace(/[-+.]/g, '').replace(/^0+/, '').replace(/0+$/, '')
  return significant.length > 15 ? new LosslessNumber(text) : n
}

/** The double prints back as exactly this text: nothing was lost parsing it. */
const roundTrips = (text: string, n = Number(text)) => String(n) === text

/** A run of digits (and decimal points, and an exponent) long enough that JSON.parse might round it. */
const LONG_NUMBER = /[0-9.]{16,}(?:[eE][-+]?[0-9]+)?/g

/** True when JSON.parse keeps every number of `s` exactly: each long run prints back as itself. */
function doublesSuffice(s: string): boolean {
  LONG_NUMBER.lastIndex = 0
  for (let m = LONG_NUMBER.exec(s); m !== null; m = LONG_NUMBER.exec(s)) {
    // A run inside an exponent or after a sign-less 'e' cannot be judged alone: take the exact path.
    const before = m.index > 0 ? s.charCodeAt(m.index - 1) : 0
    if (before === 0x65 || before === 0x45 || before === 0x2b) return false
    // An integer beyond 2^53 that prints back as itself (1152921504606847000) is still not the
    // double's value (2^60 = 1152921504606846976): integers take the exact path, as bigint.
    if (!roundTrips(m[0]) || (/^\d+$/.test(m[0]) && !Number.isSafeInteger(Number(m[0])))) return false
  }
  return true
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
    return { ok: true, value: doublesSuffice(s) ? JSON.parse(s) : parse(s, null, parseNumber) }
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

/**
 * The JSON object of `bytes` with every number a lossless-json `LosslessNumber` holding its
 * literal text, so inference can type numbers from how they were written: `1.0` and `1e3` are
 * doubles, `1` is a long, even though JSON.parse gives the same number for `1.0` and `1`. Slower
 * than parseJsonObject, so it is used only where a type must be inferred (a new table, a record
 * with a new field), never on the per-record path. Undefined when the bytes are not a JSON object.
 */
export function parseJsonLiterals(bytes: Uint8Array): Record<string, unknown> | undefined {
  const text = decodeUtf8(bytes)
  if (!text.ok) return undefined
  try {
    const v = parse(text.value as string)
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

/**
 * The writer's per-record path (issue 20): strict UTF-8 and `JSON.parse`, without the exactness
 * guard of parseJsonObject, which cost more than JSON.parse itself and fires on every double
 * printed in full. The value can differ from parseJsonObject's only in numbers written with 16+
 * digits: an integer beyond 2^53 (a rounded number here, a bigint there) or a literal with more
 * digits than a double keeps. The caller checks after parsing, only where that matters (an
 * unsafe integer anywhere; a number going to a string or decimal column), and takes that record
 * alone through parseJsonObject. A failure is parseJsonObject's, with its exact reason. A wide
 * record of a shape seen before is JSON.parse's value built without dictionary mode, with its
 * keys and values in enumeration order (json-wide.ts).
 */
export function parseJsonObjectFast(bytes: Uint8Array): { ok: true; value: Record<string, unknown> } | WideObject | { ok: false; reason: string } {
  // Strict UTF-8 without decodeUtf8's result object (one fewer object per record); a failure takes parseJsonObject for its reason.
  let s: string
  try {
    s = utf8.decode(bytes)
  } catch {
    return parseJsonObject(bytes)
  }
  // A wide record of a shape seen before: the same value, with fast properties (json-wide.ts).
  const wide = parseWideObject(s)
  if (wide !== undefined) return wide
  let v: unknown
  try {
    v = JSON.parse(s)
  } catch {
    return parseJsonObject(bytes)
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return parseJsonObject(bytes)
  noteWideObject(s, v as Record<string, unknown>)
  return { ok: true, value: v as Record<string, unknown> }
}

/**
 * False when inference would type every number of this JSON text the same from JSON.parse's value
 * (or the exact decoding) as from parseJsonLiterals': no number is written with a point or an
 * exponent and yet integral in value (`1.0`, `2.50e1`, `-0.0`: JSON.parse gives an integer, the
 * literal says double), and no integer literal has more than 15 digits (JSON.parse may round it).
 * One pass over the bytes (strings skipped), no allocation; a true answer only means "read the
 * literals" (parseJsonLiterals), so it may be conservative (any exponent counts).
 */
export function needsLiterals(bytes: Uint8Array): boolean {
  const n = bytes.length
  let i = 0
  while (i < n) {
    const c = bytes[i]!
    if (c === 0x22) {
      // A string: skip to its closing quote (a backslash escapes the next byte).
      for (i++; i < n; i++) {
        const d = bytes[i]!
        if (d === 0x5c) i++
        else if (d === 0x22) break
      }
      i++
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let digits = 0
      let point = false
      let fraction = false
      for (; i < n; i++) {
        const d = bytes[i]!
        if (d >= 0x30 && d <= 0x39) {
          if (point) fraction ||= d !== 0x30
          else digits++
        } else if (d === 0x2e) point = true
        else if (d === 0x65 || d === 0x45) return true
        else if (d !== 0x2d && d !== 0x2b) break
      }
      if (point ? !fraction : digits > 15) return true
    } else i++
  }
  return false
}
