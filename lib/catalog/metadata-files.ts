/**
 * The metadata-file side of a catalog commit, shared by every catalog: write the new
 * `NNNNN-<uuid>.metadata.json` BEFORE the pointer swap (so the pointer never names a missing
 * file), record the replaced file in the metadata log, and clean up afterwards.
 *
 * Failed-swap policy (same as Iceberg Java's BaseMetastoreTableOperations): when the swap
 * definitely did not happen (conflict, or the service rejected the request), the new metadata
 * file is deleted at once: nothing references it. When the outcome is unknown
 * (CommitStateUnknownError) the file is LEFT in place, because the swap may have landed and
 * deleting it would corrupt the table; if it did not land, orphan cleanup removes it later. A
 * failed delete is only logged: the file is unreferenced either way.
 */
import { logger } from '../log.js'
import type { FileIO } from '../io/index.js'
import { appendMetadataLog, newMetadataPath, readTableMetadata, writeTableMetadata, type TableMetadata } from '../iceberg/index.js'
import type { CommitRequest } from './types.js'

export interface PreparedCommit {
  /** Where the new metadata was written. */
  path: string
  /** The metadata as written (with the base recorded in its metadata log). */
  metadata: TableMetadata
  /** Old metadata files to delete after a successful swap (write.metadata.delete-after-commit.enabled). */
  obsolete: string[]
}

/** Writes the first metadata file of a new table (`00000-<uuid>.metadata.json`). */
export async function writeInitialMetadata(io: FileIO, metadata: TableMetadata): Promise<string> {
  const path = newMetadataPath(metadata)
  await writeTableMetadata(io, path, metadata)
  return path
}

/** Records `req.base` in the metadata log (unless the caller already did) and writes the new file. */
export async function writeCommitMetadata(io: FileIO, req: CommitRequest): Promise<PreparedCommit> {
  let metadata = req.metadata
  let obsolete: string[] = []
  const log = metadata['metadata-log'] ?? []
  if (log.at(-1)?.['metadata-file'] !== req.base) {
    const base = req.baseMetadata ?? (await readTableMetadata(io, req.base))
    ;({ metadata, obsolete } = appendMetadataLog(metadata, { path: req.base, lastUpdatedMs: base['last-updated-ms'] }))
  }
  const path = newMetadataPath(metadata, req.base)
  await writeTableMetadata(io, path, metadata)
  return { path, metadata, obsolete }
}

/** Deletes a metadata file that no catalog pointer references (a swap that definitely failed). */
export async function discardMetadataFile(io: FileIO, path: string, table: string): Promise<void> {
  try {
    await io.delete(path)
  } catch (err) {
    logger.warn('could not delete an unreferenced metadata file; orphan cleanup will remove it', { table, path, error: String(err) })
  }
}

/** After a successful swap: deletes metadata files that fell off the log, best effort. */
export async function deleteObsoleteMetadata(io: FileIO, paths: string[], table: string): Promise<void> {
  if (paths.length === 0) return
  try {
    await io.deleteMany(paths)
  } catch (err) {
    logger.warn('could not delete obsolete metadata files', { table, paths, error: String(err) })
  }
}
