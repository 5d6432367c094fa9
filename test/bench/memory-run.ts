/**
 * `npx tsx test/bench/memory-run.ts [--budgets 16,64,256] [--tables 50] [--slots 24] [--runs 1]
 * [--function-mb 1769] [--modes floe,lambda] [--node-flags='--flag ...']`:
 * the writer-memory section of `npm run bench` alone (memory.ts: the bundled writer, one child
 * per run), on local endpoints. Prints one line per budget: peak RSS and the writer's own
 * accounting peak (peakBufferedBytes), against FLOE_MEMORY_BUDGET_MB + 100 MB. `--node-flags`:
 * node flags for the child after the runtime's (V8 settings under study; Lambda's runtime itself
 * takes only NODE_OPTIONS, which allows few V8 flags).
 */
import { parseArgs } from 'node:util'
import { withBenchTables } from './common.js'
import { benchMemory, type NodeMode } from './memory.js'

const { values } = parseArgs({
  options: { budgets: { type: 'string', default: '16,64,256' }, tables: { type: 'string', default: '50' }, slots: { type: 'string', default: '24' }, runs: { type: 'string', default: '1' }, 'function-mb': { type: 'string', default: '1769' }, modes: { type: 'string', default: 'floe' }, 'node-flags': { type: 'string', default: '' } },
})
const log = (s: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${s}`)
await withBenchTables('mem', async (clients, tables) => {
  const opts = { budgets: values.budgets.split(',').map(Number), tables: Number(values.tables), slots: Number(values.slots), runs: Number(values.runs), functionMb: Number(values['function-mb']), modes: values.modes.split(',') as NodeMode[], nodeFlags: values['node-flags'].split(' ').filter(Boolean) }
  const results = await benchMemory(clients, tables, opts, log)
  for (const r of results) console.error(JSON.stringify(r))
  console.log(`function ${opts.functionMb} MB; node ${results.map((r) => `${r.mode}: ${r.nodeArgs}`).filter((x, i, a) => a.indexOf(x) === i).join(' | ')}`)
  console.log('| budget MB | node | records | tables | files | flushes budget/end | accounting peak MB | RSS before MB | peak RSS MB | bound (budget + 100) | growth over RSS before MB | peak: JS heap total / external / wasm MB | ms |')
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|')
  for (const r of results) {
    const peak = (r.peakBufferedBytes / 2 ** 20).toFixed(1)
    const bound = r.budgetMB + 100
    const ok = r.peakRssMB <= bound ? '≤' : '>'
    console.log(`| ${r.budgetMB} | ${r.mode} | ${r.records} | ${r.tables} | ${r.files} | ${r.flushes.budget}/${r.flushes.end} | ${peak} | ${r.rssBeforeMB} | ${r.peakRssMB} | ${ok} ${bound} | ${r.peakRssMB - r.rssBeforeMB} | ${r.sampledPeakMB?.heapTotal} / ${r.sampledPeakMB?.external} / ${r.sampledPeakMB?.wasm} | ${r.ms} |`)
  }
})
