/**
 * Compaction memory, in a process of its own: compaction's real group rewrite (lib/maintenance
 * rewriteGroup: ranged reads → row windows → streaming Parquet writer → part-wise upload) over
 * input at least 10× FLOE_COMPACT_MEMORY_MB, reporting the ledger's peak (what compaction
 * accounts for, asserted ≤ the bound) and the process's peak RSS growth (sampled every 10 ms and
 * the kernel's peak, peak-rss.ts) beside the bound. Two steps, so the generator's memory is not reused:
 *
 *   node --import tsx test/bench/compact-memory.ts --generate DIR [--input-mb 640] [--file-mb 48]
 *   node --expose-gc --import tsx test/bench/compact-memory.ts --compact DIR [--bound-mb 64] [--target-mb 256] [--chunk-mb 2]
 *
 * The inputs are Parquet files of `--file-mb` with row groups of about 1 MB (so each file is read
 * in many windows), written by the same streaming writer; the output target is larger than the
 * bound, so neither an input file nor an output file fits in it. Prints one JSON line; exits 1
 * when the ledger passes the bound or a row is lost.
 */
import { randomBytes } from 'node:crypto'
import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { parquetMetadataAsync } from 'hyparquet'
import { loadConfig } from '../../lib/config.js'
import { newTableMetadata } from '../../lib/iceberg/metadata.js'
import { parsePartitionBy } from '../../lib/iceberg/partition.js'
import type { ManifestEntry } from '../../lib/iceberg/types.js'
import { createFileIO } from '../../lib/io/index.js'
import { CompactionBudget } from '../../lib/maintenance/budget.js'
import { planCompaction } from '../../lib/maintenance/compact-plan.js'
import { rewriteGroup } from '../../lib/maintenance/compact.js'
import { rangedFile } from '../../lib/maintenance/read-rows.js'
import { encodeStreamed } from '../../lib/maintenance/write-rows.js'
import { SCHEMA } from '../maintenance/context.js'
import { peakRssBytes } from './peak-rss.js'

const { values } = parseArgs({
  options: {
    generate: { type: 'string' },
    compact: { type: 'string' },
    'input-mb': { type: 'string', default: '640' },
    'file-mb': { type: 'string', default: '48' },
    'bound-mb': { type: 'string', default: '64' },
    'target-mb': { type: 'string', default: '256' },
    'chunk-mb': { type: 'string', default: '2' },
  },
})
const MB = 1024 * 1024
const io = createFileIO({} as never)
const ROW_PAYLOAD = 1_000

if (values.generate) await generate(values.generate)
else if (values.compact) await compact(values.compact)
else throw new Error('give --generate DIR or --compact DIR')

/** Input files of about --file-mb, incompressible payloads, until --input-mb is written. */
async function generate(dir: string) {
  const fileBytes = Number(values['file-mb']) * MB
  const total = Number(values['input-mb']) * MB
  const rowsPerFile = Math.ceil(fileBytes / (ROW_PAYLOAD + 40))
  let written = 0
  let id = 0
  for (let n = 0; written < total; n++) {
    async function* chunks() {
      for (let done = 0; done < rowsPerFile; done += 1_000) {
        yield Array.from({ length: Math.min(1_000, rowsPerFile - done) }, () => {
          const i = id++
          return { id: BigInt(i), region: 'r0', ts: BigInt(i) * 1_000n, tags: [`t${i % 7}`], payload: randomBytes(ROW_PAYLOAD), score: i / 3 }
        })
      }
    }
    const path = `file://${join(dir, `in-${String(n).padStart(4, '0')}.parquet`)}`
    const sink = await io.openWrite(path)
    const out = await encodeStreamed(SCHEMA, chunks(), { properties: {}, rowGroupBytes: MB, sink, budget: new CompactionBudget(Number.MAX_SAFE_INTEGER), footer: (size) => parquetMetadataAsync(rangedFile(io, path, size)) })
    written += out.size
  }
  console.log(JSON.stringify({ generated: written, rows: id }))
}

async function compact(dir: string) {
  const bound = Number(values['bound-mb']) * MB
  const target = Number(values['target-mb']) * MB
  const config = loadConfig({}, { FLOE_PIPELINE: 'bench', FLOE_WAREHOUSE: `file://${dir}`, FLOE_CONTROL_TABLE: 'bench-control', FLOE_CATALOG_TABLE: 'bench-catalog', FLOE_COMPACT_MEMORY_MB: values['bound-mb'], FLOE_COMPACT_CHUNK_MB: values['chunk-mb'] })
  const md = newTableMetadata({ location: `file://${dir}`, schema: SCHEMA, spec: parsePartitionBy(SCHEMA, ['region']), nowMs: Date.now() })
  const entries: ManifestEntry[] = []
  for (const name of (await readdir(dir)).filter((f) => f.startsWith('in-')).sort()) {
    const path = `file://${join(dir, name)}`
    const size = (await stat(join(dir, name))).size
    const meta = await parquetMetadataAsync(rangedFile(io, path, size))
    entries.push({ status: 1, snapshotId: 1n, sequenceNumber: BigInt(entries.length + 1), fileSequenceNumber: BigInt(entries.length + 1), dataFile: { content: 0, filePath: path, fileFormat: 'PARQUET', specId: 0, partition: ['r0'], recordCount: Number(meta.num_rows), fileSizeInBytes: size } })
  }
  const groups = planCompaction(entries, target, Number.MAX_SAFE_INTEGER)
  // A file the planner leaves alone (the last one, alone in its bin) is not input.
  const grouped = groups.flatMap((g) => g.inputs)
  const inputBytes = grouped.reduce((a, e) => a + e.dataFile.fileSizeInBytes, 0)
  const inputRows = grouped.reduce((a, e) => a + e.dataFile.recordCount, 0)

  globalThis.gc?.()
  await new Promise((r) => setTimeout(r, 200))
  const baseline = process.memoryUsage().rss
  let sampled = baseline
  const sampler = setInterval(() => (sampled = Math.max(sampled, process.memoryUsage().rss)), 10)
  const started = performance.now()
  const budget = new CompactionBudget(bound)
  let outputBytes = 0
  let rows = 0
  let largestOutput = 0
  for (const g of groups) {
    const file = await rewriteGroup({ io, config }, md, g, budget)
    outputBytes += file.fileSizeInBytes
    largestOutput = Math.max(largestOutput, file.fileSizeInBytes)
    rows += file.recordCount
    await io.delete(file.filePath)
    if (process.env.BENCH_VERBOSE) console.error(`group ${g.inputs.length} files: ledger peak ${(budget.peak / MB).toFixed(1)} MB, wasm growth ${(budget.wasmGrowth / MB).toFixed(1)} MB`)
  }
  clearInterval(sampler)
  const peakRss = Math.max(sampled, peakRssBytes())
  const r = (n: number) => Math.round((n / MB) * 10) / 10
  const result = {
    boundMB: r(bound),
    targetMB: r(target),
    chunkMB: Number(values['chunk-mb']),
    inputMB: r(inputBytes),
    inputFiles: grouped.length,
    largestInputMB: r(Math.max(...entries.map((e) => e.dataFile.fileSizeInBytes))),
    inputToBound: Math.round((inputBytes / bound) * 10) / 10,
    groups: groups.length,
    outputMB: r(outputBytes),
    largestOutputMB: r(largestOutput),
    rows,
    ledgerPeakMB: r(budget.peak),
    ledgerPeakByKindMB: Object.fromEntries(Object.entries(budget.peakByKind).map(([k, v]) => [k, r(v)])),
    rssBaselineMB: r(baseline),
    peakRssMB: r(peakRss),
    rssGrowthMB: r(peakRss - baseline),
    seconds: Math.round((performance.now() - started) / 100) / 10,
  }
  console.log(JSON.stringify(result))
  if (rows !== inputRows) throw new Error(`rows: ${rows}, expected ${inputRows}`)
  if (budget.peak > bound) process.exit(1)
}
