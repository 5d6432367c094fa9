/**
 * Before/after of lib/codec/json.ts's fast path (not a test): decode the narrow bench records
 * (full-precision doubles, as JSON.stringify writes them) with the version before the change
 * (test/bench/proto/json-before.ts, a copy) and the current one. Median of 5 passes.
 * Run: `npx tsx test/bench/json-decode.ts [records]`.
 */
import { parseJsonObject as after } from '../../lib/codec/json.js'
import { median, round } from './common.js'
import { narrowRecord } from './data.js'
import { parseJsonObject as before } from './proto/json-before.js'

const n = Number(process.argv[2] ?? 200_000)
const enc = new TextEncoder()
const values = Array.from({ length: n }, (_, i) => enc.encode(JSON.stringify(narrowRecord(i))))
const bytes = values.reduce((a, v) => a + v.length, 0)
const pass = (f: typeof after) => {
  const t0 = performance.now()
  for (const v of values) if (!f(v).ok) throw new Error('decode failed')
  return performance.now() - t0
}
pass(before)
pass(after)
const b: number[] = []
const a: number[] = []
for (let i = 0; i < 5; i++) {
  b.push(pass(before))
  a.push(pass(after))
}
const mb = bytes / 2 ** 20
console.log(JSON.stringify({ records: n, jsonMB: round(mb, 1), beforeMs: round(median(b)), afterMs: round(median(a)), beforeMBps: round(mb / (median(b) / 1000), 1), afterMBps: round(mb / (median(a) / 1000), 1), speedup: round(median(b) / median(a), 2) }))
