/**
 * The byte scanner (lib/writer/columnar/scan.ts) against Floe's present stages for the same bytes: same values,
 * CPU per record of each, best of `--runs`, in event-sized chunks:
 *
 *   npx tsx test/bench/proto/scan.ts [--records 200000] [--chunk 13830] [--runs 5]
 */
import { parseArgs } from 'node:util'
import type * as arrow from 'apache-arrow'
import { inferSchema } from '../../../lib/schema/index.js'
import { DEFAULT_LIMITS } from '../../../lib/config.js'
import { compileArrowBuilder, compileCoercer, compileScanner } from '../../../lib/writer/columnar/index.js'
import { narrowRecord } from '../data.js'

const { values: args } = parseArgs({ options: { records: { type: 'string', default: '200000' }, chunk: { type: 'string', default: '13830' }, runs: { type: 'string', default: '5' } } })

function cpuMs(f: () => void, runs: number): number {
  let best = Infinity
  for (let r = 0; r < runs; r++) {
    const before = process.cpuUsage()
    f()
    const used = process.cpuUsage(before)
    best = Math.min(best, (used.user + used.system) / 1000)
  }
  return best
}

const count = Number(args.records)
const chunk = Number(args.chunk)
const runs = Number(args.runs)
const records = Array.from({ length: count }, (_, i) => narrowRecord(i))
const schema = inferSchema(records.slice(0, 1000))
const bytes = records.map((r) => Buffer.from(JSON.stringify(r)))
const chunks = Array.from({ length: Math.ceil(count / chunk) }, (_, c) => bytes.slice(c * chunk, (c + 1) * chunk))

const utf8 = new TextDecoder('utf-8', { fatal: true })
const coerce = compileCoercer(schema, { table: 'bench.scan' })
const build = compileArrowBuilder(schema)
const now = (part: readonly Uint8Array[]): arrow.Table => build(part.map((b) => coerce(JSON.parse(utf8.decode(b)) as unknown).row)).table
const scanner = compileScanner(schema, DEFAULT_LIMITS)!
const scan = (part: readonly Uint8Array[]): arrow.Table => {
  for (const b of part) if (!scanner.add(b)) throw new Error(`the scanner gave up ${Buffer.from(b).toString()}`)
  return scanner.build().table
}

// Same values: every column of every chunk (bigints as text).
const valuesText = (t: arrow.Table): string => JSON.stringify(t.toArray(), (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))
for (const part of chunks) {
  if (valuesText(scan(part)) !== valuesText(now(part))) throw new Error('the scanner and the present path built different tables')
}

const nowMs = cpuMs(() => chunks.forEach(now), runs)
const scanMs = cpuMs(() => chunks.forEach(scan), runs)
const us = (ms: number): number => Math.round((ms * 1000 * 100) / count) / 100
console.log(JSON.stringify({ records: count, chunk, sameValues: true, cpuMs: { now: Math.round(nowMs), scan: Math.round(scanMs) }, usPerRecord: { now: us(nowMs), scan: us(scanMs) }, speedup: Math.round((nowMs / scanMs) * 100) / 100 }))
