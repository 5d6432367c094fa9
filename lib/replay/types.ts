/** What a replay run needs and what it hands back (plain values, for the CLI, the Lambda and tests). */
import type { WriterDeps } from '../writer/index.js'

/** The writer's dependencies: replay goes through the real writer path. */
export type ReplayDeps = WriterDeps

export type SourceStatus = 'replayed' | 'already-replayed' | 'nothing-to-do' | 'refused' | 'failed' | 'would-replay'

/** One replayed source: a failed-batch object or a dead-letter object. */
export interface SourceResult {
  source: string
  status: SourceStatus
  /** Records in the source. */
  records: number
  /** Records that the replay sent through the writer path (the rest were already in the pipeline). */
  replayed: number
  /** Records of a failed batch that a live writer had already registered (not replayed again). */
  alreadyIn: number
  rows: number
  /** Records that failed again: dead letters with their new reason. */
  deadLetters: number
  replayId?: string
  error?: string
}

export interface ReplayRunResult {
  kind: 'failed-batches' | 'dead-letters'
  dryRun: boolean
  sources: number
  replayed: number
  alreadyReplayed: number
  failures: number
  records: number
  rows: number
  deadLetters: number
  results: SourceResult[]
}

/** Test seams (the chaos harness kills a replay at these points). */
export interface ReplayHooks {
  /** Before each source's registration transaction is sent (files written). */
  beforeSource?: (source: string) => Promise<void> | void
}

export function summarize(kind: ReplayRunResult['kind'], dryRun: boolean, results: SourceResult[]): ReplayRunResult {
  const sum = (f: (r: SourceResult) => number) => results.reduce((n, r) => n + f(r), 0)
  return {
    kind,
    dryRun,
    sources: results.length,
    replayed: results.filter((r) => r.status === 'replayed').length,
    alreadyReplayed: results.filter((r) => r.status === 'already-replayed').length,
    failures: results.filter((r) => r.status === 'failed' || r.status === 'refused').length,
    records: sum((r) => r.records),
    rows: sum((r) => r.rows),
    deadLetters: sum((r) => r.deadLetters),
    results,
  }
}
