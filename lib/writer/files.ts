/**
 * Data files: where a flushed buffer goes and the Iceberg DataFile entry that describes it.
 *
 * Path: `<data location>/<hive partition path>/<writer id>-<seq>-<uuid>.parquet`, the data
 * location being the table property `write.data.path` or `<table location>/data` (as Iceberg
 * Java does). The writer id (the Lambda request id) and a per-invocation sequence number make a
 * file traceable to the invocation that wrote it; the random part keeps two attempts of the
 * same invocation (a zombie and its retry) from ever writing the same object.
 *
 * Object-storage layout (table property `write.object-storage.enabled`, else FLOE_OBJECT_STORAGE_LAYOUT,
 * as Iceberg Java's ObjectStoreLocationProvider): a hash of the file name as four directories of
 * 20 binary digits goes before the partition path, `<data location>/0101/0110/1001/10110010/…`,
 * so writes spread over S3 prefixes instead of one `data/` prefix (docs/scale.md).
 */
import { createHash, randomUUID } from 'node:crypto'
import type { DataFile, PartitionTuple, TableMetadata } from '../iceberg/index.js'
import type { FileIO } from '../io/index.js'

export function dataLocation(md: Pick<TableMetadata, 'location' | 'properties'>): string {
  const explicit = md.properties?.['write.data.path'] ?? md.properties?.['write.folder-storage.path']
  return (explicit ?? `${md.location.replace(/\/+$/, '')}/data`).replace(/\/+$/, '')
}

export function dataFilePath(md: Pick<TableMetadata, 'location' | 'properties'>, partitionPath: string, writerId: string, seq: number, objectStorage = true): string {
  const safeWriter = writerId.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 64) || 'writer'
  const name = `${safeWriter}-${String(seq).padStart(5, '0')}-${randomUUID()}.parquet`
  const enabled = md.properties?.['write.object-storage.enabled']
  const hashed = enabled === undefined ? objectStorage : enabled.toLowerCase() === 'true'
  const base = hashed ? `${(md.properties?.['write.object-storage.path'] ?? dataLocation(md)).replace(/\/+$/, '')}/${hashDirs(name)}` : dataLocation(md)
  return partitionPath ? `${base}/${partitionPath}/${name}` : `${base}/${name}`
}

/** 20 bits of the name's hash as `bbbb/bbbb/bbbb/bbbbbbbb` (Iceberg Java's directory shape). */
function hashDirs(name: string): string {
  const bits = (createHash('sha256').update(name).digest().readUInt32BE(0) >>> 12).toString(2).padStart(20, '0')
  return `${bits.slice(0, 4)}/${bits.slice(4, 8)}/${bits.slice(8, 12)}/${bits.slice(12)}`
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
