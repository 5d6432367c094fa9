/**
 * What a committer invocation (functions/committer.ts) answers with: the run's counts as they
 * are, and its per-table results as JSON.
 */
import type { CommitRunResult } from './committer.js'

/** The run's counts as they are, and its results as JSON (snapshot ids as strings, errors as text). */
export type CommitterSummary = Omit<CommitRunResult, 'results'> & {
  results: { table: string; status: string; snapshotId?: string; batches: number; alreadyCommitted: number; conflicts: number; error?: string }[]
}

export function summarizeRun(run: CommitRunResult): CommitterSummary {
  const { results, ...counts } = run
  return {
    ...counts,
    results: results.map((r) => ({
      table: r.table,
      status: r.status,
      ...(r.snapshotId !== undefined ? { snapshotId: r.snapshotId.toString() } : {}),
      batches: r.batches,
      alreadyCommitted: r.alreadyCommitted,
      conflicts: r.conflicts,
      ...(r.error ? { error: `${r.error.name}: ${r.error.message}` } : {}),
    })),
  }
}
