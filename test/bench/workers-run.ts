/**
 * `npx tsx test/bench/workers-run.ts [--narrow 200000] [--wide 20000] [--runs 3] [--workers 0,1,2]`:
 * the two-worker rows of `npm run bench` alone (workers.ts), on local endpoints. Heavy: run it
 * under the shared lock on a shared machine.
 */
import { randomUUID } from 'node:crypto'
import { parseArgs } from 'node:util'
import { ensureCatalogTable, ensureControlTable } from '../../lib/local/init.js'
import { logger } from '../../lib/log.js'
import { localAws } from './common.js'
import { makeDataset, narrowRecord, wideRecord } from './data.js'
import { benchWorkers, workersTable, type WorkersResult } from './workers.js'

const { values } = parseArgs({
  options: { narrow: { type: 'string', default: '200000' }, wide: { type: 'string', default: '20000' }, runs: { type: 'string', default: '3' }, workers: { type: 'string', default: '0,1,2' } },
})
process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR'
logger.setLogLevel('ERROR')
const log = (s: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${s}`)
const { endpoints, clients } = await localAws()
const id = randomUUID().slice(0, 8)
const tables = { control: `wk-control-${id}`, catalog: `wk-iceberg-${id}` }
try {
  await Promise.all([ensureControlTable(clients.ddb, tables.control), ensureCatalogTable(clients.ddb, tables.catalog)])
  const counts = values.workers.split(',').map(Number)
  const results: WorkersResult[] = []
  for (const [name, count, make] of [
    ['narrow', Number(values.narrow), narrowRecord],
    ['wide', Number(values.wide), (i: number) => wideRecord(i)],
  ] as const) {
    if (count > 0) results.push(await benchWorkers(clients, tables, makeDataset(name, count, make, { partitions: 4 }), Number(values.runs), counts, log))
  }
  for (const row of workersTable(results)) console.log(`| ${row.join(' | ')} |`)
} finally {
  clients.ddb.destroy()
  clients.s3.destroy()
  const hold = setInterval(() => undefined, 1000)
  await Promise.race([endpoints.stop(), new Promise((r) => setTimeout(r, 15_000))])
  clearInterval(hold)
}
