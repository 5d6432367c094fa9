/**
 * Evidence for a proposal to lib/writer/columnar (not a test): what building a 200-property row
 * object costs against reading the record alone or filling a positional array.
 * `npx tsx test/bench/proto/row-shape.ts`
 */
import { median, round } from '../common.js'
import { wideRecord } from '../data.js'

const records = Array.from({ length: 10_000 }, (_, i) => JSON.parse(JSON.stringify(wideRecord(i))) as Record<string, unknown>)
const names = Object.keys(records[0]!)
const n = names.length
// oxlint-disable-next-line no-new-func
const literal = new Function(`return () => ({ ${names.map((nm) => `${JSON.stringify(nm)}: null`).join(', ')} })`)() as () => Record<string, unknown>
const id = (x: unknown) => x
const time = (label: string, f: (r: Record<string, unknown>) => unknown) => {
  for (const r of records) f(r)
  const xs: number[] = []
  for (let k = 0; k < 5; k++) {
    const t0 = performance.now()
    for (const r of records) f(r)
    xs.push(performance.now() - t0)
  }
  console.log(JSON.stringify({ variant: label, records: records.length, ms: round(median(xs), 1) }))
}
time('read every field only', (v) => {
  let c = 0
  for (let i = 0; i < n; i++) if (v[names[i]!] !== undefined) c++
  return c
})
time('row = {} + 200 keyed stores (current coerce.ts)', (v) => {
  const o: Record<string, unknown> = {}
  for (let i = 0; i < n; i++) o[names[i]!] = id(v[names[i]!])
  return o
})
time('row = object-literal factory + keyed stores', (v) => {
  const o = literal()
  for (let i = 0; i < n; i++) o[names[i]!] = id(v[names[i]!])
  return o
})
time('row = positional array', (v) => {
  const o = new Array(n)
  for (let i = 0; i < n; i++) o[i] = id(v[names[i]!])
  return o
})
