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

/**
 * UTF-8 bytes of `s` as a JSON string literal — `Buffer.byteLength(JSON.stringify(s))` — without
 * building it (a pending-batch item carries its list as a string attribute, so the list's JSON
 * text is escaped once more; sizing 50 lists of ~85 KB by stringifying them cost ~6 MB of RSS at
 * the registration of the 1,200-file event, docs/benchmarks.md).
 */
export function jsonStringBytes(s: string): number {
  let n = 2
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x80) n += c === 0x22 || c === 0x5c ? 2 : c >= 0x20 ? 1 : SHORT_ESCAPES.has(c) ? 2 : 6
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && isLowSurrogate(s.charCodeAt(i + 1))) {
      n += 4
      i++
    } else n += c >= 0xd800 && c <= 0xdfff ? 6 : 3 // a lone surrogate is escaped as \uXXXX
  }
  return n
}

/** Bytes of the list's JSON text as a JSON string (`jsonStringBytes(filesJson(files))`), without building either. */
export function filesJsonStringBytes(files: readonly RegisteredFile[]): number {
  // The brackets, a comma between entries, and each entry escaped (less its own two quotes).
  let n = 2 + 2 + Math.max(0, files.length - 1)
  for (const f of files) n += jsonStringBytes(f.json) - 2
  return n
}

/** \b \t \n \f \r: the control characters JSON escapes in two characters (the rest take six). */
const SHORT_ESCAPES = new Set([0x08, 0x09, 0x0a, 0x0c, 0x0d])
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff
