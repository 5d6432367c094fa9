/**
 * Fixture tables for the Iceberg tests: where they are, and the path map that makes their
 * metadata (written against s3a://warehouse/..., relative data/persistent/..., ./lineitem_iceberg)
 * resolve to the read-only fixture directory.
 */
import { readdirSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { S3Client } from '@aws-sdk/client-s3'
import { createFileIO, withPathMap } from '../../lib/io/index.js'
import type { FileIO } from '../../lib/io/types.js'
import { fixturesDir } from '../helpers/fixtures.js'

export const ICEBERG = fixturesDir('iceberg')

/** A FileIO for local paths only (the S3 client is never called). */
export const localIO: FileIO = createFileIO({ s3: new S3Client({ region: 'us-east-1', endpoint: 'http://127.0.0.1:9' }) })

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) walk(p, out)
    else out.push(p)
  }
  return out
}

export const allFixtureFiles = (): string[] => walk(ICEBERG).sort()

/** Every JSON file that claims to be table metadata (not icebird's decoded Avro dumps or Avro schemas). */
export function metadataJsonFiles(): string[] {
  return allFixtureFiles().filter((f) => f.endsWith('.json'))
}

/** Directories holding a table: a `metadata/` folder with at least one *.metadata.json. */
export function tableDirs(): string[] {
  const dirs = new Set<string>()
  for (const f of allFixtureFiles()) {
    if (!f.endsWith('.metadata.json') || !f.includes('/metadata/')) continue
    const dir = f.slice(0, f.lastIndexOf('/metadata/'))
    if (dir.endsWith('iceberg-cxx/tests')) continue // tests/metadata/: loose broken files, not a table
    dirs.add(dir)
  }
  return [...dirs].sort()
}

export const rel = (p: string) => relative(ICEBERG, p)

/** Prefix map from the table's recorded location (and its parent, for data kept beside it) to `dir`. */
export function tablePathMap(location: string, dir: string): [string, string][] {
  const loc = location.replace(/\/+$/, '')
  const map: [string, string][] = [
    [loc, dir],
    [loc.slice(0, loc.lastIndexOf('/')), dirname(dir)],
  ]
  if (loc.startsWith('./')) map.push([loc.slice(2), dir])
  const duck = join(ICEBERG, 'duckdb-iceberg', 'data', 'persistent')
  if (dir.startsWith(duck)) map.push(['file://data/persistent', duck], ['data/persistent', duck])
  return map.filter(([from]) => from !== '' && from !== '.').sort((a, b) => b[0].length - a[0].length)
}

export function tableIO(location: string, dir: string, base: FileIO = localIO): FileIO {
  return withPathMap(base, tablePathMap(location, dir))
}

/** Rewrites a path with a prefix map (same rule as withPathMap). */
export function mapPath(path: string, map: [string, string][]): string {
  for (const [from, to] of map) {
    if (path === from) return to
    if (path.startsWith(from) && (from.endsWith('/') || path[from.length] === '/')) return to + path.slice(from.length)
  }
  return path
}
