/**
 * The maintenance rows of `npm run bench`, each in child processes of its own:
 * - compaction memory (compact-memory.ts): input ≥ 10× FLOE_COMPACT_MEMORY_MB generated in one
 *   child, compacted in another (so the generator's memory is not reused), reporting the ledger's
 *   peak and the peak RSS growth against the bound;
 * - table history (history.ts): metadata.json size and a writer's table load (parsed and cached)
 *   at each commit count, before and after snapshot expiry, through real appends.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const run = promisify(execFile)
const here = (f: string) => fileURLToPath(new URL(f, import.meta.url))

export interface CompactMemoryOptions {
  boundMB: number
  targetMB: number
  chunkMB: number
  fileMB: number
  inputMB: number
}

export interface CompactMemoryResult extends Record<string, unknown> {
  boundMB: number
  inputMB: number
  inputToBound: number
  ledgerPeakMB: number
  rssBaselineMB: number
  peakRssMB: number
  rssGrowthMB: number
  seconds: number
}

export interface HistoryRow {
  commits: number
  metadataBytesBefore: number
  loadParsedMs: number
  loadCachedMs: number
  snapshotsAfter: number
  metadataBytesAfter: number
  loadParsedAfterMs: number
  loadCachedAfterMs: number
}

const lastJson = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!)

export async function benchCompactMemory(o: CompactMemoryOptions, log: (s: string) => void = () => undefined): Promise<CompactMemoryResult> {
  const dir = mkdtempSync(join(tmpdir(), 'floe-bench-compact-'))
  try {
    const script = here('./compact-memory.ts')
    log(`  generating ${o.inputMB} MB of input in ${o.fileMB} MB files`)
    await run(process.execPath, ['--import', 'tsx', script, '--generate', dir, '--input-mb', String(o.inputMB), '--file-mb', String(o.fileMB)], { maxBuffer: 1 << 20 })
    log(`  compacting with FLOE_COMPACT_MEMORY_MB=${o.boundMB}, target ${o.targetMB} MB, chunk ${o.chunkMB} MB`)
    const { stdout } = await run(process.execPath, ['--expose-gc', '--import', 'tsx', script, '--compact', dir, '--bound-mb', String(o.boundMB), '--target-mb', String(o.targetMB), '--chunk-mb', String(o.chunkMB)], { maxBuffer: 1 << 20 })
    return lastJson(stdout) as CompactMemoryResult
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export async function benchHistory(commits: number[]): Promise<HistoryRow[]> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', here('./history.ts'), '--commits', commits.join(','), '--json'], { maxBuffer: 1 << 22 })
  return lastJson(stdout) as HistoryRow[]
}
