/**
 * Reading and writing metadata files through FileIO: plain, gzip and (when a decoder is
 * installed) zstd JSON; Hadoop-style `vN.metadata.json` + `version-hint.text` (which may hold a
 * file stem instead of a number) and catalog-style `NNNNN-<uuid>.metadata.json`.
 */
import { randomUUID } from 'node:crypto'
import { gunzipSync, gzipSync } from 'node:zlib'
import { createRequire } from 'node:module'
import { IcebergError } from '../errors.js'
import type { FileIO } from '../io/index.js'
import { parseTableMetadata, serializeTableMetadata } from './metadata.js'
import type { TableMetadata } from './types.js'

const isGzip = (b: Uint8Array) => b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b
const isZstd = (b: Uint8Array) => b.length >= 4 && b[0] === 0x28 && b[1] === 0xb5 && b[2] === 0x2f && b[3] === 0xfd

function zstdDecompress(path: string, bytes: Uint8Array): Uint8Array {
  try {
    // Optional: decode zstd only if a decoder happens to be installed (no hard dependency).
    const fzstd = createRequire(import.meta.url)('fzstd') as { decompress(b: Uint8Array): Uint8Array }
    return fzstd.decompress(bytes)
  } catch (err) {
    throw new IcebergError(`${path}: zstd-compressed table metadata needs the 'fzstd' package, which is not installed`, { cause: err })
  }
}

/** Decompresses (by magic bytes, whatever the name says) and parses a metadata file. */
export function decodeMetadataBytes(path: string, bytes: Uint8Array): TableMetadata {
  let raw = bytes
  if (isGzip(raw)) raw = gunzipSync(raw)
  else if (isZstd(raw)) raw = zstdDecompress(path, raw)
  try {
    return parseTableMetadata(new TextDecoder().decode(raw))
  } catch (err) {
    if (err instanceof IcebergError) throw new IcebergError(`${path}: ${err.message}`, { cause: err })
    throw err
  }
}

export async function readTableMetadata(io: FileIO, path: string): Promise<TableMetadata> {
  return decodeMetadataBytes(path, await io.read(path))
}

const trimSlash = (s: string) => s.replace(/\/+$/, '')
const baseName = (p: string) => p.slice(p.lastIndexOf('/') + 1)
const dirName = (p: string) => p.slice(0, p.lastIndexOf('/'))

/** The version number in a metadata file name (`v12.metadata.json`, `00012-<uuid>.metadata.json`, `v3.gz.metadata.json`). */
export function metadataVersion(path: string): number | undefined {
  const m = /^(?:v(\d+)|(\d+)-[^/]*)(?:\.[a-z0-9]+)?\.metadata\.json$/.exec(baseName(path))
  if (!m) return undefined
  return Number(m[1] ?? m[2])
}

/** The metadata directory of a table: `write.metadata.path` or `<location>/metadata`. */
export const metadataDir = (md: TableMetadata): string =>
  trimSlash(md.properties['write.metadata.path'] ?? `${trimSlash(md.location)}/metadata`)

/**
 * The current metadata file of a table at `tableLocation`: version-hint.text (a number N means
 * vN.metadata.json; anything else is a file stem), else the highest-numbered metadata file.
 */
export async function findCurrentMetadataPath(io: FileIO, tableLocation: string): Promise<string> {
  const loc = trimSlash(tableLocation)
  if (loc.endsWith('.metadata.json')) return loc
  const dir = `${loc}/metadata`
  const hintPath = `${dir}/version-hint.text`
  if (await io.exists(hintPath)) {
    const hint = new TextDecoder().decode(await io.read(hintPath)).trim()
    const stems = /^\d+$/.test(hint) ? [`v${hint}`, hint] : [hint.replace(/\.metadata\.json$/, '')]
    for (const stem of stems) {
      for (const candidate of [`${dir}/${stem}.metadata.json`, `${dir}/${stem}.gz.metadata.json`]) {
        if (await io.exists(candidate)) return candidate
      }
    }
  }
  let best: { path: string; version: number } | undefined
  const unnumbered: string[] = []
  for await (const f of io.list(`${dir}/`)) {
    if (!f.path.endsWith('.metadata.json')) continue
    const v = metadataVersion(f.path)
    if (v === undefined) unnumbered.push(f.path)
    else if (!best || v > best.version) best = { path: f.path, version: v }
  }
  if (best) return best.path
  // A lone hand-named file (`vfinal.metadata.json`) is unambiguous; several are not.
  if (unnumbered.length === 1) return unnumbered[0]!
  if (unnumbered.length > 1) throw new IcebergError(`cannot tell the current metadata under ${dir}/: no version-hint.text and no numbered file among ${unnumbered.join(', ')}`)
  throw new IcebergError(`no table metadata under ${dir}/ (no version-hint.text and no *.metadata.json)`)
}

/**
 * `<metadata dir>/NNNNN-<uuid>.metadata.json`, numbered one above the previous file's version;
 * `.gz.metadata.json` when `write.metadata.compression-codec` is gzip (as Iceberg-Java names it).
 */
export function newMetadataPath(md: TableMetadata, previousPath?: string): string {
  const prev = previousPath === undefined ? -1 : (metadataVersion(previousPath) ?? -1)
  const gzip = (md.properties['write.metadata.compression-codec'] ?? '').toLowerCase() === 'gzip'
  return `${metadataDir(md)}/${String(prev + 1).padStart(5, '0')}-${randomUUID()}${gzip ? '.gz' : ''}.metadata.json`
}

/** Writes metadata JSON; gzips when the name ends in `.gz.metadata.json`. */
export async function writeTableMetadata(io: FileIO, path: string, md: TableMetadata): Promise<void> {
  const text = serializeTableMetadata(md)
  const data = path.endsWith('.gz.metadata.json') ? gzipSync(text) : text
  await io.write(path, data, { contentType: 'application/json' })
}

/**
 * Keeps a table readable by Hadoop-catalog readers (Iceberg Java's HadoopTableOperations, DuckDB
 * on a folder): `version-hint.text` holds the integer N and `vN.metadata.json` is the current
 * metadata. A catalog-named current file (`000N-<uuid>.metadata.json`, what Floe's commits write:
 * unique names are what make concurrent writers safe) gets a `vN` copy beside it, written once.
 * Only a file whose name has no version number leaves its stem in the hint (DuckDB reads that).
 */
export async function writeVersionHint(io: FileIO, md: TableMetadata, path: string): Promise<void> {
  const name = baseName(path)
  const version = metadataVersion(path)
  const dir = dirName(path)
  if (version !== undefined && !/^v\d+(?:\.gz)?\.metadata\.json$/.test(name)) {
    const gz = name.endsWith('.gz.metadata.json') ? '.gz' : ''
    const hadoop = `${dir}/v${version}${gz}.metadata.json`
    if (!(await io.exists(hadoop))) await writeTableMetadata(io, hadoop, md)
  }
  const hint = version !== undefined ? String(version) : name.replace(/(\.gz)?\.metadata\.json$/, '')
  await io.write(`${dir}/version-hint.text`, hint, { contentType: 'text/plain' })
}
