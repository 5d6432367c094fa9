/**
 * A pending batch's file list as the control table stores it (`filesJson`: a JSON array). lib/control
 * does not know what a file entry is: the writer hands each file over already serialised
 * (`EncodedFile`, encoded once when the file was written — lib/iceberg's `encodeDataFile` — a few
 * KB of one-byte string instead of ~60 KB of metric Maps and Uint8Array bounds held until the
 * registration), and readers decode the entries they get back (`loadBatchFiles`' `decode`).
 */

/** A file in its registration form: `json` is the entry's JSON text; the rest is what the registration counts. */
export interface EncodedFile {
  json: string
  filePath: string
  recordCount: number
  fileSizeInBytes: number
}

/** What a writer registers: files in their registration form. */
export type RegisteredFile = EncodedFile

/** The list's JSON text: the entries' JSON, in order. */
export function filesJson(files: readonly RegisteredFile[]): string {
  return `[${files.map((f) => f.json).join(',')}]`
}
