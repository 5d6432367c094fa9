/** FileIO: the only way Floe touches table files. `s3://bucket/key` and `file:///abs/path` (and `file://relative`). */
export interface FileInfo {
  path: string
  size: number
  lastModified: Date
}

export interface FileIO {
  read(path: string): Promise<Uint8Array>
  /** Whole-object write; creates parent folders for file://. Overwrites. */
  write(path: string, data: Uint8Array | string, options?: { contentType?: string }): Promise<void>
  exists(path: string): Promise<boolean>
  /** Deleting a missing file is not an error. */
  delete(path: string): Promise<void>
  deleteMany(paths: string[]): Promise<void>
  /** Every file under a prefix (recursive), paged under the hood. */
  list(prefix: string): AsyncIterable<FileInfo>
  stat(path: string): Promise<FileInfo | undefined>
}
