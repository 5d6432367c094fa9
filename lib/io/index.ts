/**
 * createFileIO: one FileIO for `s3://` (also `s3a://`, `s3n://`) and local paths (`file://`,
 * `file:/`, bare). withPathMap rewrites path prefixes, so metadata that names
 * `s3://warehouse/db/t` can be read from a fixture copy on disk (and `floe inspect --path-map`).
 */
import type { S3Client } from '@aws-sdk/client-s3'
import { localDelete, localList, localOpenWrite, localRead, localReadRange, localStat, localWrite } from './local.js'
import { parsePath } from './paths.js'
import { s3Delete, s3DeleteMany, s3List, s3Read, s3Stat, s3Write } from './s3.js'
import { s3OpenWrite, s3ReadRange } from './s3-parts.js'
import type { FileInfo, FileIO } from './types.js'

export type { FileInfo, FileIO, FileSink } from './types.js'
export { isInside, joinPath, parsePath } from './paths.js'

export interface FileIOOptions {
  /** ListObjectsV2 page size (tests force paging with a small value); default S3's 1,000. */
  listPageSize?: number
}

export function createFileIO(clients: { s3: S3Client }, opts: FileIOOptions = {}): FileIO {
  const { s3 } = clients
  const stat = (path: string): Promise<FileInfo | undefined> => {
    const p = parsePath(path)
    return p.kind === 's3' ? s3Stat(s3, p, path) : localStat(p.path, path)
  }
  return {
    async read(path) {
      const p = parsePath(path)
      return p.kind === 's3' ? s3Read(s3, p, path) : localRead(p.path, path)
    },
    async readRange(path, start, end) {
      const p = parsePath(path)
      return p.kind === 's3' ? s3ReadRange(s3, p, path, start, end) : localReadRange(p.path, path, start, end)
    },
    async openWrite(path, options) {
      const p = parsePath(path)
      return p.kind === 's3' ? s3OpenWrite(s3, p, options?.partBytes, options?.contentType) : localOpenWrite(p.path)
    },
    async write(path, data, options) {
      const p = parsePath(path)
      return p.kind === 's3' ? s3Write(s3, p, data, options?.contentType) : localWrite(p.path, data)
    },
    async exists(path) {
      return (await stat(path)) !== undefined
    },
    stat,
    async delete(path) {
      const p = parsePath(path)
      return p.kind === 's3' ? s3Delete(s3, p) : localDelete(p.path)
    },
    async deleteMany(paths) {
      const byBucket = new Map<string, string[]>()
      const local: string[] = []
      for (const path of paths) {
        const p = parsePath(path)
        if (p.kind === 's3') byBucket.set(p.bucket, [...(byBucket.get(p.bucket) ?? []), p.key])
        else local.push(p.path)
      }
      for (const [bucket, keys] of byBucket) await s3DeleteMany(s3, bucket, keys)
      await Promise.all(local.map((f) => localDelete(f)))
    },
    list(prefix) {
      const p = parsePath(prefix)
      if (p.kind === 's3') return s3List(s3, p, opts.listPageSize)
      const root = p.path
      return localList(root, (file) => (file.startsWith(root) ? prefix + file.slice(root.length) : `file://${file}`))
    },
  }
}

/**
 * A FileIO that rewrites path prefixes: each call's path starting with `from` is sent to the
 * inner FileIO as `to` + rest; paths coming back from `list` and `stat` are mapped back, so the
 * caller only ever sees its own paths. The first matching pair wins (list longer prefixes first).
 */
export function withPathMap(io: FileIO, map: [from: string, to: string][]): FileIO {
  const forward = (path: string) => swap(path, map)
  const backward = (path: string) => swap(path, map.map(([from, to]) => [to, from] as [string, string]))
  const back = (info: FileInfo): FileInfo => ({ ...info, path: backward(info.path) })
  return {
    read: (path) => io.read(forward(path)),
    readRange: (path, start, end) => io.readRange(forward(path), start, end),
    openWrite: (path, options) => io.openWrite(forward(path), options),
    write: (path, data, options) => io.write(forward(path), data, options),
    exists: (path) => io.exists(forward(path)),
    delete: (path) => io.delete(forward(path)),
    deleteMany: (paths) => io.deleteMany(paths.map(forward)),
    stat: async (path) => {
      const info = await io.stat(forward(path))
      return info && back(info)
    },
    list: (prefix) =>
      (async function* () {
        for await (const info of io.list(forward(prefix))) yield back(info)
      })(),
  }
}

function swap(path: string, map: [string, string][]): string {
  for (const [from, to] of map) {
    if (path === from) return to
    if (path.startsWith(from)) {
      // Map whole path segments: `s3://b/t` must not capture `s3://b/table2`.
      const rest = path.slice(from.length)
      if (from.endsWith('/') || rest.startsWith('/')) return joinSegments(to, rest)
    }
  }
  return path
}

function joinSegments(to: string, rest: string): string {
  if (to.endsWith('/') && rest.startsWith('/')) return to + rest.slice(1)
  if (!to.endsWith('/') && !rest.startsWith('/') && rest !== '') return `${to}/${rest}`
  return to + rest
}
