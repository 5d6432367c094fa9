/**
 * Where coercion of wide (200-column) records spends its time (not a test; evidence for a
 * proposal to lib/writer/columnar). `npx tsx test/bench/proto/coerce-profile.ts`.
 */
import { inferSchema } from '../../../lib/schema/infer.js'
import { compileCoercer } from '../../../lib/writer/columnar/index.js'
import { profile } from '../profile.js'
import { wideRecord } from '../data.js'

const records = Array.from({ length: 10_000 }, (_, i) => JSON.parse(JSON.stringify(wideRecord(i))) as Record<string, unknown>)
const schema = inferSchema(records.slice(0, 1000))
const coerce = compileCoercer(schema, { table: 'proto' })
for (const r of records) coerce(r)
const [, summary] = await profile(async () => {
  for (let k = 0; k < 3; k++) for (const r of records) coerce(r)
})
console.log(JSON.stringify(summary.byFunction.slice(0, 12), null, 1))
