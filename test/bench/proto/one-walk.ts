/**
 * Guard + coercion of wide records, this tree's (one walk: lib/writer/columnar/layout.ts) against
 * an earlier tree's, in one process, interleaved, fresh JSON.parse objects per run, best of R:
 * `git archive fcc18f3 | tar -x -C .tmp/before && ln -s "$PWD/node_modules" .tmp/before/`, then
 * `npx tsx test/bench/proto/one-walk.ts --before .tmp/before [--records 20000] [--runs 6]`.
 */
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { DEFAULT_LIMITS } from '../../../lib/config.js'
import { inferSchema, type Schema } from '../../../lib/schema/index.js'
import { compileCoercer } from '../../../lib/writer/columnar/coerce.js'
import { inspectRecord } from '../../../lib/writer/guard.js'
import { wideRecord } from '../data.js'

const { values } = parseArgs({ options: { before: { type: 'string', default: '.tmp/before' }, records: { type: 'string', default: '20000' }, runs: { type: 'string', default: '6' } } })
const n = Number(values.records)
const texts = Array.from({ length: n }, (_, i) => JSON.stringify(wideRecord(i)))
const schema: Schema = { ...inferSchema(texts.slice(0, 100).map((t) => JSON.parse(t) as Record<string, unknown>)), 'schema-id': 0 }
type Guard = typeof inspectRecord
type Compile = typeof compileCoercer
const old = {
  inspect: ((await import(resolve(values.before, 'lib/writer/guard.ts'))) as { inspectRecord: Guard }).inspectRecord,
  compile: ((await import(resolve(values.before, 'lib/writer/columnar/coerce.ts'))) as { compileCoercer: Compile }).compileCoercer,
}
const sides = [
  { inspect: old.inspect, coerce: old.compile(schema, { table: 't', longsAsNumbers: true }) },
  { inspect: inspectRecord, coerce: compileCoercer(schema, { table: 't', longsAsNumbers: true }) },
]

const cpuMs = (f: () => void): number => {
  const t0 = process.cpuUsage()
  f()
  const u = process.cpuUsage(t0)
  return (u.user + u.system) / 1000
}
const best = { guard: [Infinity, Infinity], coerce: [Infinity, Infinity] }
for (let run = 0; run < Number(values.runs); run++) {
  sides.forEach((side, i) => {
    const records = texts.map((t) => JSON.parse(t) as Record<string, unknown>)
    best.guard[i] = Math.min(best.guard[i]!, cpuMs(() => records.forEach((r) => side.inspect(r, DEFAULT_LIMITS, { declared: false }))))
    best.coerce[i] = Math.min(best.coerce[i]!, cpuMs(() => records.forEach((r) => side.coerce(r, true))))
  })
}
const us = (ms: number) => ((ms * 1000) / n).toFixed(1)
console.log(`${n} wide records, µs/record (best of ${values.runs}): before | this tree`)
for (const stage of ['guard', 'coerce'] as const) console.log(`  ${stage.padEnd(8)} ${us(best[stage][0]!).padStart(6)} | ${us(best[stage][1]!)}`)
console.log(`  together ${us(best.guard[0]! + best.coerce[0]!).padStart(6)} | ${us(best.guard[1]! + best.coerce[1]!)}`)
