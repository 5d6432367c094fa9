/** FileIO: the only way Floe touches table files. `s3://bucket/key` and `file:///abs/path` (and `file://relative`). */
export interface FileInfo {
  path: string
  size: number
  lastModified: Date
}

/** A file written in parts (S3 multipart upload, or a local temp file renamed on close). */
export interface FileSink {
  /** Appends bytes; may upload a part before returning. */
  write(bytes: Uint8Array): Promise<void>
  /** Bytes written but not uploaded yet (what the sink holds in memory). */
  readonly buffered: number
  /** Makes the file visible; returns its size. */
  close(): Promise<number>
  /** Drops what was written; the file never appears. */
  abort(): Promise<void>
}

export interface FileIO {
  read(path: string): Promise<Uint8Array>
  /** Bytes [start, end) of a file. */
  readRange(path: string, start: number, end: number): Promise<Uint8Array>
  /** A file written in parts of about `partBytes` (S3: at least 5 MiB), never whole in memory. */
  openWrite(path: string, options?: { contentType?: string; partBytes?: number }): Promise<FileSink>
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
