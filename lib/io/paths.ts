/**
 * Path strings FileIO understands. S3: `s3://bucket/key` (and Hadoop's `s3a://`, `s3n://`, which
 * Spark writes into metadata). Local: `file:///abs`, `file://relative`, Hadoop's `file:/abs`, and
 * bare paths (`/abs`, `relative`), which PyIceberg and tests write.
 */
import { isAbsolute, resolve } from 'node:path'

export type ParsedPath = { kind: 's3'; scheme: string; bucket: string; key: string } | { kind: 'file'; path: string }

const S3 = /^(s3[an]?):\/\/([^/]+)\/?(.*)$/

export function parsePath(path: string): ParsedPath {
  const s3 = S3.exec(path)
  if (s3) return { kind: 's3', scheme: s3[1]!, bucket: s3[2]!, key: s3[3]! }
  if (path.startsWith('file://')) {
    const rest = path.slice('file://'.length)
    return { kind: 'file', path: rest.startsWith('/') ? decodeURIComponent(rest) : resolve(decodeURIComponent(rest)) }
  }
  if (path.startsWith('file:')) return { kind: 'file', path: resolve(decodeURIComponent(path.slice('file:'.length))) }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) throw new Error(`unsupported path scheme: ${path} (expected s3://, s3a://, file://)`)
  return { kind: 'file', path: isAbsolute(path) ? path : resolve(path) }
}

/**
 * Join a base location and parts with exactly one `/` between them, keeping the scheme's `//`:
 * `joinPath('s3://b/warehouse/', 'db', '/t/')` → `s3://b/warehouse/db/t`.
 */
export function joinPath(base: string, ...parts: string[]): string {
  const segments = parts.map((p) => p.replace(/^\/+|\/+$/g, '')).filter((p) => p !== '')
  if (segments.length === 0) return base
  // A bare scheme root (`file:///`, `s3://`) keeps its slashes.
  if (/^[a-z][a-z0-9+.-]*:\/*$/i.test(base)) return base + segments.join('/')
  const head = base.replace(/\/+$/, '')
  if (head === '') return (base.startsWith('/') ? '/' : '') + segments.join('/')
  return `${head}/${segments.join('/')}`
}
