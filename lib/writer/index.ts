/** The writer: an MSK batch in, Parquet files and one fenced registration per partition group out. */
export { writeBatch, type WriteOptions } from './pipeline.js'
export type { WriteResult, TableWriteResult, WriterDeps, WriterCatalog, WriterDecoders, ReplayOptions } from './types.js'
export { reportWriteFailure, summarizeWrite, writeMetrics, type WriterSummary } from './summary.js'
export { compileRoutes, type Router, type RouteResult } from './routing.js'
export { BufferPool, estimateRowBytes, partitionKeyOf, type FlushReason, type BufferStats } from './buffers.js'
export { deadLetterLine, deadLetterPath, writeDeadLetters, type DeadLetter, type DeadLetterLine } from './dead-letters.js'
export { dataFilePath, dataLocation } from './files.js'
export { planGroups } from './groups.js'
