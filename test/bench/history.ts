/**
 * What a table's history costs, built through real appends (lib/iceberg appendFiles: a manifest
 * per commit, the parent's manifest list carried forward, manifests merged every 100 commits) on a
 * file:// warehouse, with the metadata log kept as the catalog keeps it. At each checkpoint the
 * metadata is written and measured: its size, a writer's table load without the cache (read +
 * parse the metadata file, what every invocation paid before) and with it (a cache hit by
 * location), then the same after snapshot expiry (Iceberg defaults: 5 days, keep 1).
 *
 *   node --import tsx test/bench/history.ts [--commits 10,1000,10000] [--json]
 *
 * (`npm run bench -- --history 10,1000,10000` runs it as part of the suite; --json prints the
 * rows as one JSON line at the end instead of the table.)
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { MetadataCache } from '../../lib/catalog/metadata-cache.js'
import { appendFiles } from '../../lib/iceberg/append.js'
import { planExpiry } from '../../lib/iceberg/expire.js'
import { appendMetadataLog, newTableMetadata } from '../../lib/iceberg/metadata.js'
import { readTableMetadata, writeTableMetadata } from '../../lib/iceberg/metadata-io.js'
import { createFileIO } from '../../lib/io/index.js'
import { parsePartitionBy } from '../../lib/iceberg/partition.js'
import { SCHEMA } from '../maintenance/context.js'

const { values } = parseArgs({ options: { commits: { type: 'string', default: '10,1000,10000' }, json: { type: 'boolean', default: false } } })
const checkpoints = values.commits.split(',').map(Number).sort((a, b) => a - b)
const dir = await mkdtemp(join(tmpdir(), 'floe-history-'))
const io = createFileIO({} as never)
const DAY = 86_400_000
const start = Date.now() - 30 * DAY
let md = newTableMetadata({ location: `file://${dir}/t`, schema: SCHEMA, spec: parsePartitionBy(SCHEMA, ['region']), nowMs: start })

async function loadMs(path: string, cache?: MetadataCache): Promise<number> {
  const runs = 5
  const t0 = performance.now()
  for (let i = 0; i < runs; i++) await (cache ? cache.read(io, path) : readTableMetadata(io, path))
  return (performance.now() - t0) / runs
}

async function measure(label: string, m: typeof md, commits: number) {
  const path = `file://${dir}/t/metadata/${label}-${commits}.metadata.json`
  await writeTableMetadata(io, path, m)
  const size = (await io.stat(path))!.size
  const cache = new MetadataCache(4)
  await cache.read(io, path)
  return { size, uncached: await loadMs(path), cached: await loadMs(path, cache), snapshots: m.snapshots.length }
}

const rows: Record<string, number>[] = []
const print = (line: string) => {
  if (!values.json) console.log(line)
}

print('| commits | metadata.json before expiry | table load (parse) | table load (cached) | snapshots after expiry | metadata.json after | table load after (parse) | table load after (cached) |')
print('|---:|---:|---:|---:|---:|---:|---:|---:|')
let previous = 'none'
const began = performance.now()
for (let c = 1; c <= checkpoints.at(-1)!; c++) {
  // One commit a minute, one small file each, the last 30 days.
  const now = start + c * 60_000
  const file = { content: 0 as const, filePath: `file://${dir}/t/data/region=r${c % 4}/f-${c}.parquet`, fileFormat: 'PARQUET' as const, specId: 0, partition: [`r${c % 4}`], recordCount: 100, fileSizeInBytes: 20_000 }
  const next = await appendFiles(io, md, [file], { nowMs: now, summary: { 'floe.offsets.floe': JSON.stringify({ 'events-0': c * 100 }) } })
  md = appendMetadataLog(next, { path: previous, lastUpdatedMs: md['last-updated-ms'] }).metadata
  previous = `file://${dir}/t/metadata/${String(c).padStart(5, '0')}.metadata.json`
  if (c % 500 === 0) console.error(`[history] ${c} commits, ${((performance.now() - began) / 1000).toFixed(0)} s`)
  if (!checkpoints.includes(c)) continue
  const before = await measure('before', md, c)
  const expired = planExpiry(md, start + 30 * DAY + c * 60_000).metadata
  const after = await measure('after', expired, c)
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`
  print(`| ${c.toLocaleString('en')} | ${kb(before.size)} | ${before.uncached.toFixed(2)} ms | ${before.cached.toFixed(3)} ms | ${after.snapshots} | ${kb(after.size)} | ${after.uncached.toFixed(2)} ms | ${after.cached.toFixed(3)} ms |`)
  const r3 = (n: number) => Math.round(n * 1000) / 1000
  rows.push({ commits: c, metadataBytesBefore: before.size, loadParsedMs: r3(before.uncached), loadCachedMs: r3(before.cached), snapshotsAfter: after.snapshots, metadataBytesAfter: after.size, loadParsedAfterMs: r3(after.uncached), loadCachedAfterMs: r3(after.cached) })
}
await rm(dir, { recursive: true, force: true })
if (values.json) console.log(JSON.stringify(rows))
