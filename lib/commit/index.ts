/** The commit protocol: pending batches appended to their tables under a lease, exactly once, and the pipeline's status. */
export { runCommitter, type CommitRunResult } from './committer.js'
export { createCommitterDeps } from './deps.js'
export { pipelineStatus, type TableStatus } from './status.js'
export type { CommitDeps } from './types.js'
export type { CommitterSummary } from './summary.js'
export { summarizeRun } from './summary.js'
