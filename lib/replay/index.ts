/** Replay (DESIGN.md invariant 11): failed batches and dead letters back through the writer path, exactly once. */
export { replayFailedBatches, parseInvocationRecord, type FailedBatchOptions } from './failed-batches.js'
export { replayDeadLetters, parseDeadLetterObject, type DeadLetterOptions } from './dead-letters.js'
export type { ReplayDeps, ReplayHooks, ReplayRunResult, SourceResult, SourceStatus } from './types.js'
