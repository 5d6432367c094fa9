/**
 * A pending batch's file list as the control table stores it (`filesJson`: a JSON array of
 * lib/iceberg's dataFileToJSON objects). A writer may hand a file over already in that form
 * (`EncodedFile`, serialised once when the file was written: a few KB of one-byte string
 * instead of ~60 KB of metric Maps and Uint8Array bounds held until the registration).
 */
import { dataFileToJSON } from '../iceberg/datafile-json.js'
import type { DataFile } from '../iceberg/types.js'

/** A data file in its registration form: `json` is `JSON.stringify(dataFileToJSON(file))`. */
export interface EncodedFile {
  json: string
  filePath: string
  recordCount: number
  fileSizeInBytes: number
}

export type RegisteredFile = DataFile | EncodedFile

export const encodeFile = (f: DataFile): EncodedFile => ({
  json: JSON.stringify(dataFileToJSON(f)),
  filePath: f.filePath,
  recordCount: f.recordCount,
  fileSizeInBytes: f.fileSizeInBytes,
})

/** The list's JSON text: byte-identical to `JSON.stringify(files.map(dataFileToJSON))`. */
export function filesJson(files: readonly RegisteredFile[]): string {
  return `[${files.map((f) => ('json' in f ? f.json : JSON.stringify(dataFileToJSON(f)))).join(',')}]`
}
