/**
 * `npm run bench [-- --quick] [--out bench-results.json] [--profile-file writer.cpuprofile]`:
 * runs the benchmark suite (test/bench/bench.ts) on local endpoints, prints the tables and
 * writes the results as JSON. `--quick` uses small sizes (a few minutes on 2 cores).
 * `npm run bench -- --scale [--out scale-results.json]`: the scale load test only (scale.ts,
 * docs/scale.md): per-key request rates before and after write sharding, and the model table.
 */
import { writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { formatResults, runBench, SIZES } from './bench.js'

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench-results.json' },
    'profile-file': { type: 'string' },
    scale: { type: 'boolean', default: false },
  },
})
if (values.scale) {
  const { runScale } = await import('./scale-run.js')
  await runScale(values.out === 'bench-results.json' ? 'scale-results.json' : values.out)
  process.exit(0)
}
const sizes = { ...SIZES[values.quick ? 'quick' : 'full'], profileFile: values['profile-file'] }
const log = (s: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${s}`)
const results = await runBench(sizes, log, (done) => writeFileSync(values.out, JSON.stringify({ ...done, partial: true }, null, 2) + '\n'))
writeFileSync(values.out, JSON.stringify(results, null, 2) + '\n')
console.log(formatResults(results))
console.log(`\nwrote ${values.out}`)
process.exit(0)
