/**
 * The rows of a compaction group's input files as a stream of chunks, in bounded memory: each
 * file is opened by its footer alone (ranged reads), each of its row groups is read in windows of
 * about FLOE_COMPACT_CHUNK_MB of rows (hyparquet fetches just that row group's column chunks),
 * and rows are handed on once a chunk's worth is buffered. Every step declares what it holds to
 * the group's CompactionBudget before it holds it.
 */
import type { DataFile } from '../iceberg/index.js'
import type { FileIO } from '../io/index.js'
import type { StructType } from '../schema/index.js'
import type { Row } from '../writer/index.js'
import { IcebergError } from '../errors.js'
import { JS_ROW_FACTOR, type CompactionBudget } from './budget.js'
import { openRows, rangedFile } from './read-rows.js'

/** hyparquet's first footer fetch (its default initialFetchSize). */
const FOOTER_FETCH = 512 * 1024
/** Parquet's usual data page size (parquet-wasm's and Spark's default). */
const PAGE = 1024 * 1024

export async function* streamRows(io: FileIO, schema: StructType, inputs: DataFile[], chunkBytes: number, budget: CompactionBudget): AsyncGenerator<Row[]> {
  let buffer: Row[] = []
  let bufferBytes = 0
  const holdRows = () => budget.set('rows', Math.ceil(bufferBytes * JS_ROW_FACTOR), 'rows buffered for the writer')
  for (const f of inputs) {
    budget.set('footer', Math.min(f.fileSizeInBytes, FOOTER_FETCH), `footer of ${f.filePath}`)
    // A file no larger than the first footer fetch is read once, whole, and kept while it is read.
    const whole = f.fileSizeInBytes <= FOOTER_FETCH
    const src = await openRows(rangedFile(io, f.filePath, f.fileSizeInBytes, FOOTER_FETCH), schema, f.filePath)
    budget.set('footer', (whole ? f.fileSizeInBytes : 0) + src.metadata.metadata_length * JS_ROW_FACTOR, `footer of ${f.filePath}`)
    if (src.rows !== f.recordCount) throw new IcebergError(`${f.filePath}: the file holds ${src.rows} rows, its manifest entry says ${f.recordCount}; not compacting`)
    let groupStart = 0
    for (const g of src.groups) {
      for (let start = 0, end = 0; start < g.rows; start = end) {
        // Never more than a chunk buffered: the window is what the chunk has room for.
        end = Math.min(g.rows, start + Math.max(1, Math.floor((chunkBytes - bufferBytes) / src.rowBytes)))
        const what = `row group of ${g.rows} rows in ${f.filePath}`
        // Charged as the whole row group's column chunks, though the offset index lets hyparquet fetch only the window's pages.
        budget.set('fetched', g.compressed, what)
        // Decoded: the window's rows plus up to one page per column on either side, as JS values.
        const decoded = Math.min(g.uncompressed, ((end - start) / g.rows) * g.uncompressed + 2 * PAGE * src.leaves)
        budget.set('decoded', Math.ceil(decoded * JS_ROW_FACTOR), what)
        const rows = await src.read(groupStart + start, groupStart + end)
        budget.set('fetched', 0)
        budget.set('decoded', 0)
        for (const r of rows) buffer.push(r)
        bufferBytes += rows.length * src.rowBytes
        holdRows()
        if (bufferBytes >= chunkBytes) {
          yield buffer
          buffer = []
          bufferBytes = 0
          holdRows()
        }
      }
      groupStart += g.rows
    }
    budget.set('footer', 0)
  }
  if (buffer.length > 0) yield buffer
  buffer = []
  bufferBytes = 0
  holdRows()
}
