/**
 * The JSON scanner (lib/writer/columnar/scan.ts) against the present path it stands in for:
 * strict UTF-8 + JSON.parse (the exact decoding where the writer takes it), the guard, the
 * compiled coercer, then compileArrowBuilder and parquet-wasm. A record the scanner takes must be
 * one the present path stores as a row, without unknown fields; the records it takes must make
 * the same Parquet bytes and Iceberg metrics. Records are written the way producers write them
 * and the ways they should not: number literals JSON.stringify never prints, escapes, raw
 * Unicode, whitespace, keys out of order, unknown and repeated keys, truncation, bad UTF-8.
 */
import * as fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { DEFAULT_LIMITS } from '../../../lib/config.js'
import { parseJsonObject, parseJsonObjectFast } from '../../../lib/codec/index.js'
import type { StructType } from '../../../lib/schema/index.js'
import { compileCoercer, compileScanner, compileTableScanner, encodeBuilt, encodeParquet, type KafkaMeta, type Row, type Scanner } from '../../../lib/writer/columnar/index.js'
import { keepLayout } from '../../../lib/writer/columnar/layout.js'
import { inspectRecord } from '../../../lib/writer/guard.js'
import { narrowRecord } from '../../bench/data.js'

const list = (id: number, element: string, required = false) => ({ type: 'list' as const, 'element-id': id, element, 'element-required': required })

const SCHEMA: StructType = {
  type: 'struct',
  fields: [
    { id: 1, name: 'b', required: false, type: 'boolean' },
    { id: 2, name: 'i', required: false, type: 'int' },
    { id: 3, name: 'l', required: false, type: 'long' },
    { id: 4, name: 'f', required: false, type: 'float' },
    { id: 5, name: 'd', required: false, type: 'double' },
    { id: 6, name: 's', required: false, type: 'string' },
    { id: 7, name: 'dt', required: false, type: 'date' },
    { id: 8, name: 'tz', required: false, type: 'timestamptz' },
    { id: 9, name: 'ts', required: false, type: 'timestamp' },
    {
      id: 10,
      name: 'st',
      required: false,
      type: { type: 'struct', fields: [{ id: 11, name: 'x', required: false, type: 'long' }, { id: 12, name: 'y', required: true, type: 'string' }, { id: 13, name: 'z', required: false, type: list(14, 'double') }] },
    },
    { id: 15, name: 'ls', required: false, type: list(16, 'string') },
    { id: 17, name: 'lr', required: false, type: list(18, 'long', true) },
    { id: 19, name: 'req', required: true, type: 'long' },
    { id: 20, name: 'día ✓', required: false, type: 'string' },
  ],
}

/** A number written as this exact literal. */
class Lit {
  constructor(readonly text: string) {}
}

/** JSON text of `v`, with Lits as they are, strings escaped at random (`escapes`: a choice per character), optional whitespace. */
function write(v: unknown, escapes: () => boolean, space: string): string {
  if (v instanceof Lit) return v.text
  if (typeof v === 'string') return writeString(v, escapes)
  if (Array.isArray(v)) return `[${space}${v.map((e) => write(e, escapes, space)).join(`,${space}`)}${space}]`
  if (v !== null && typeof v === 'object') {
    const parts = Object.entries(v).map(([k, e]) => `${writeString(k, () => false)}${space}:${space}${write(e, escapes, space)}`)
    return `{${space}${parts.join(`,${space}`)}${space}}`
  }
  return JSON.stringify(v) ?? 'null'
}

function writeString(s: string, escapes: () => boolean): string {
  let out = '"'
  for (const ch of s) {
    const json = JSON.stringify(ch).slice(1, -1)
    if (json.length > ch.length || !escapes()) out += json
    else out += [...ch].map((c) => (c.codePointAt(0)! > 0xffff ? ch : `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`)).join('')
  }
  return `${out}"`
}

const NUMBER_LITS = [
  '0', '-0', '1', '-1', '1.0', '-0.0', '0.1', '0.5', '1.5', '1e2', '1E-7', '2.5e+3', '1e400', '-1e400', '1e-400', '0.30000000000000004',
  '123456789012345', '1234567890123456', '9007199254740992', '9007199254740993', '-9223372036854775808', '12345678901234567890',
  '2147483647', '2147483648', '-2147483648', '-2147483649', '3.4028234663852886e38', '16777217', '0.25', '1714557600000', '01', '1.', '.5', '+1', '-',
  '-01', '00', '1e', '1e+', '0x10', '1_000', 'NaN', 'Infinity', '9007199254740993.0', '9.007199254740993e15', '1.5e300', '123456789012345.6', '0.1234567890123456789',
  '9223372036854775807', '9223372036854775808', '-9223372036854775809', '1234567890123456789', '-1234567890123456789', '4294967296', '-4294967297', '1.4e-45', '3.4e38',
]
const numberLits = fc.constantFrom(...NUMBER_LITS)
const numbers = fc.oneof(
  fc.integer({ min: -1e6, max: 1e6 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.float({ noNaN: true, noDefaultInfinity: true }).map((x) => x),
  fc.maxSafeInteger(),
  numberLits.map((t) => new Lit(t)),
)
const anyString = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), fc.constantFrom('', 'München', '😀', '\u0000', '"\\/', 'ab\ud800'))
const temporal = fc.oneof(
  fc.date({ min: new Date(-2e13), max: new Date(1e13), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
  fc.constantFrom(
    '2024-05-01T10:00:00Z', '2024-05-01 10:00:00.123456z', '2024-05-01T10:00:00.123456789Z', '2024-05-01T10:00:00.1234567Z', '2024-05-01T10:00:00+02:00',
    '2024-02-30T00:00:00Z', '2023-02-29', '2024-02-29', '2300-01-01T00:00:00Z', '1600-01-01T00:00:00Z', '2024-05-01T10:00Z', '+002024-05-01', '2024-05-01T25:00:00Z',
  ),
  numbers,
)
const scalar = fc.oneof(numbers, anyString, fc.boolean(), fc.constant(null), temporal, fc.constantFrom('true', 'false', '12'))
const anyValue = fc.oneof({ weight: 4, arbitrary: scalar }, { weight: 1, arbitrary: fc.array(scalar, { maxLength: 4 }) }, { weight: 1, arbitrary: fc.dictionary(fc.constantFrom('x', 'y', 'z', 'w'), fc.oneof(scalar, fc.array(numbers, { maxLength: 3 }))) })

/** Per field, mostly a value of its type (so most records are clean), sometimes anything. */
const typed: Record<string, fc.Arbitrary<unknown>> = {
  b: fc.boolean(),
  i: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
  l: fc.oneof(fc.maxSafeInteger(), fc.integer({ min: -1000, max: 1000 })),
  f: fc.float({ noNaN: true, noDefaultInfinity: true }),
  d: fc.double({ noNaN: true, noDefaultInfinity: true }),
  s: anyString,
  dt: fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
  tz: fc.date({ min: new Date(-9e12), max: new Date(8e12), noInvalidDate: true }).map((d) => d.toISOString()),
  ts: fc.oneof(fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toISOString()), fc.integer({ min: 0, max: 2e12 })),
  st: fc.oneof(fc.constant(null), fc.record({ x: fc.maxSafeInteger(), y: anyString, z: fc.oneof(fc.constant(null), fc.array(fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(null)), { maxLength: 3 })) }, { requiredKeys: ['y'] })),
  ls: fc.oneof(fc.constant(null), fc.array(fc.oneof(anyString, fc.constant(null)), { maxLength: 4 })),
  lr: fc.array(fc.integer(), { maxLength: 4 }),
  req: fc.maxSafeInteger(),
  'día ✓': anyString,
}

/** A record of well-typed fields, some fields (often none) replaced by anything. */
const record = fc
  .tuple(fc.record(typed, { requiredKeys: ['req'] }), fc.array(fc.tuple(fc.constantFrom(...Object.keys(typed)), anyValue), { maxLength: 2 }))
  .map(([r, odd]) => ({ ...r, ...Object.fromEntries(odd) }))

/** A record's text as a producer may send it. */
const textOf = (records: fc.Arbitrary<Record<string, unknown>>) => fc
  .tuple(
    records,
    fc.boolean(),
    fc.constantFrom('', '', '', ' ', '\n\t'),
    fc.infiniteStream(fc.boolean()),
    fc.constantFrom('none', 'none', 'none', 'none', 'none', 'none', 'none', 'none', 'shuffle', 'unknown', 'repeat', 'truncate', 'trail', 'badutf8', 'empty', 'comma'),
    fc.integer({ min: 0, max: 1000 }),
  )
  .map(([r, escape, space, coins, mutation, at]) => {
    const coin = coins[Symbol.iterator]()
    const entries = Object.entries(r)
    const obj = Object.fromEntries(mutation === 'shuffle' ? entries.reverse() : mutation === 'unknown' ? [...entries, ['extra', 1]] : mutation === 'repeat' && entries.length ? [...entries, entries[0]!] : entries)
    let s = mutation === 'repeat' && entries.length ? write(obj, () => false, space).replace(/}$/, `,${writeString(entries[0]![0], () => false)}:${write(entries[0]![1], () => false, '')}}`) : write(obj, () => escape && coin.next().value, space)
    if (mutation === 'truncate') s = s.slice(0, at % Math.max(1, s.length))
    if (mutation === 'trail') s += at % 2 ? ' x' : ' '
    // A comma with no key after it, at the end or doubled: JSON.parse refuses both.
    if (mutation === 'comma') s = at % 2 ? s.replace(/}$/, ',}') : s.replace(',', ',,')
    if (mutation === 'empty') s = at % 2 ? '' : '[]'
    const bytes = Buffer.from(s)
    if (mutation === 'badutf8' && bytes.length > 0) bytes[at % bytes.length] = 0xff
    return bytes
  })

const text = textOf(record)

/** The same schema with 30 longs before its fields: wider than one generated function reads (scan-code.ts), `st` in a later run. */
const PADDING = Array.from({ length: 30 }, (_, k) => `p${String(k).padStart(2, '0')}`)
const wideSchema: StructType = { type: 'struct', fields: [...PADDING.map((name, k) => ({ id: 100 + k, name, required: false, type: 'long' as const })), ...SCHEMA.fields] }
const wideText = textOf(
  fc.tuple(fc.record(Object.fromEntries(PADDING.map((p) => [p, fc.oneof(fc.integer(), fc.constant(null))])), { requiredKeys: [] }), record).map(([p, r]) => ({ ...p, ...r })),
)

const limits = DEFAULT_LIMITS

/** The writer's present path for one record: its coerced row, or undefined (a dead letter, or unknown fields: evolution's). */
function present(bytes: Uint8Array, coerce: ReturnType<typeof compileCoercer>): Row | undefined {
  const r = parseJsonObjectFast(bytes)
  if (!r.ok) return undefined
  if ('values' in r) keepLayout(r.value, r.keys, r.values)
  let value = r.value
  let fast = true
  let inspected = inspectRecord(value, limits, { declared: false })
  const exact = () => {
    const e = parseJsonObject(bytes)
    return e.ok ? e.value : undefined
  }
  if (inspected.problem !== undefined || inspected.unsafeInteger) {
    const e = exact()
    if (e === undefined) return undefined
    value = e
    fast = false
    inspected = inspectRecord(value, limits, { declared: false })
  }
  if (inspected.problem !== undefined) return undefined
  let coerced
  try {
    coerced = coerce(value, fast)
  } catch {
    if (!fast) return undefined
    try {
      coerced = coerce(exact(), false)
    } catch {
      return undefined
    }
  }
  return coerced.unknown.length > 0 ? undefined : coerced.row
}

async function compare(records: Uint8Array[], properties: Record<string, string> = {}, schema = SCHEMA) {
  const scanner = compileTableScanner(schema, properties, limits)!
  const coerce = compileCoercer(schema, { table: 'db.t', longsAsNumbers: true })
  const rows: Row[] = []
  let taken = 0
  for (const bytes of records) {
    if (!scanner.add(bytes)) continue
    taken++
    const row = present(bytes, coerce)
    if (row === undefined) throw new Error(`the scanner took a record the present path does not store as a row: ${Buffer.from(bytes).toString()}`)
    rows.push(row)
  }
  expect(scanner.rows).toBe(taken)
  const a = await encodeParquet(schema, rows, { properties })
  const b = await encodeBuilt(schema, scanner.build(), { properties })
  expect(b.recordCount).toBe(rows.length)
  expect(b.metrics).toEqual(a.metrics)
  expect(Buffer.compare(Buffer.from(a.bytes), Buffer.from(b.bytes))).toBe(0)
  return { taken, rows }
}

/** compare() over batches of generated record texts: the share of records the scanner took. */
async function takenShare(texts: fc.Arbitrary<Uint8Array>, schema: StructType, maxLength: number, numRuns: number): Promise<number> {
  let taken = 0
  let seen = 0
  await fc.assert(
    fc.asyncProperty(fc.array(texts, { minLength: 1, maxLength }), async (records) => {
      seen += records.length
      taken += (await compare(records, {}, schema)).taken
    }),
    { numRuns },
  )
  return taken / seen
}

describe('JSON scanner', () => {
  it('takes only records the present path stores as rows, and writes the same Parquet and metrics for them', async () => {
    // Not vacuous: hundreds of records of every shape are taken (most generated ones are hostile
    // somewhere — escaped timestamps, lone surrogates, keys out of order — and rightly given up).
    expect(await takenShare(text, SCHEMA, 40, 300)).toBeGreaterThan(0.05)
  })

  it('reads a struct wider than one generated function the same way', async () => {
    expect(await takenShare(wideText, wideSchema, 30, 150)).toBeGreaterThan(0.05)
  })

  it('takes every well-typed record written by JSON.stringify, and the bench records', async () => {
    const clean = fc.sample(fc.record(typed, { requiredKeys: ['req', 'lr'] }), { numRuns: 300, seed: 7 })
    const stringified = clean.filter((r) => typeof r.s !== 'string' || !/\p{Cs}/u.test(r.s)).map((r) => Buffer.from(JSON.stringify(r)))
    const { taken } = await compare(stringified)
    // Only lone surrogates (fc.string({unit:'binary'})) and values outside the exact ranges are refused.
    expect(taken / stringified.length).toBeGreaterThan(0.8)
  })

  it('reads every edge literal as the present path does, or gives it up', async () => {
    const temporals = ['"2024-05-01T10:00:00Z"', '"2024-05-01 10:00:00.123456z"', '"2024-05-01T10:00:00.123456789Z"', '"2024-05-01T10:00:00.1234567Z"', '"2024-05-01T10:00:00.1234560Z"', '"2024-05-01T10:00:00+02:00"', '"2024-05-01T10:00:00-00:30"', '"2024-02-30T00:00:00Z"', '"2023-02-29"', '"2024-02-29"', '"2300-01-01T00:00:00Z"', '"1600-01-01T00:00:00Z"', '"2024-05-01T10:00Z"', '"+002024-05-01"', '"2024-05-01T25:00:00Z"', '"2024-05-01"', '"2024-13-01"', '"2024-05-01T10:00:00.Z"', '"2024-05-01T10:00:00Z "', '" 2024-05-01"', '"1970-01-01T00:00:00Z"', '"1969-12-31T23:59:59.999999Z"', '"2024-05-01T10:00:00\\u005a"']
    // Raw string bodies (between the quotes), as bytes: control characters, DEL, malformed UTF-8, escapes good and bad.
    const bodies: number[][] = [
      [0x61], [0x00], [0x1f], [0x7f], [0x09], [0xc3, 0xa9], [0xc0, 0x80], [0xc3], [0xed, 0xa0, 0x80], [0xed, 0x9f, 0xbf], [0xf0, 0x9f, 0x98, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xf5, 0x80, 0x80, 0x80], [0xe0, 0x80, 0x80], [0xff],
      ...['\\n', '\\u0041', '\\u00e9', '\\ud83d\\ude00', '\\ud83d', '\\ude00', '\\ud83d\\u0041', '\\x41', '\\u12', '\\/', '\\"', '\\u0000', '\\uD83D\\uDE00'].map((e) => [...Buffer.from(e)]),
    ]
    const strings = bodies.map((b) => Buffer.concat([Buffer.from('"'), Buffer.from(b), Buffer.from('"')]).toString('latin1'))
    const texts: Buffer[] = []
    const add = (field: string, literal: string) => {
      const l = Buffer.from(literal, 'latin1')
      const body = field === 'día ✓' ? [Buffer.from('{"req":1,"día ✓":'), l, Buffer.from('}')] : [Buffer.from(`{"${field}":`), l, Buffer.from(',"req":1}')]
      texts.push(Buffer.concat(body))
    }
    for (const field of ['i', 'l', 'f', 'd', 'dt', 'tz', 'ts']) for (const lit of [...NUMBER_LITS, ...temporals.map((t) => Buffer.from(t).toString('latin1'))]) add(field, lit)
    for (const lit of strings) {
      add('s', lit)
      add('día ✓', lit)
      add('ls', `[${lit}]`)
      add('st', `{"y":${lit}}`)
    }
    for (const lit of ['true', 'false', 'null', '"true"', '1', 'tru', 'falsey']) add('b', lit)
    const { taken } = await compare(texts)
    expect(taken).toBeGreaterThan(texts.length / 4)
  })

  it('keeps -0 as the lower bound and 0 as the upper, in either order', async () => {
    for (const zeros of [['0', '-0'], ['-0', '0'], ['-0.0', '0.0', '-0']]) {
      for (const field of ['d', 'f']) {
        const { taken } = await compare(zeros.map((z) => Buffer.from(`{"${field}":${z},"req":1}`)))
        expect(taken).toBe(zeros.length)
      }
    }
  })

  it('rolls a given-up record back completely, wherever it stops', async () => {
    const good = Buffer.from(JSON.stringify({ s: 'a', st: { x: 1, y: 'y', z: [1.5, null] }, ls: ['p', null, 'q'], lr: [1, 2], req: 7 }))
    const records = [good]
    // Every prefix of a record fails somewhere else; between good ones each must leave nothing behind.
    for (let cut = 1; cut < good.length; cut++) records.push(good.subarray(0, cut), good)
    const { taken, rows } = await compare(records)
    expect(taken).toBe(good.length)
    expect(rows.every((r) => r.s === 'a')).toBe(true)
  })

  it('is not compiled for types it does not read, nor past the record limits', () => {
    const one = (type: StructType['fields'][number]['type']): StructType => ({ type: 'struct', fields: [{ id: 1, name: 'a', required: false, type }] })
    expect(compileTableScanner(one('decimal(9, 2)'), {}, limits)).toBeUndefined()
    expect(compileTableScanner(one('uuid'), {}, limits)).toBeUndefined()
    expect(compileTableScanner(one({ type: 'map', 'key-id': 2, key: 'string', 'value-id': 3, value: 'long', 'value-required': false }), {}, limits)).toBeUndefined()
    expect(compileTableScanner(one({ type: 'struct', fields: [] }), {}, limits)).toBeUndefined()
    // A v3 write-default fills an absent field: the present path's job, at any depth.
    expect(compileTableScanner({ type: 'struct', fields: [{ id: 1, name: 'a', required: false, type: 'string', 'write-default': 'eu' }] }, {}, limits)).toBeUndefined()
    expect(compileTableScanner(one({ type: 'struct', fields: [{ id: 2, name: 'b', required: false, type: 'long', 'write-default': 7 }] }), {}, limits)).toBeUndefined()
    expect(compileTableScanner(one('long'), {}, { ...limits, maxFieldNameLength: 0 })).toBeUndefined()
    expect(compileTableScanner(one('long'), {}, { ...limits, maxDepth: 1 })).toBeUndefined()
    expect(compileTableScanner(one('long'), {}, limits)).toBeDefined()
  })

  it('writes the bench records as the present path does', async () => {
    const records = Array.from({ length: 3000 }, (_, i) => Buffer.from(JSON.stringify(narrowRecord(i))))
    const narrow: StructType = {
      type: 'struct',
      fields: [
        { id: 1, name: 'id', required: false, type: 'long' },
        { id: 2, name: 'user_id', required: false, type: 'long' },
        { id: 3, name: 'ts', required: false, type: 'timestamptz' },
        { id: 4, name: 'amount', required: false, type: 'double' },
        { id: 5, name: 'score', required: false, type: 'double' },
        { id: 6, name: 'ok', required: false, type: 'boolean' },
        { id: 7, name: 'city', required: false, type: 'string' },
        { id: 8, name: 'session', required: false, type: 'string' },
        { id: 9, name: 'tags', required: false, type: list(10, 'string') },
        { id: 11, name: 'device', required: false, type: { type: 'struct', fields: [{ id: 12, name: 'os', required: false, type: 'string' }, { id: 13, name: 'version', required: false, type: 'string' }] } },
      ],
    }
    const scanner = compileTableScanner(narrow, {}, limits)!
    expect(records.every((r) => scanner.add(r))).toBe(true)
    const coerce = compileCoercer(narrow, { table: 'db.t', longsAsNumbers: true })
    const a = await encodeParquet(narrow, records.map((r) => present(r, coerce)!))
    const built = scanner.build()
    // The dictionary choice is the builder's: city (8 values) is a dictionary column, session is not.
    expect(built.dictionary).toEqual(['city'])
    const b = await encodeBuilt(narrow, built)
    expect(b.metrics).toEqual(a.metrics)
    expect(Buffer.compare(Buffer.from(a.bytes), Buffer.from(b.bytes))).toBe(0)
    expect(scanner.rows).toBe(0)
  })
})

describe('Scanner.select', () => {
  /** `rows` of `scanner` (whose rows are `taken`, in order) against a scanner of the same schema that read just those records in that order. */
  async function sameAsScannedAlone(schema: StructType, scanner: Scanner, taken: { bytes: Uint8Array; meta?: KafkaMeta }[], rows: Int32Array, kafka?: string) {
    const alone = compileTableScanner(schema, {}, limits, kafka)!
    for (const r of rows) expect(alone.add(taken[r]!.bytes, taken[r]!.meta)).toBe(true)
    const expected = alone.build()
    const selected = scanner.select(rows)
    expect(selected.dictionary).toEqual(expected.dictionary)
    const [a, b] = [await encodeBuilt(schema, expected), await encodeBuilt(schema, selected)]
    expect(b.recordCount).toBe(rows.length)
    expect(b.metrics).toEqual(a.metrics)
    expect(Buffer.compare(Buffer.from(a.bytes), Buffer.from(b.bytes))).toBe(0)
  }

  it('gives any of the rows, in any order, as the scanner gives those records read alone, and keeps every row', async () => {
    let selected = 0
    await fc.assert(
      // Hostile texts (most given up) among well-typed ones written by JSON.stringify (most taken).
      fc.asyncProperty(fc.array(fc.oneof(text, fc.record(typed, { requiredKeys: ['req', 'lr'] }).map((r) => Buffer.from(JSON.stringify(r)))), { minLength: 1, maxLength: 40 }), fc.array(fc.nat(), { maxLength: 60 }), async (records, picks) => {
        const scanner = compileTableScanner(SCHEMA, {}, limits)!
        const taken = records.filter((bytes) => scanner.add(bytes)).map((bytes) => ({ bytes }))
        if (taken.length === 0) return
        // Distinct rows in the order picked: a split's file is any subset of rows, in batch order or not.
        const rows = Int32Array.from(new Set(picks.map((p) => p % taken.length)))
        await sameAsScannedAlone(SCHEMA, scanner, taken, rows)
        selected += rows.length
        expect(scanner.rows).toBe(taken.length)
        // The scanner still builds every row it read.
        await sameAsScannedAlone(SCHEMA, scanner, taken, Int32Array.from(taken.keys()))
      }),
      { numRuns: 200 },
    )
    expect(selected).toBeGreaterThan(200)
  })

  it('splits the bench records by city, with their _kafka metadata, as each city\'s records read alone', async () => {
    const schema: StructType = {
      type: 'struct',
      fields: [
        { id: 1, name: 'id', required: false, type: 'long' },
        { id: 2, name: 'ts', required: false, type: 'timestamptz' },
        { id: 3, name: 'score', required: false, type: 'double' },
        { id: 4, name: 'ok', required: false, type: 'boolean' },
        { id: 5, name: 'city', required: false, type: 'string' },
        { id: 6, name: 'tags', required: false, type: list(7, 'string') },
        { id: 8, name: 'device', required: false, type: { type: 'struct', fields: [{ id: 9, name: 'os', required: false, type: 'string' }, { id: 10, name: 'version', required: false, type: 'string' }] } },
        {
          id: 11,
          name: '_kafka',
          required: false,
          type: {
            type: 'struct',
            fields: [
              { id: 12, name: 'topic', required: false, type: 'string' },
              { id: 13, name: 'partition', required: false, type: 'int' },
              { id: 14, name: 'offset', required: false, type: 'long' },
              { id: 15, name: 'timestamp', required: false, type: 'timestamptz' },
            ],
          },
        },
      ],
    }
    const scanner = compileTableScanner(schema, {}, limits, '_kafka')!
    const taken = Array.from({ length: 2000 }, (_, i) => {
      const { id, ts, score, ok, city, tags, device } = narrowRecord(i)
      // Offsets past 2^53 too: the metadata's longs are copied as words.
      const meta: KafkaMeta = { topic: `t${i % 3}`, partition: i % 4, offset: i % 5 === 0 ? 2n ** 60n + BigInt(i) : i, timestamp: 1_714_557_600_000 + i }
      return { bytes: Buffer.from(JSON.stringify({ id, ts, score, ok, city, tags, device })), meta }
    })
    for (const t of taken) expect(scanner.add(t.bytes, t.meta)).toBe(true)
    const byCity = new Map<string, number[]>()
    taken.forEach((_, i) => byCity.set(narrowRecord(i).city as string, [...(byCity.get(narrowRecord(i).city as string) ?? []), i]))
    expect(byCity.size).toBe(8)
    for (const rows of byCity.values()) await sameAsScannedAlone(schema, scanner, taken, Int32Array.from(rows), '_kafka')
    expect(scanner.rows).toBe(taken.length)
  })
})


describe('Scanner.truncate', () => {
  it("undoes a row completely: an inferred scanner forgets the keys first seen in it (keysInOrder)", () => {
    const schema: StructType = { type: 'struct', fields: ['a', 'b', 'c'].map((name, k) => ({ id: k + 1, name, required: false, type: 'long' as const })) }
    const scanner = compileScanner(schema, limits, { inferred: true })!
    const add = (v: object) => expect(scanner.add(Buffer.from(JSON.stringify(v)))).toBe(true)
    for (let i = 0; i < 5; i++) add({ a: i })
    add({ a: 5, b: 5, c: 5 })
    scanner.truncate(scanner.rows - 1)
    // c first comes in row 5, b in row 6: inference over these rows orders the fields a, c, b.
    add({ a: 5, c: 5 })
    add({ a: 6, b: 6 })
    expect(scanner.rows).toBe(7)
    expect(scanner.keysInOrder()).toBe(false)
    // Rows dropped down to the ones with a alone: b and c are not seen at all.
    scanner.truncate(5)
    expect(scanner.keysInOrder()).toBe(false)
    add({ a: 5, b: 5 })
    add({ a: 6, b: 6, c: 6 })
    expect(scanner.keysInOrder()).toBe(true)
  })
})

describe('Scanner.bytes', () => {
  /** A taken record's list elements and its strings' UTF-8 bytes, counted from its JSON.parse value (SCHEMA's lists: st.z, ls, lr). */
  function counted(bytes: Uint8Array): { elements: number; strings: number } {
    const v = JSON.parse(Buffer.from(bytes).toString()) as Record<string, unknown>
    const st = v.st as { y: string; z?: unknown[] | null } | null | undefined
    const lists = [st?.z, v.ls, v.lr].filter(Array.isArray) as unknown[][]
    const texts = [v.s, st?.y, ...((v.ls as unknown[] | null | undefined) ?? []), v['día ✓']].filter((t) => typeof t === 'string') as string[]
    return { elements: lists.reduce((n, l) => n + l.length, 0), strings: texts.reduce((n, t) => n + Buffer.byteLength(t), 0) }
  }

  it("is what each row takes in the columns — rowBytes, its strings' bytes, 8 a list element — and covers the Arrow data built", async () => {
    let checked = 0
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(text, fc.record(typed, { requiredKeys: ['req', 'lr'] }).map((r) => Buffer.from(JSON.stringify(r)))), { minLength: 1, maxLength: 40 }), fc.infiniteStream(fc.boolean()), async (records, coins) => {
        const scanner = compileTableScanner(SCHEMA, {}, limits)!
        const coin = coins[Symbol.iterator]()
        for (const bytes of records) {
          const [before, elements] = [scanner.bytes, scanner.elements]
          // A record given up leaves nothing behind.
          const taken = scanner.add(bytes)
          const c = taken ? counted(bytes) : { elements: 0, strings: 0 }
          expect(scanner.elements - elements).toBe(c.elements)
          expect(scanner.bytes - before).toBe(taken ? scanner.rowBytes + c.strings + 8 * c.elements : 0)
          if (taken) checked++
          // A row dropped (the lane's rollback when it does not fit) gives back all it took.
          const drop = taken && coin.next().value
          if (drop) scanner.truncate(scanner.rows - 1)
          expect(drop ? [scanner.bytes, scanner.elements] : [before, elements]).toEqual([before, elements])
        }
        const held = scanner.bytes
        const { table } = scanner.build()
        expect(table.data.reduce((n, d) => n + d.byteLength, 0)).toBeLessThanOrEqual(held + 64)
      }),
      { numRuns: 200 },
    )
    expect(checked).toBeGreaterThan(500)
  })
})

describe('Scanner.bytes with a _kafka column', () => {
  it("counts the topic's bytes the column holds for every row, and an inferred scanner's strings", () => {
    const kafka: StructType = {
      type: 'struct',
      fields: [
        { id: 1, name: 's', required: false, type: 'string' },
        { id: 2, name: 'l', required: false, type: list(3, 'long') },
        { id: 4, name: '_kafka', required: false, type: { type: 'struct', fields: [{ id: 5, name: 'topic', required: false, type: 'string' }, { id: 6, name: 'offset', required: false, type: 'long' }] } },
      ],
    }
    const scanner = compileTableScanner(kafka, {}, limits, '_kafka')!
    const meta = { topic: 'orders-eu', partition: 3, offset: 7, timestamp: 1_714_557_600_000 }
    expect(scanner.add(Buffer.from('{"s":"héllo","l":[1,2,3]}'), meta)).toBe(true)
    // 4 leaves (s, l's element, topic, offset): 32 bytes; "héllo" 6 bytes, the topic 9, 3 elements 24.
    expect([scanner.bytes, scanner.elements]).toEqual([32 + 6 + 9 + 24, 3])
    const inferred = compileScanner({ type: 'struct', fields: kafka.fields.slice(0, 2) }, limits, { inferred: true })!
    expect(inferred.add(Buffer.from('{"s":"héllo","l":[1,2,3]}'))).toBe(true)
    expect([inferred.bytes, inferred.elements]).toEqual([16 + 6 + 24, 3])
  })
})
