/**
 * Compaction memory: rewrite input 10× a memory bound through compaction's own data path
 * (lib/maintenance streamRows → encodeStreamed, the same code compactTable runs per group) and
 * report the process's peak RSS against that bound. Files are on a file:// warehouse so disk,
 * not an emulator, is what is read.
 *
 *   node --import tsx test/bench/compact-memory.ts [--bound-mb 96] [--target-mb 16] [--chunk-mb 4]
 *
 * The bound is on RSS growth over the idle process (Node, the wasm module and the loaded code),
 * measured every 10 ms and by the kernel's maxRSS. Exits 1 when the growth passes the bound.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createFileIO } from '../../lib/io/index.js'
import type { DataFile } from '../../lib/iceberg/types.js'
import { streamRows } from '../../lib/maintenance/compact.js'
import { encodeStreamed } from '../../lib/maintenance/write-rows.js'
import { encodeParquet } from '../../lib/writer/columnar/index.js'
import { SCHEMA } from '../maintenance/context.js'

const { values } = parseArgs({ options: { 'bound-mb': { type: 'string', default: '96' }, 'target-mb': { type: 'string', default: '16' }, 'chunk-mb': { type: 'string', default: '4' } } })
const MB = 1024 * 1024
const bound = Number(values['bound-mb']) * MB
const target = Number(values['target-mb']) * MB
const chunk = Number(values['chunk-mb']) * MB

const dir = await mkdtemp(join(tmpdir(), 'floe-compact-mem-'))
const io = createFileIO({} as never)
// One small input file (~2 MB of incompressible payload), copied until the input is 10× the bound.
const rows = Array.from({ length: 2_000 }, (_, i) => ({ id: BigInt(i), region: 'r0', ts: BigInt(i) * 1_000n, tags: [`t${i % 7}`], payload: randomBytes(1_000), score: i / 3 }))
const encoded = await encodeParquet(SCHEMA, rows, {})
const inputs: DataFile[] = []
for (let i = 0; inputs.reduce((a, f) => a + f.fileSizeInBytes, 0) < 10 * bound; i++) {
  const path = join(dir, `in-${i}.parquet`)
  await writeFile(path, encoded.bytes)
  inputs.push({ content: 0, filePath: `file://${path}`, fileFormat: 'PARQUET', specId: 0, partition: ['r0'], recordCount: rows.length, fileSizeInBytes: encoded.bytes.length })
}
const inputBytes = inputs.reduce((a, f) => a + f.fileSizeInBytes, 0)

globalThis.gc?.()
await new Promise((r) => setTimeout(r, 200))
const baseline = process.memoryUsage().rss
let peak = baseline
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10)
const started = Date.now()
let outputBytes = 0
let outputs = 0
let records = 0
// Groups as the planner makes them: at most the target size of input each.
for (let i = 0; i < inputs.length; ) {
  const group: DataFile[] = []
  let bytes = 0
  while (i < inputs.length && (group.length === 0 || bytes + inputs[i]!.fileSizeInBytes <= target)) {
    bytes += inputs[i]!.fileSizeInBytes
    group.push(inputs[i++]!)
  }
  const out = await encodeStreamed(SCHEMA, streamRows(io, SCHEMA, group, chunk), { properties: {}, rowGroupBytes: chunk })
  const outPath = `file://${join(dir, `out-${outputs++}.parquet`)}`
  await io.write(outPath, out.bytes)
  await io.delete(outPath) // only its size matters here; keeps the disk footprint at the input's
  await io.deleteMany(group.map((f) => f.filePath))
  outputBytes += out.bytes.length
  records += out.recordCount
}
clearInterval(sampler)
const elapsed = (Date.now() - started) / 1000
const maxRss = process.resourceUsage().maxRSS * 1024
await rm(dir, { recursive: true, force: true })
const growth = Math.max(peak, maxRss) - baseline
const mb = (n: number) => `${(n / MB).toFixed(1)} MB`
console.log(`compaction memory: input ${mb(inputBytes)} in ${inputs.length} files (${(inputBytes / bound).toFixed(1)}× the ${mb(bound)} bound) → ${outputs} files, ${mb(outputBytes)}, ${records} rows, ${elapsed.toFixed(1)} s`)
console.log(`  target ${mb(target)}, chunk ${mb(chunk)}; RSS baseline ${mb(baseline)}, peak ${mb(Math.max(peak, maxRss))} (sampled ${mb(peak)}, kernel maxRSS ${mb(maxRss)}), growth ${mb(growth)}`)
if (records !== inputs.length * rows.length) throw new Error(`rows: ${records}, expected ${inputs.length * rows.length}`)
if (growth > bound) {
  console.error(`FAIL: RSS grew ${mb(growth)}, over the ${mb(bound)} bound`)
  process.exit(1)
}
