/**
 * µs per record of event parsing, JSON decoding and the record guard over 60k narrow records,
 * best of N, for this checkout or an older one (issue 20, docs/benchmarks.md):
 *   node --import tsx test/bench/proto/per-record.ts [dir] [reps]
 */
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
const [dir = '.', repsArg = '5'] = process.argv.slice(2)
const at = (p: string) => pathToFileURL(resolve(dir, p)).href
const { parseKafkaEvent } = await import(at(`lib/kafka/event.ts`))
const json = await import(at(`lib/codec/json.ts`))
const guard = await import(at(`lib/writer/guard.ts`))
const { loadConfig } = await import(at(`lib/config.ts`))
const { makeDataset, narrowRecord } = await import(at('test/bench/data.ts'))
const limits = loadConfig({}, { FLOE_WAREHOUSE: 'file:///tmp/x' }).limits
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }
const ds = makeDataset('narrow', 60000, narrowRecord, { partitions: 4 })
const events = ds.payloads.map((p: Buffer) => JSON.parse(p.toString('utf8')))
const reps = Number(repsArg)
const best: Record<string, number> = {}
for (let rep = 0; rep < reps; rep++) {
  const st: Record<string, number> = { parse: 0, decode: 0, guard: 0 }
  for (const event of events) {
    let t = cpu(); const records = parseKafkaEvent(event); st.parse += cpu() - t
    t = cpu(); const values = records.map((r: { value: Uint8Array }) => json.parseJsonObjectFast(r.value).value); st.decode += cpu() - t
    t = cpu(); for (const v of values) guard.inspectRecord(v, limits, { declared: false }); st.guard += cpu() - t
  }
  for (const k in st) best[k] = Math.min(best[k] ?? Infinity, st[k]!)
}
console.log(dir, JSON.stringify(Object.fromEntries(Object.entries(best).map(([k, v]) => [k, +(v * 1000 / 60000).toFixed(3)]))))
