/**
 * What a writer invocation reports: the summary it answers with (and logs), its metrics, and how
 * a failed batch is reported. The writer Lambda (functions/writer.ts) emits these through
 * lib/log's emitMetrics.
 */
import { BackpressureError, BatchDeferredError } from '../errors.js'
import { emitMetrics, logger, MetricUnit, type MetricValues } from '../log.js'
import type { WriteResult } from './types.js'

export interface WriterSummary {
  outcome: WriteResult['outcome']
  recordsIn: number
  deadLetters: number
  dropped: number
  belowCheckpoint: number
  /** Records the scanner lane read straight into columns (FLOE_WRITER_SCAN). */
  recordsScanned: number
  tables: { table: string; rows: number; files: number }[]
}

export function summarizeWrite(r: WriteResult): WriterSummary {
  return {
    outcome: r.outcome,
    recordsIn: r.recordsIn,
    deadLetters: r.deadLetters,
    dropped: r.dropped,
    belowCheckpoint: r.belowCheckpoint,
    recordsScanned: r.recordsScanned,
    tables: r.tables.map((t) => ({ table: t.table, rows: t.rows, files: t.files })),
  }
}

/** The metrics of a written batch that took `ms`. */
export function writeMetrics(r: WriteResult, ms: number): MetricValues {
  return {
    RecordsIn: r.recordsIn,
    RecordsWritten: r.tables.reduce((n, t) => n + t.rows, 0),
    BytesWritten: { value: r.bytesWritten, unit: MetricUnit.Bytes },
    FilesWritten: r.tables.reduce((n, t) => n + t.files, 0),
    DeadLetters: r.deadLetters,
    RecordsDropped: r.dropped,
    RecordsBelowCheckpoint: r.belowCheckpoint,
    RecordsScanned: r.recordsScanned,
    FlushesBudget: r.flushes.budget,
    FlushesTargetSize: r.flushes['target-size'],
    FlushesEnd: r.flushes.end,
    PeakBufferedBytes: { value: r.peakBufferedBytes, unit: MetricUnit.Bytes },
    WriteDuration: { value: ms, unit: MetricUnit.Milliseconds },
  }
}

/** A batch that failed after `ms`: its metrics and log line (back pressure and a deferred rest are warnings, the rest errors). */
export function reportWriteFailure(err: unknown, ms: number): void {
  const duration = { WriteDuration: { value: ms, unit: MetricUnit.Milliseconds } }
  if (err instanceof BackpressureError) {
    emitMetrics({ ...duration, BackpressureRejections: 1 })
    logger.warn('back pressure: the batch waits in Kafka', { error: err.message })
  } else if (err instanceof BatchDeferredError) {
    emitMetrics({ ...duration, BatchesDeferred: 1 })
    logger.warn('part of the batch registered; the rest waits for the next delivery', { error: err.message })
  } else {
    emitMetrics(duration)
    logger.error('batch failed', { error: err as Error })
  }
}
