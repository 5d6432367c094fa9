/**
 * Before/after for the coerce.ts proposal (not a test): the current coercer vs the prototype in
 * coerce-fast.ts on the bench's narrow and wide records; checks both give equal rows.
 * `npx tsx test/bench/proto/coerce-compare.ts`
 */
import { isDeepStrictEqual } from 'node:util'
import { inferSchema } from '../../../lib/schema/infer.js'
import { compileCoercer } from '../../../lib/writer/columnar/index.js'
import { median, round } from '../common.js'
import { narrowRecord, wideRecord } from '../data.js'
import { compileCoercer as compileFast } from './coerce-fast.js'

for (const [name, n, make] of [
  ['narrow', 100_000, narrowRecord],
  ['wide', 10_000, (i: number) => wideRecord(i, i % 100 === 0 ? { extra: 'x' } : {})],
] as const) {
  const records = Array.from({ length: n }, (_, i) => JSON.parse(JSON.stringify(make(i))) as Record<string, unknown>)
  const schema = inferSchema(records.slice(1, 1000).filter((r) => !('extra' in r)))
  const before = compileCoercer(schema, { table: 'proto' })
  const after = compileFast(schema, { table: 'proto' })
  for (let i = 0; i < 200; i++) {
    const a = before(records[i])
    const b = after(records[i])
    if (!isDeepStrictEqual({ ...a.row }, { ...b.row }) || a.unknown.length !== b.unknown.length) throw new Error(`record ${i} differs`)
  }
  const time = (f: (r: unknown) => unknown) => {
    for (const r of records) f(r)
    const xs: number[] = []
    for (let k = 0; k < 5; k++) {
      const t0 = performance.now()
      for (const r of records) f(r)
      xs.push(performance.now() - t0)
    }
    return round(median(xs), 1)
  }
  const b = time(before)
  const a = time(after)
  console.log(JSON.stringify({ dataset: name, records: n, coerceBeforeMs: b, coerceAfterMs: a, speedup: round(b / a, 2) }))
}
