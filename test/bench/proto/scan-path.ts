/**
 * What a writer built on the byte scanner (lib/writer/columnar/scan.ts) could reach at best (issue 20, narrow):
 * the steps from an MSK event to a Parquet file's bytes and metrics composed, nothing else — no
 * routing, checkpoints, S3 or DynamoDB — against DuckDB's NDJSON → Parquet of the same
 * records and, for scale, the same composition with Floe's present stages and the real writer
 * (writeBatch against DynamoDB Local and s3rver, as the bench's throughput section runs it).
 * Interleaved, CPU of this process, best of `--runs`:
 *
 *   npx tsx test/bench/proto/scan-path.ts [--records 200000] [--runs 3] [--real true] [--profile true]
 *     [--allocations true]
 *
 * `--profile true` then profiles one pass of `present` and one of the real writer and lists the
 * functions by how much more self time the writer spends in them: where the writer's time
 * beyond its own stages goes. `--allocations true` does the same with bytes allocated per record
 * (allocations.ts).
 *
 * Per event, both compositions: the runtime's `JSON.parse` of the event (data.ts `eventOf`),
 * every value's base64 into one event-sized buffer, one table of the event's records, its
 * Parquet settings, Arrow IPC → parquet-wasm, the footer read and the column metrics (the writer's
 * encodeBuilt). `scanner`: bytes → Arrow columns and statistics. `present`: strict UTF-8,
 * `JSON.parse`, the compiled coercer and Arrow builder (encodeParquet).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { ensureCatalogTable, ensureControlTable } from '../../../lib/local/init.js'
import { logger } from '../../../lib/log.js'
import { inferSchema, type StructType } from '../../../lib/schema/index.js'
import { DEFAULT_LIMITS } from '../../../lib/config.js'
import { compileCoercer, compileTableScanner, encodeBuilt, encodeParquet } from '../../../lib/writer/columnar/index.js'
import { localAws, round } from '../common.js'
import { eventOf, makeDataset, narrowRecord, type Dataset } from '../data.js'
import { profile, type ProfileSummary } from '../profile.js'
import { allocations } from './allocations.js'
import { duckdbRun, profileWriter } from '../throughput.js'

const { values: args } = parseArgs({ options: { records: { type: 'string', default: '200000' }, runs: { type: 'string', default: '3' }, real: { type: 'string', default: 'true' }, profile: { type: 'string', default: 'false' }, allocations: { type: 'string', default: 'false' } } })
const count = Number(args.records)
const runs = Number(args.runs)
process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR'
logger.setLogLevel('ERROR')

interface EventRecord {
  value: string
}

/** Each of an event's values, base64-decoded into one buffer sized for the event (views, no copy per record). */
function eventValues(payload: Buffer, buffer: { bytes: Buffer }): Uint8Array[] {
  const event = eventOf(payload) as unknown as { records: Record<string, EventRecord[]> }
  const out: Uint8Array[] = []
  if (buffer.bytes.length < payload.length) buffer.bytes = Buffer.allocUnsafe(payload.length)
  let at = 0
  for (const key in event.records) {
    for (const r of event.records[key]!) {
      const n = buffer.bytes.write(r.value, at, 'base64')
      out.push(buffer.bytes.subarray(at, at + n))
      at += n
    }
  }
  return out
}

function compositions(schema: StructType): Record<'scanner' | 'present', (ds: Dataset) => Promise<number>> {
  const scanner = compileTableScanner(schema, {}, DEFAULT_LIMITS)!
  const coerce = compileCoercer(schema, { table: 'bench.scan-path' })
  const utf8 = new TextDecoder('utf-8', { fatal: true })
  const buffer = { bytes: Buffer.alloc(0) }
  return {
    scanner: async (ds) => {
      let bytes = 0
      for (const payload of ds.payloads) {
        for (const value of eventValues(payload, buffer)) if (!scanner.add(value)) throw new Error('the scanner gave up a bench record')
        bytes += (await encodeBuilt(schema, scanner.build())).bytes.length
      }
      return bytes
    },
    present: async (ds) => {
      let bytes = 0
      for (const payload of ds.payloads) {
        const rows = eventValues(payload, buffer).map((v) => coerce(JSON.parse(utf8.decode(v)) as unknown).row)
        bytes += (await encodeParquet(schema, rows)).bytes.length
      }
      return bytes
    },
  }
}

/** Self time by function (ms) of both profiles. */
function selfMs(p: ProfileSummary): Map<string, number> {
  const out = new Map<string, number>()
  for (const f of p.byFunction) out.set(`${f.fn} [${f.module}]`, (out.get(`${f.fn} [${f.module}]`) ?? 0) + f.selfMs)
  return out
}

/** `present` and `writer` side by side, the writer's largest excess first. */
function printDifference(title: string, present: Map<string, number>, writer: Map<string, number>, scale = 1): void {
  const sum = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0) / scale
  console.log(`${title}: present ${round(sum(present))}, writer ${round(sum(writer))}`)
  const keys = [...new Set([...present.keys(), ...writer.keys()])]
  const excess = (k: string): number => ((writer.get(k) ?? 0) - (present.get(k) ?? 0)) / scale
  for (const k of keys.sort((a, b) => excess(b) - excess(a)).slice(0, 40))
    console.log(`  ${k.slice(0, 110).padEnd(110)} ${String(round((present.get(k) ?? 0) / scale)).padStart(6)} ${String(round((writer.get(k) ?? 0) / scale)).padStart(6)} ${String(round(excess(k))).padStart(6)}`)
}

async function cpuMs(f: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage()
  await f()
  const used = process.cpuUsage(before)
  return (used.user + used.system) / 1000
}

const dir = mkdtempSync(join(tmpdir(), 'floe-scan-path-'))
const aws = args.real === 'true' ? await localAws() : undefined
try {
  const ds = makeDataset('narrow', count, narrowRecord, { partitions: 4 })
  const schema = inferSchema(Array.from({ length: 1000 }, (_, i) => narrowRecord(i)))
  const ndjson = join(dir, 'narrow.ndjson')
  writeFileSync(ndjson, ds.ndjson)
  const id = Math.random().toString(36).slice(2, 8)
  const tables = { control: `sp-control-${id}`, catalog: `sp-iceberg-${id}` }
  if (aws) await Promise.all([ensureControlTable(aws.clients.ddb, tables.control), ensureCatalogTable(aws.clients.ddb, tables.catalog)])
  const paths = compositions(schema)
  const steps: Record<string, () => Promise<number>> = {
    duckdb: () => cpuMs(() => duckdbRun(ndjson, join(dir, 'narrow.parquet'))),
    scanner: () => cpuMs(() => paths.scanner(ds)),
    present: () => cpuMs(() => paths.present(ds)),
    ...(aws ? { writer: async () => (await profileWriter(aws.clients, tables, ds, async (f) => [await f(), undefined])).cpuMs } : {}),
  }
  // A warm-up pass of each composition, then `runs` interleaved passes; best of each.
  await paths.scanner(ds)
  await paths.present(ds)
  const best: Record<string, number> = {}
  for (let r = 0; r < runs; r++) {
    for (const [name, step] of Object.entries(steps)) best[name] = Math.min(best[name] ?? Infinity, await step())
    console.log(`run ${r}: ${Object.entries(best).map(([k, v]) => `${k} ${round(v)} ms`).join(', ')}`)
  }
  const perCpuS = (ms: number): number => Math.round(count / (ms / 1000))
  console.log(JSON.stringify({
    records: count,
    events: ds.payloads.length,
    cpuMs: Object.fromEntries(Object.entries(best).map(([k, v]) => [k, round(v)])),
    usPerRecord: Object.fromEntries(Object.entries(best).map(([k, v]) => [k, round((v * 1000) / count, 2)])),
    recordsPerCpuS: Object.fromEntries(Object.entries(best).map(([k, v]) => [k, perCpuS(v)])),
    // Floe/DuckDB records per CPU-second of each.
    ratio: Object.fromEntries(Object.entries(best).filter(([k]) => k !== 'duckdb').map(([k, v]) => [k, round(best.duckdb! / v, 3)])),
  }))
  if (aws && args.profile === 'true') {
    const present = (await profile(() => paths.present(ds)))[1]
    const writer = (await profileWriter(aws.clients, tables, ds, (f) => profile(f))).profile as ProfileSummary
    printDifference('self ms (idle included)', selfMs(present), selfMs(writer))
  }
  if (aws && args.allocations === 'true') {
    const present = (await allocations(() => paths.present(ds)))[1]
    const writer = (await profileWriter(aws.clients, tables, ds, (f) => allocations(f))).profile as Map<string, number>
    printDifference('bytes allocated per record', present, writer, count)
    for (const [k, v] of [...present].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`  present: ${k.slice(0, 100).padEnd(100)} ${round(v / count)}`)
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
  if (aws) {
    aws.clients.ddb.destroy()
    aws.clients.s3.destroy()
    const hold = setInterval(() => undefined, 1000)
    await aws.endpoints.stop()
    clearInterval(hold)
  }
}
