/**
 * `floe status --watch`: the status as a terminal view refreshed in place — per table the lag
 * (offsets written but not yet in the table), records/s reaching the table (from the committed
 * offsets between two refreshes), pending batches, age of the last commit and the small-file
 * ratio (data files under 75 % of FLOE_TARGET_FILE_MB, Iceberg's RewriteDataFiles default
 * min-file-size ratio: what compaction would rewrite).
 */
import type { CommitDeps, TableStatus } from '../commit/index.js'
import { parseTableId } from '../catalog/index.js'
import { currentSnapshot } from '../iceberg/index.js'
import { liveDataFiles } from '../iceberg/manifests.js'

export interface WatchRow {
  table: string
  lag: bigint
  recordsPerSecond?: number
  pendingBatches: number
  lastCommitAgeMs?: number
  files: number
  smallFiles: number
}

const committedSum = (s: TableStatus) => s.partitions.reduce((n, p) => n + (p.committed ?? 0n), 0n)

/** One row per table; `previous` (the last refresh's statuses and time) gives records/s. */
export async function watchRows(deps: Pick<CommitDeps, 'catalog' | 'io' | 'config'>, statuses: TableStatus[], previous: { statuses: TableStatus[]; atMs: number } | undefined, nowMs: number): Promise<WatchRow[]> {
  const small = deps.config.targetFileBytes * 0.75
  return Promise.all(
    statuses.map(async (s) => {
      let files = 0
      let smallFiles = 0
      try {
        const { metadata } = await deps.catalog.loadTable(parseTableId(s.table))
        if (currentSnapshot(metadata)) {
          const data = await liveDataFiles(deps.io, metadata)
          files = data.length
          smallFiles = data.filter((e) => e.dataFile.fileSizeInBytes < small).length
        }
      } catch {
        // A table not created yet (only pending batches): no files to count.
      }
      const before = previous?.statuses.find((p) => p.table === s.table)
      const seconds = previous ? (nowMs - previous.atMs) / 1000 : 0
      return {
        table: s.table,
        lag: s.partitions.reduce((n, p) => n + (p.lag ?? 0n), 0n),
        ...(before && seconds > 0 ? { recordsPerSecond: Number(committedSum(s) - committedSum(before)) / seconds } : {}),
        pendingBatches: s.pendingBatches,
        ...(s.lastCommit ? { lastCommitAgeMs: nowMs - s.lastCommit.timestampMs } : {}),
        files,
        smallFiles,
      }
    }),
  )
}

const age = (ms: number) => (ms < 120_000 ? `${Math.round(ms / 1000)}s ago` : ms < 7_200_000 ? `${Math.round(ms / 60_000)}m ago` : `${(ms / 3_600_000).toFixed(1)}h ago`)

export function formatWatch(rows: WatchRow[], nowMs: number, source: string): string {
  const width = Math.max(5, ...rows.map((r) => r.table.length))
  const lines = [
    `floe status — ${source} — ${new Date(nowMs).toISOString()} (Ctrl-C to stop)`,
    '',
    `${'table'.padEnd(width)}  ${'lag'.padStart(10)}  ${'records/s'.padStart(10)}  ${'pending'.padStart(8)}  ${'last commit'.padStart(12)}  ${'small files'.padStart(14)}`,
  ]
  for (const r of rows) {
    const rate = r.recordsPerSecond === undefined ? '…' : r.recordsPerSecond.toFixed(r.recordsPerSecond < 10 ? 1 : 0)
    const ratio = r.files === 0 ? '-' : `${r.smallFiles}/${r.files} (${Math.round((r.smallFiles / r.files) * 100)}%)`
    lines.push(
      `${r.table.padEnd(width)}  ${r.lag.toLocaleString('en-US').padStart(10)}  ${rate.padStart(10)}  ${String(r.pendingBatches).padStart(8)}  ${(r.lastCommitAgeMs === undefined ? 'never' : age(r.lastCommitAgeMs)).padStart(12)}  ${ratio.padStart(14)}`,
    )
  }
  if (rows.length === 0) lines.push('no tables yet: nothing registered or committed in this pipeline')
  return `${lines.join('\n')}\n`
}
