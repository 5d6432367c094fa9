/**
 * The floor under the writer's records per CPU-second (issue 20): what the steps Floe cannot skip
 * cost on this Node, against DuckDB's whole NDJSON → Parquet conversion of the same records,
 * interleaved, CPU of this process (`process.cpuUsage`), best of `--runs`:
 *
 *   npx tsx test/bench/proto/floor.ts [--narrow 200000] [--wide 20000] [--runs 3]
 *
 * Steps: the event's own `JSON.parse` (the Lambda runtime parses each MSK event's payload before
 * the handler runs, and the bench times it: test/bench/data.ts `eventOf`), base64 → bytes (as the
 * event hands each value over), strict UTF-8 decoding, `JSON.parse` of each record.
 * Also reports whether V8 gave the parsed record fast properties: `JSON.parse` builds an object
 * of 128 or more keys in dictionary mode, where every property read is a hash lookup.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { round } from '../common.js'
import { eventOf, makeDataset, narrowRecord, wideRecord } from '../data.js'
import { duckdbRun } from '../throughput.js'

const { values } = parseArgs({ options: { narrow: { type: 'string', default: '200000' }, wide: { type: 'string', default: '20000' }, runs: { type: 'string', default: '3' } } })
const runs = Number(values.runs)
const utf8 = new TextDecoder('utf-8', { fatal: true })

/** CPU milliseconds of `f`, best of `runs`. */
async function cpuMs(f: () => unknown): Promise<number> {
  let best = Infinity
  for (let r = 0; r < runs; r++) {
    const before = process.cpuUsage()
    await f()
    const used = process.cpuUsage(before)
    best = Math.min(best, (used.user + used.system) / 1000)
  }
  return best
}

const dir = mkdtempSync(join(tmpdir(), 'floe-floor-'))
try {
  for (const [name, count, make] of [['narrow', Number(values.narrow), narrowRecord], ['wide', Number(values.wide), (i: number) => wideRecord(i)]] as const) {
    const lines = Array.from({ length: count }, (_, i) => JSON.stringify(make(i)))
    const base64 = lines.map((l) => Buffer.from(l).toString('base64'))
    const bytes = base64.map((b) => Buffer.from(b, 'base64'))
    const texts = bytes.map((b) => utf8.decode(b))
    const ndjson = join(dir, `${name}.ndjson`)
    writeFileSync(ndjson, `${lines.join('\n')}\n`)
    // Into one reused buffer, as lib/kafka's event parsing does; results are not kept (the writer
    // holds one event's records, not a million), so the old generation does not fill up.
    const sink = Buffer.alloc(lines.reduce((m, l) => Math.max(m, l.length), 0) + 16)
    const { payloads } = makeDataset(name, count, make)
    const steps = {
      event: await cpuMs(() => {
        let n = 0
        for (const p of payloads) n += eventOf(p).bootstrapServers.length
        return n
      }),
      base64: await cpuMs(() => {
        let n = 0
        for (const b of base64) n += sink.write(b, 'base64')
        return n
      }),
      utf8: await cpuMs(() => {
        let n = 0
        for (const b of bytes) n += utf8.decode(b).length
        return n
      }),
      jsonParse: await cpuMs(() => {
        let n = 0
        for (const t of texts) if (JSON.parse(t) !== null) n++
        return n
      }),
      duckdb: await cpuMs(async () => duckdbRun(ndjson, join(dir, `${name}.parquet`))),
    }
    const floor = steps.event + steps.base64 + steps.utf8 + steps.jsonParse
    const perRecordUs = (ms: number): number => round((ms * 1000) / count, 2)
    console.log(JSON.stringify({
      dataset: name,
      records: count,
      jsonMB: round(lines.reduce((s, l) => s + l.length, 0) / 1e6, 1),
      cpuMs: Object.fromEntries(Object.entries(steps).map(([k, v]) => [k, round(v)])),
      usPerRecord: Object.fromEntries(Object.entries(steps).map(([k, v]) => [k, perRecordUs(v)])),
      fastProperties: Object.keys(JSON.parse(texts[0]!) as object).length < 128,
      // The Floe/DuckDB ratio (records per CPU-second) if every other step of the writer cost nothing.
      ceilingRatio: round(steps.duckdb / floor, 3),
      // What is left per record for guard, routing, coercion, Arrow, Parquet and registration at 0.3×.
      budgetAt03Us: perRecordUs(steps.duckdb / 0.3 - floor),
    }))
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
