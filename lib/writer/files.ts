/**
 * Data files: where a flushed buffer goes and the Iceberg DataFile entry that describes it.
 *
 * Path: `<data location>/<hive partition path>/<writer id>-<seq>-<uuid>.parquet`, the data
 * location being the table property `write.data.path` or `<table location>/data` (as Iceberg
 * Java does). The writer id (the Lambda request id) and a per-invocation sequence number make a
 * file traceable to the invocation that wrote it; the random part keeps two attempts of the
 * same invocation (a zombie and its retry) from ever writing the same object.
 */
import { randomUUID } from 'node:crypto'
import type { DataFile, PartitionTuple, TableMetadata } from '../iceberg/types.js'
import type { FileIO } from '../io/types.js'

export function dataLocation(md: Pick<TableMetadata, 'location' | 'properties'>): string {
  const explicit = md.properties?.['write.data.path'] ?? md.properties?.['write.folder-storage.path']
  return (explicit ?? `${md.location.replace(/\/+$/, '')}/data`).replace(/\/+$/, '')
}

export function dataFilePath(md: Pick<TableMetadata, 'location' | 'properties'>, partitionPath: string, writerId: string, seq: number): string {
  const safeWriter = writerId.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 64) || 'writer'
  const name = `${safeWriter}-${String(seq).padStart(5, '0')}-${randomUUID()}.parquet`
  return partitionPath ? `${dataLocation(md)}/${partitionPath}/${name}` : `${dataLocation(md)}/${name}`
}

/** Column metrics as the columnar encoder reports them (the DataFile fields it fills). */
export type ColumnMetrics = Pick<
  DataFile,
  'columnSizes' | 'valueCounts' | 'nullValueCounts' | 'nanValueCounts' | 'lowerBounds' | 'upperBounds' | 'splitOffsets'
>

export interface EncodedChunk {
  bytes: Uint8Array
  recordCount: number
  metrics?: ColumnMetrics
}

/** Write one encoded chunk and describe it. */
export async function writeDataFile(
  io: FileIO,
  path: string,
  chunk: EncodedChunk,
  specId: number,
  partition: PartitionTuple,
): Promise<DataFile> {
  await io.write(path, chunk.bytes, { contentType: 'application/vnd.apache.parquet' })
  return {
    content: 0,
    filePath: path,
    fileFormat: 'PARQUET',
    specId,
    partition,
    recordCount: chunk.recordCount,
    fileSizeInBytes: chunk.bytes.byteLength,
    ...chunk.metrics,
  }
}

/** Tracks the files one attempt wrote so a stale attempt can delete exactly those. */
export class WrittenFiles {
  readonly paths: string[] = []
  #seq = 0

  nextSeq(): number {
    return this.#seq++
  }

  add(path: string): void {
    this.paths.push(path)
  }

  async deleteAll(io: FileIO): Promise<void> {
    if (this.paths.length) await io.deleteMany(this.paths)
    this.paths.length = 0
  }
}
