/**
 * Path strings FileIO understands. S3: `s3://bucket/key` (and Hadoop's `s3a://`, `s3n://`, which
 * Spark writes into metadata). Local: `file:///abs`, `file://relative`, Hadoop's `file:/abs`, and
 * bare paths (`/abs`, `relative`), which PyIceberg and tests write.
 */
import { isAbsolute, resolve, sep } from 'node:path'

export type ParsedPath = { kind: 's3'; scheme: string; bucket: string; key: string } | { kind: 'file'; path: string }

const S3 = /^(s3[an]?):\/\/([^/]+)\/?(.*)$/

export function parsePath(path: string): ParsedPath {
  const s3 = S3.exec(path)
  if (s3) return { kind: 's3', scheme: s3[1]!, bucket: s3[2]!, key: s3[3]! }
  if (path.startsWith('file://')) {
    const rest = path.slice('file://'.length)
    return { kind: 'file', path: rest.startsWith('/') ? decodeSegments(rest) : resolve(decodeSegments(rest)) }
  }
  if (path.startsWith('file:')) return { kind: 'file', path: resolve(decodeSegments(path.slice('file:'.length))) }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) throw new Error(`unsupported path scheme: ${path} (expected s3://, s3a://, file://)`)
  return { kind: 'file', path: isAbsolute(path) ? path : resolve(path) }
}

/**
 * Percent-decode a local path segment by segment, never letting decoding make a new path
 * separator, a `.`/`..` segment or a NUL: `p=%2F..%2F..%2Fescaped` (an escaped partition value)
 * stays that literal directory name, as Hadoop's Path keeps it, instead of climbing out of the
 * table location. A segment that is not valid percent-encoding is kept as written.
 */
function decodeSegments(path: string): string {
  return path
    .split('/')
    .map((seg) => {
      if (!seg.includes('%')) return seg
      let decoded: string
      try {
        decoded = decodeURIComponent(seg)
      } catch {
        return seg
      }
      return /[/\\\0]/.test(decoded) || decoded === '.' || decoded === '..' ? seg : decoded
    })
    .join('/')
}

/** True when `path` (any scheme FileIO reads) is `base` itself or inside it, after resolving `.`/`..` (file://). */
export function isInside(base: string, path: string): boolean {
  const b = parsePath(base)
  const p = parsePath(path)
  if (b.kind === 's3' && p.kind === 's3') {
    if (b.bucket !== p.bucket || p.key.split('/').some((seg) => seg === '.' || seg === '..')) return false
    const prefix = b.key.replace(/\/+$/, '')
    return prefix === '' || p.key === prefix || p.key.startsWith(`${prefix}/`)
  }
  if (b.kind === 'file' && p.kind === 'file') {
    const root = resolve(b.path)
    const target = resolve(p.path)
    return target === root || target.startsWith(root.endsWith(sep) ? root : root + sep)
  }
  return false
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
