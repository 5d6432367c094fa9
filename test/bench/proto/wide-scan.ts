/**
 * Evaluation (not a test, not used by lib): a byte-level scanner for flat wide JSON records
 * (≥ 128 keys, where JSON.parse builds a dictionary-mode object) giving the layout
 * (lib/writer/columnar/layout.ts: keys in order, values) directly, against today's path for
 * the same bytes: strict UTF-8 decode + JSON.parse + Object.keys + a read per key (what
 * parseJsonObjectFast and the guard's fitsWide do). Any value the scanner does not handle
 * itself (an escaped string, a nested value, a number it cannot prove exact) goes through
 * JSON.parse of its own text; a record that is not a flat object returns undefined (fallback).
 * Checks both give the same keys and values on the bench's wide records and a few edge cases.
 * `node --import tsx test/bench/proto/wide-scan.ts`
 *
 * Measured (December 2, 2 cores, load ~2–3, medians of 5 passes, 4 runs): today 57–62 µs per
 * 3 KB record of 200 keys, the scanner 29–40 µs. A first version reading the Buffer byte by byte
 * (latin1Slice per value, a tuple per value) was 2× slower than today: only a scan over the
 * decoded string with slices is faster. The saving (~20 µs of the real path's ~218 µs per wide
 * record, ≤ 10 %) needs the writer to carry a layout instead of the decoded object through
 * routing, evolution and dead letters; not integrated.
 */
import { isUtf8 } from 'node:buffer'
import { isDeepStrictEqual } from 'node:util'
import { median, round } from '../common.js'
import { wideRecord } from '../data.js'

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** Today: what the writer's decode and guard do to get a wide record's keys and values. */
function today(bytes: Buffer): { keys: string[]; values: unknown[] } {
  const v = JSON.parse(utf8.decode(bytes)) as Record<string, unknown>
  const keys = Object.keys(v)
  const values = new Array<unknown>(keys.length)
  for (let i = 0; i < keys.length; i++) values[i] = v[keys[i]!]
  return { keys, values }
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

/** Previous record's keys: a key equal to the same position's key reuses its string. */
let lastKeys: string[] = []

/** Scanner state (module level: no tuple per value). */
const st = { end: 0, escaped: false, int: false }

/** End (exclusive) of the string starting at the quote at `i`, or -1; `st.escaped` when it has a backslash. */
function stringEnd(s: string, i: number): number {
  st.escaped = false
  for (let j = i + 1; j < s.length; j++) {
    const c = s.charCodeAt(j)
    if (c === 0x22) return j + 1
    if (c === 0x5c) {
      st.escaped = true
      j++
    } else if (c < 0x20) return -1
  }
  return -1
}

/** End of a nested value (object/array) starting at `i`, strings skipped, or -1. */
function nestedEnd(s: string, i: number): number {
  let depth = 0
  for (let j = i; j < s.length; j++) {
    const c = s.charCodeAt(j)
    if (c === 0x22) {
      j = stringEnd(s, j) - 1
      if (j < 0) return -1
    } else if (c === 0x7b || c === 0x5b) depth++
    else if (c === 0x7d || c === 0x5d) {
      if (--depth === 0) return j + 1
    }
  }
  return -1
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39

/** End of a JSON number at `i` (strict grammar), `st.int` when it is an integer of ≤ 15 digits, or -1. */
function numberEnd(s: string, i: number): number {
  let j = i
  if (s.charCodeAt(j) === 0x2d) j++
  const d0 = j
  const c = s.charCodeAt(j)
  if (c === 0x30) j++
  else if (c >= 0x31 && c <= 0x39) while (isDigit(s.charCodeAt(j))) j++
  else return -1
  st.int = j - d0 <= 15
  if (s.charCodeAt(j) === 0x2e) {
    st.int = false
    const f = ++j
    while (isDigit(s.charCodeAt(j))) j++
    if (j === f) return -1
  }
  const e0 = s.charCodeAt(j)
  if (e0 === 0x65 || e0 === 0x45) {
    st.int = false
    j++
    const sign = s.charCodeAt(j)
    if (sign === 0x2b || sign === 0x2d) j++
    const e = j
    while (isDigit(s.charCodeAt(j))) j++
    if (j === e) return -1
  }
  return j
}

function smallInt(s: string, i: number, end: number): number {
  let n = 0
  const neg = s.charCodeAt(i) === 0x2d
  for (let j = neg ? i + 1 : i; j < end; j++) n = n * 10 + (s.charCodeAt(j) - 0x30)
  return neg ? -n : n
}

const FAIL = Symbol('fail')

/** One value at `i` (its end in `st.end`), or FAIL when not JSON. */
function scanValue(s: string, i: number): unknown {
  const c = s.charCodeAt(i)
  if (c === 0x22) {
    const end = stringEnd(s, i)
    if (end < 0) return FAIL
    st.end = end
    return st.escaped ? JSON.parse(s.slice(i, end)) : s.slice(i + 1, end - 1)
  }
  if (c === 0x2d || isDigit(c)) {
    const end = numberEnd(s, i)
    if (end < 0) return FAIL
    st.end = end
    return st.int ? smallInt(s, i, end) : Number(s.slice(i, end))
  }
  st.end = i + 4
  if (c === 0x74 && s.startsWith('true', i)) return true
  if (c === 0x6e && s.startsWith('null', i)) return null
  st.end = i + 5
  if (c === 0x66 && s.startsWith('false', i)) return false
  if (c === 0x7b || c === 0x5b) {
    const end = nestedEnd(s, i)
    if (end < 0) return FAIL
    st.end = end
    return JSON.parse(s.slice(i, end))
  }
  return FAIL
}

/** The scanner: an object's top-level keys and values, or undefined (then today's path). */
function scan(b: Buffer): { keys: string[]; values: unknown[] } | undefined {
  if (!isUtf8(b)) return undefined
  const s = b.toString('utf8')
  let i = 0
  while (isSpace(s.charCodeAt(i))) i++
  if (s.charCodeAt(i++) !== 0x7b) return undefined
  const keys: string[] = []
  const values: unknown[] = []
  let same = true
  for (;;) {
    while (isSpace(s.charCodeAt(i))) i++
    if (s.charCodeAt(i) !== 0x22) return keys.length === 0 && s.charCodeAt(i) === 0x7d ? finish(s, i + 1, keys, values, same) : undefined
    const k = keys.length
    const prev = same ? lastKeys[k] : undefined
    let key: string
    if (prev !== undefined && s.charCodeAt(i + 1 + prev.length) === 0x22 && s.startsWith(prev, i + 1)) {
      key = prev
      i += prev.length + 2
    } else {
      same = false
      const end = stringEnd(s, i)
      if (end < 0 || st.escaped) return undefined
      key = s.slice(i + 1, end - 1)
      i = end
    }
    keys.push(key)
    while (isSpace(s.charCodeAt(i))) i++
    if (s.charCodeAt(i++) !== 0x3a) return undefined
    while (isSpace(s.charCodeAt(i))) i++
    const v = scanValue(s, i)
    if (v === FAIL) return undefined
    values.push(v)
    i = st.end
    while (isSpace(s.charCodeAt(i))) i++
    const c = s.charCodeAt(i)
    if (c === 0x2c) {
      i++
      continue
    }
    if (c === 0x7d) return finish(s, i + 1, keys, values, same)
    return undefined
  }
}

function finish(s: string, i: number, keys: string[], values: unknown[], same: boolean) {
  while (isSpace(s.charCodeAt(i))) i++
  if (i !== s.length) return undefined
  if (same && keys.length === lastKeys.length) return { keys: lastKeys, values }
  // A numeric-like key ("1") enumerates first in JS: not handled here (fallback); duplicates neither.
  if (new Set(keys).size !== keys.length || keys.some((k) => /^(?:0|[1-9]\d*)$/.test(k))) return undefined
  lastKeys = keys
  return { keys, values }
}

const n = 20_000
const records = Array.from({ length: n }, (_, i) => Buffer.from(JSON.stringify(wideRecord(i, i % 7 === 0 ? { note: 'é "quoted"', nested: { a: [1, 2.5, 'x'] } } : {}))))
const edge = ['{"a":1.0,"b":-0,"c":1e2,"d":"\\u00e9","e":[],"f":{}}', '{"a":12345678901234567890}', '{"a":01}', '{"a":1,"a":2}', '{"2":1,"a":2}', ' { } ']
for (const text of edge) {
  const b = Buffer.from(text)
  const s = scan(b)
  let t: unknown
  try {
    t = today(b)
  } catch {
    t = undefined
  }
  if (s !== undefined && !isDeepStrictEqual(s, t)) throw new Error(`edge ${text} differs: ${JSON.stringify(s)}`)
}
for (const b of records) if (!isDeepStrictEqual(scan(b), today(b))) throw new Error('record differs')
const time = (f: (b: Buffer) => unknown) => {
  const xs: number[] = []
  for (let k = 0; k < 5; k++) {
    const t0 = performance.now()
    for (const b of records) f(b)
    xs.push(((performance.now() - t0) * 1000) / n)
  }
  return round(median(xs), 1)
}
for (let rep = 0; rep < 2; rep++) console.log(`wide (${records[0]!.length} bytes): today ${time(today)} µs/record, scanner ${time(scan)} µs/record`)
