/**
 * `npm run bench [-- --quick] [--out bench-results.json] [--profile-file writer.cpuprofile]
 * [--history 10,1000,10000] [--only maintenance|commit|throughput] [--batches 1000,5000,10000]`: runs the benchmark suite (test/bench/bench.ts)
 * on local endpoints, prints the tables and writes the results as JSON. `--quick` uses small
 * sizes (a few minutes on 2 cores). `--history` sets the commit counts of the table-history row
 * (default 10,1000; 10,000 takes a few more minutes). `--only maintenance` runs just the
 * compaction-memory and table-history rows (file:// only, no endpoints); `--only commit` just the
 * commit rows at `--batches` pending batches, one snapshot each, with where the time went;
 * `--only throughput` just the writer-throughput rows (Floe writeBatch, encode only, DuckDB);
 * `--only partitioned` just the narrow input into `day(ts)` and `city, day(ts)` tables, scanner lane on and off.
 * `npm run bench -- --scale [--out scale-results.json]`: the scale load test only (scale.ts,
 * docs/scale.md): per-key request rates before and after write sharding, and the model table.
 */
import { writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { loadavg } from 'node:os'
import { formatMaintenance, formatPartitioned, formatResults, formatThroughput, runBench, runCommitBench, runMaintenanceBench, runPartitionedBench, runThroughputBench, SIZES } from './bench.js'
import { machine } from './common.js'

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench-results.json' },
    'profile-file': { type: 'string' },
    history: { type: 'string' },
    only: { type: 'string' },
    scale: { type: 'boolean', default: false },
    batches: { type: 'string', default: '1000,5000,10000' },
  },
})
if (values.scale) {
  const { runScale } = await import('./scale-run.js')
  await runScale(values.out === 'bench-results.json' ? 'scale-results.json' : values.out)
  process.exit(0)
}
const base = SIZES[values.quick ? 'quick' : 'full']
const history = values.history ? values.history.split(',').map(Number) : base.history
if (history.some((n) => !Number.isSafeInteger(n) || n < 1)) throw new Error(`--history: expected commit counts like 10,1000,10000; got ${values.history}`)
const sizes = { ...base, history, profileFile: values['profile-file'] }
const log = (s: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${s}`)
if (values.only === 'commit') {
  const batches = values.batches.split(',').map(Number)
  if (batches.some((n) => !Number.isSafeInteger(n) || n < 1)) throw new Error(`--batches: expected batch counts like 1000,5000; got ${values.batches}`)
  const commit = await runCommitBench(batches, log)
  writeFileSync(values.out, JSON.stringify({ only: 'commit', machine: machine(), commit }, null, 2) + '\n')
  console.log(commit.map((c) => `${c.batches} batches: ${c.ms} ms (${JSON.stringify(c.phases)}), ${c.ddbRequests} DynamoDB requests`).join('\n'))
  process.exit(0)
}
if (values.only === 'throughput') {
  const throughput = await runThroughputBench(sizes, log)
  writeFileSync(values.out, JSON.stringify({ mode: sizes.mode, only: 'throughput', machine: machine(), loadAverageAtEnd: loadavg(), throughput }, null, 2) + '\n')
  console.log(`load average at end: ${loadavg().map((l) => l.toFixed(2)).join(' / ')}\n`)
  console.log(formatThroughput(throughput))
  console.log(`\nwrote ${values.out}`)
  process.exit(0)
}
if (values.only === 'partitioned') {
  const partitioned = await runPartitionedBench(sizes, log)
  writeFileSync(values.out, JSON.stringify({ mode: sizes.mode, only: 'partitioned', machine: machine(), partitioned }, null, 2) + '\n')
  console.log(formatPartitioned(partitioned))
  console.log(`\nwrote ${values.out}`)
  process.exit(0)
}
if (values.only !== undefined) {
  if (values.only !== 'maintenance') throw new Error(`--only: only 'maintenance' can run alone (it needs no endpoints); got ${values.only}`)
  const r = await runMaintenanceBench(sizes, log)
  writeFileSync(values.out, JSON.stringify({ mode: sizes.mode, only: 'maintenance', machine: machine(), ...r }, null, 2) + '\n')
  console.log(formatMaintenance(r))
  console.log(`\nwrote ${values.out}`)
  process.exit(0)
}
const results = await runBench(sizes, log, (done) => writeFileSync(values.out, JSON.stringify({ ...done, partial: true }, null, 2) + '\n'))
writeFileSync(values.out, JSON.stringify(results, null, 2) + '\n')
console.log(formatResults(results))
console.log(`\nwrote ${values.out}`)
process.exit(0)
