/** FileIO over the local file system: atomic writes (temp file + rename), recursive listing. */
import { randomUUID } from 'node:crypto'
import { mkdir, open, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { FileNotFoundError } from '../errors.js'
import type { FileInfo, FileSink } from './types.js'

export async function localRead(file: string, path: string): Promise<Uint8Array> {
  try {
    const buf = await readFile(file)
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength)
  } catch (err) {
    if (code(err) === 'ENOENT') throw new FileNotFoundError(path, { cause: err })
    throw err
  }
}

/** Readers never see a half-written file: write a sibling temp file, then rename over the target. */
export async function localWrite(file: string, data: Uint8Array | string): Promise<void> {
  await mkdir(dirname(file), { recursive: true })
  const temp = join(dirname(file), `.${basename(file)}.${randomUUID()}.tmp`)
  try {
    await writeFile(temp, data)
    await rename(temp, file)
  } catch (err) {
    await rm(temp, { force: true })
    throw err
  }
}

export async function localStat(file: string, path: string): Promise<FileInfo | undefined> {
  try {
    const s = await stat(file)
    return s.isFile() ? { path, size: s.size, lastModified: s.mtime } : undefined
  } catch (err) {
    if (code(err) === 'ENOENT' || code(err) === 'ENOTDIR') return undefined
    throw err
  }
}

export async function localDelete(file: string): Promise<void> {
  await rm(file, { force: true })
}

/**
 * Files under a prefix, recursively, like an S3 key prefix: `dir/` lists the directory, `dir/ab`
 * lists entries of `dir` whose names start with `ab`. `toPath` turns a file name back into the
 * caller's path form. Temp files of in-flight writes are skipped.
 */
export async function* localList(prefix: string, toPath: (file: string) => string): AsyncIterable<FileInfo> {
  let dir: string
  let namePrefix: string
  if (prefix.endsWith('/')) {
    dir = prefix
    namePrefix = ''
  } else if ((await stat(prefix).catch(() => undefined))?.isDirectory()) {
    dir = prefix
    namePrefix = ''
  } else {
    dir = dirname(prefix)
    namePrefix = basename(prefix)
  }
  yield* walk(dir, namePrefix, toPath)
}

async function* walk(dir: string, namePrefix: string, toPath: (file: string) => string): AsyncIterable<FileInfo> {
  let entries
  try {
    entries = await readdir(dir, { withFileTypes: true })
  } catch (err) {
    if (code(err) === 'ENOENT' || code(err) === 'ENOTDIR') return
    throw err
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const entry of entries) {
    if (!entry.name.startsWith(namePrefix)) continue
    const full = join(dir, entry.name)
    if (entry.isDirectory()) {
      yield* walk(full, '', toPath)
    } else if (entry.isFile() && !/^\..*\.tmp$/.test(entry.name)) {
      const s = await stat(full).catch(() => undefined)
      if (s) yield { path: toPath(full), size: s.size, lastModified: s.mtime }
    }
  }
}

function code(err: unknown): string | undefined {
  return (err as { code?: string })?.code
}

export async function localReadRange(file: string, path: string, start: number, end: number): Promise<Uint8Array> {
  let handle
  try {
    handle = await open(file, 'r')
  } catch (err) {
    if (code(err) === 'ENOENT') throw new FileNotFoundError(path, { cause: err })
    throw err
  }
  try {
    const out = new Uint8Array(Math.max(0, end - start))
    let done = 0
    while (done < out.length) {
      const { bytesRead } = await handle.read(out, done, out.length - done, start + done)
      if (bytesRead === 0) break
      done += bytesRead
    }
    return done === out.length ? out : out.subarray(0, done)
  } finally {
    await handle.close()
  }
}

/** Appends to a sibling temp file; close renames it over the target (readers never see a partial file). */
export async function localOpenWrite(file: string): Promise<FileSink> {
  await mkdir(dirname(file), { recursive: true })
  const temp = join(dirname(file), `.${basename(file)}.${randomUUID()}.tmp`)
  const handle = await open(temp, 'w')
  let size = 0
  let closed = false
  return {
    buffered: 0,
    async write(bytes) {
      await handle.write(bytes, 0, bytes.byteLength)
      size += bytes.byteLength
    },
    async close() {
      closed = true
      await handle.close()
      await rename(temp, file)
      return size
    },
    async abort() {
      if (!closed) await handle.close().catch(() => undefined)
      closed = true
      await rm(temp, { force: true })
    },
  }
}
