/**
 * `npx tsx test/bench/workers-run.ts [--narrow 200000] [--wide 20000] [--runs 3] [--workers 0,1,2]`:
 * the two-worker rows of `npm run bench` alone (workers.ts), on local endpoints. Heavy: run it
 * under the shared lock on a shared machine.
 */
import { parseArgs } from 'node:util'
import { withBenchTables } from './common.js'
import { makeDataset, narrowRecord, wideRecord } from './data.js'
import { benchWorkers, workersTable, type WorkersResult } from './workers.js'

const { values } = parseArgs({
  options: { narrow: { type: 'string', default: '200000' }, wide: { type: 'string', default: '20000' }, runs: { type: 'string', default: '3' }, workers: { type: 'string', default: '0,1,2' } },
})
const log = (s: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${s}`)
await withBenchTables('wk', async (clients, tables) => {
  const counts = values.workers.split(',').map(Number)
  const results: WorkersResult[] = []
  for (const [name, count, make] of [
    ['narrow', Number(values.narrow), narrowRecord],
    ['wide', Number(values.wide), (i: number) => wideRecord(i)],
  ] as const) {
    if (count > 0) results.push(await benchWorkers(clients, tables, makeDataset(name, count, make, { partitions: 4 }), Number(values.runs), counts, log))
  }
  for (const row of workersTable(results)) console.log(`| ${row.join(' | ')} |`)
})
