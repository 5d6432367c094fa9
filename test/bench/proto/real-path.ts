/**
 * The real writer path (writeBatch, as the bench's throughput section runs it) alone, with a CPU
 * profile: `npx tsx test/bench/proto/real-path.ts [--narrow 100000] [--wide 10000] [--runs 2]
 * [--profile-file F] [--event-kb 6144] [--scan false]`. Prints records per CPU-second of each run and the
 * profile's top entries. `--event-kb`: the events' largest payload (smaller events, more of them:
 * the writer's CPU per event beyond its records, by difference). `--scan false`: FLOE_WRITER_SCAN off.
 */
import { parseArgs } from 'node:util'
import { ensureCatalogTable, ensureControlTable } from '../../../lib/local/init.js'
import { logger } from '../../../lib/log.js'
import { localAws } from '../common.js'
import { makeDataset, narrowRecord, wideRecord } from '../data.js'
import { profile } from '../profile.js'
import { profileWriter } from '../throughput.js'

const { values } = parseArgs({ options: { narrow: { type: 'string', default: '100000' }, wide: { type: 'string', default: '10000' }, runs: { type: 'string', default: '2' }, 'event-kb': { type: 'string', default: '6144' }, scan: { type: 'string', default: 'true' }, 'profile-file': { type: 'string' } } })
process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR'
logger.setLogLevel('ERROR')
const { endpoints, clients } = await localAws()
const id = Math.random().toString(36).slice(2, 8)
const tables = { control: `rp-control-${id}`, catalog: `rp-iceberg-${id}` }
try {
  await Promise.all([ensureControlTable(clients.ddb, tables.control), ensureCatalogTable(clients.ddb, tables.catalog)])
  for (const [name, count, make] of [['narrow', Number(values.narrow), narrowRecord], ['wide', Number(values.wide), (i: number) => wideRecord(i)]] as const) {
    if (count === 0) continue
    const ds = makeDataset(name, count, make, { partitions: 4, maxEventBytes: Number(values['event-kb']) * 1024 })
    for (let run = 0; run < Number(values.runs); run++) {
      const last = run === Number(values.runs) - 1
      const file = values['profile-file'] ? `${values['profile-file']}.${name}` : undefined
      const r = await profileWriter(clients, tables, ds, last ? (f) => profile(f, file) : async (f) => [await f(), undefined], { FLOE_WRITER_SCAN: values.scan! })
      console.log(`${name} run ${run}: ${count} records in ${ds.payloads.length} events, cpu ${r.cpuMs} ms, wall ${r.wallMs} ms, ${Math.round(count / (r.cpuMs / 1000))} records/CPU-s`)
      if (last) {
        const p = r.profile as { byFunction: { fn: string; selfMs: number; share: number }[]; byModule: { module: string; selfMs: number; share: number }[] }
        for (const m of p.byModule.slice(0, 10)) console.log(`  ${m.module.padEnd(28)} ${String(m.selfMs).padStart(6)} ${m.share}%`)
        for (const f of p.byFunction.slice(0, 25)) console.log(`  ${f.fn.padEnd(44)} ${String(f.selfMs).padStart(6)} ${f.share}%`)
      }
    }
  }
} finally {
  clients.ddb.destroy()
  clients.s3.destroy()
  const hold = setInterval(() => undefined, 1000)
  await endpoints.stop()
  clearInterval(hold)
}
