/**
 * CPU per record of the writer's per-record stages (event parsing, JSON decoding, record guard,
 * coercion, row estimate, Parquet encoding) over the bench's narrow (60k) and wide (6k) records,
 * best of 3, for this checkout or an older one, to compare them interleaved on a busy machine
 * (issue 20, docs/benchmarks.md):
 *
 *   mkdir -p .tmp/base && git archive <commit> lib test | tar -x -C .tmp/base && ln -s "$PWD/node_modules" .tmp/base/
 *   npx tsx test/bench/proto/stages.ts .tmp/base base; npx tsx test/bench/proto/stages.ts . new
 *
 * `base` measures the old per-record path (parseJsonObject, checkRecord, coerce without `fast`).
 */
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
const [dir = '.', mode = 'new'] = process.argv.slice(2)
const at = (p: string) => pathToFileURL(resolve(dir, p)).href
const { parseKafkaEvent } = await import(at(`lib/kafka/event.ts`))
const json = await import(at(`lib/codec/json.ts`))
const guard = await import(at(`lib/writer/guard.ts`))
const { inferSchema } = await import(at(`lib/schema/infer.ts`))
const { compileCoercer, encodeParquet } = await import(at(`lib/writer/columnar/index.ts`))
const { estimateRowBytes } = await import(at(`lib/writer/buffers.ts`))
const { loadConfig } = await import(at(`lib/config.ts`))
const { makeDataset, narrowRecord, wideRecord } = await import(at('test/bench/data.ts'))
const limits = loadConfig({}, { FLOE_WAREHOUSE: 'file:///tmp/x' }).limits
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }
for (const [name, ds] of [['narrow', makeDataset('narrow', 60000, narrowRecord)], ['wide', makeDataset('wide', 6000, (i: number) => wideRecord(i))]] as const) {
  // An older checkout's datasets hold parsed events; this one's hold their payloads (data.ts).
  const events = ds.events ?? ds.payloads.map((p: Buffer) => JSON.parse(p.toString('utf8')))
  const first = parseKafkaEvent(events[0])
  const schema = inferSchema(first.slice(0, 500).map((r: { value: Uint8Array }) => json.parseJsonObject(r.value).value))
  const coerce = compileCoercer(schema, { table: 'x', longsAsNumbers: mode !== 'base' })
  const fast = mode !== 'base'
  const best: Record<string, number> = {}
  for (let rep = 0; rep < 3; rep++) {
    const st: Record<string, number> = { parse: 0, decode: 0, guard: 0, coerce: 0, estimate: 0, encode: 0 }
    for (const event of events) {
      let t = cpu(); const records = parseKafkaEvent(event); st.parse += cpu() - t
      t = cpu(); const values = records.map((r: { value: Uint8Array }) => (fast ? json.parseJsonObjectFast(r.value) : json.parseJsonObject(r.value)).value); st.decode += cpu() - t
      t = cpu(); for (const v of values) if (fast) guard.inspectRecord(v, limits, { declared: false }); else guard.checkRecord(v, limits, { declared: false })
      st.guard += cpu() - t
      t = cpu(); const rows = values.map((v: unknown) => coerce(v, fast).row); st.coerce += cpu() - t
      t = cpu(); for (const r of rows) estimateRowBytes(r); st.estimate += cpu() - t
      t = cpu(); await encodeParquet(schema, rows, { compression: 'zstd' }); st.encode += cpu() - t
    }
    for (const k in st) best[k] = Math.min(best[k] ?? Infinity, st[k]!)
  }
  const total = Object.values(best).reduce((a, b) => a + b, 0)
  console.log(JSON.stringify({ mode, name, recordsPerCpuSec: Math.round(ds.records / (total / 1000)), ms: Object.fromEntries(Object.entries(best).map(([k, v]) => [k, Math.round(v)])) }))
}
