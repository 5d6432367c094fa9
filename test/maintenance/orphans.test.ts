import { describe, expect, it } from 'vitest'
import { parseTableId } from '../../lib/catalog/index.js'
import { commitTable } from '../../lib/commit/table.js'
import { readPendingBatches } from '../../lib/control/pending.js'
import { liveDataFiles } from '../../lib/iceberg/scan.js'
import type { FileIO } from '../../lib/io/types.js'
import { removeOrphanFiles, removeOrphanSpills, scanPrefixes } from '../../lib/maintenance/orphans.js'
import type { MaintenanceDeps } from '../../lib/maintenance/types.js'
import { testCommit } from '../commit/context.js'

const HOUR = 3_600_000

async function listAll(io: FileIO, prefix: string): Promise<string[]> {
  const out: string[] = []
  for await (const f of io.list(prefix)) out.push(f.path)
  return out.sort()
}

/**
 * A table with two committed snapshots (three data files), one pending batch (spilled file
 * list), real bytes behind every data file, and strays: an unregistered data file, an
 * unreferenced metadata file and manifest, an unknown file in metadata/, a file outside data/.
 */
async function fixture() {
  const t = await testCommit({ spillThresholdBytes: 1 })
  const { name, location } = await t.table()
  const io = t.deps.io
  const committed = [...(await t.register(name, { files: 2 }))]
  expect((await commitTable(t.deps, name)).status).toBe('committed')
  committed.push(...(await t.register(name)))
  expect((await commitTable(t.deps, name)).status).toBe('committed')
  const pending = await t.register(name, { files: 2 })
  for (const f of [...committed, ...pending]) await io.write(f.filePath, 'parquet bytes')
  const [batch] = await readPendingBatches(t.deps.control, 'p1', name)
  expect(batch?.spillPath).toBeDefined()
  const strays = {
    data: `${location}/data/ts_day=2024-05-01/crashed-writer-00000-0.parquet`,
    metadata: `${location}/metadata/00009-failed-commit.metadata.json`,
    manifest: `${location}/metadata/failed-commit-m0.avro`,
    manifestList: `${location}/metadata/snap-1-1-failed.avro`,
  }
  const kept = {
    unknown: `${location}/metadata/notes.txt`,
    outside: `${location}/elsewhere/foreign-engine.parquet`,
  }
  for (const p of [...Object.values(strays), ...Object.values(kept)]) await io.write(p, 'stray')
  const strayStill = `${t.deps.control.spillPrefix}/0123-stale-attempt.json`
  await io.write(strayStill, '[]')
  // Every file is "old" under this clock: 2 hours from now, with a 1 hour horizon.
  const deps: MaintenanceDeps = { ...t.deps, now: () => Date.now() + 2 * HOUR }
  return { t, deps, io, name, location, committed, pending, strays, kept, spill: batch!.spillPath!, straySpill: strayStill }
}

describe('removeOrphanFiles', () => {
  it('deletes old unreferenced data and metadata files and nothing a snapshot or pending batch references', async () => {
    const f = await fixture()
    const before = await listAll(f.io, `${f.location}/`)
    const result = await removeOrphanFiles(f.deps, f.name, { olderThanMs: HOUR })
    expect(result.orphans.sort()).toEqual(Object.values(f.strays).sort())
    expect(result.deleted).toBe(4)
    expect(result.skipped).toBe(1) // notes.txt
    const after = await listAll(f.io, `${f.location}/`)
    expect(after).toEqual(before.filter((p) => !Object.values(f.strays).includes(p)))
    // Referenced files, by kind: committed data of both snapshots, pending data, everything the metadata reaches.
    for (const file of [...f.committed, ...f.pending]) expect(after).toContain(file.filePath)
    expect(after).toContain(f.kept.outside)
    const { metadata } = await f.t.catalog.loadTable(parseTableId(f.name))
    expect(metadata.snapshots).toHaveLength(2)
    for (const s of metadata.snapshots) {
      expect(after).toContain(s['manifest-list'])
      expect((await liveDataFiles(f.io, metadata, s['snapshot-id'])).length).toBeGreaterThan(0)
    }
    for (const entry of metadata['metadata-log']) expect(after).toContain(entry['metadata-file'])
    // The pending batch still commits with its files.
    expect(await commitTable(f.t.deps, f.name)).toMatchObject({ status: 'committed', files: 2 })
    expect((await f.t.livePaths(f.name)).sort()).toEqual([...f.committed, ...f.pending].map((x) => x.filePath).sort())
  })

  it('keeps unreferenced files younger than the horizon', async () => {
    const f = await fixture()
    const before = await listAll(f.io, `${f.location}/`)
    const result = await removeOrphanFiles({ ...f.deps, now: () => Date.now() }, f.name)
    expect(result).toMatchObject({ deleted: 0, young: 4 })
    expect(result.orphans).toEqual([])
    expect(await listAll(f.io, `${f.location}/`)).toEqual(before)
  })

  it('a dry run lists the orphans and deletes nothing', async () => {
    const f = await fixture()
    const before = await listAll(f.io, `${f.location}/`)
    const result = await removeOrphanFiles(f.deps, f.name, { olderThanMs: HOUR, dryRun: true })
    expect(result.orphans.sort()).toEqual(Object.values(f.strays).sort())
    expect(result).toMatchObject({ deleted: 0, dryRun: true })
    expect(await listAll(f.io, `${f.location}/`)).toEqual(before)
  })

  it('a table whose manifest is missing fails and deletes nothing', async () => {
    const f = await fixture()
    const { metadata } = await f.t.catalog.loadTable(parseTableId(f.name))
    const manifests = (await listAll(f.io, `${f.location}/metadata/`)).filter((p) => p.endsWith('.avro') && !p.includes('/snap-') && !p.includes('failed'))
    expect(manifests.length).toBeGreaterThan(0)
    await f.io.delete(manifests[0]!)
    const before = await listAll(f.io, `${f.location}/`)
    await expect(removeOrphanFiles(f.deps, f.name, { olderThanMs: HOUR })).rejects.toThrow(/no orphan is deleted/)
    expect(await listAll(f.io, `${f.location}/`)).toEqual(before)
    expect(metadata.snapshots).toHaveLength(2)
  })
})

describe('removeOrphanSpills', () => {
  it("deletes old spilled file lists no pending batch names and keeps the pending batch's", async () => {
    const f = await fixture()
    const prefix = `${f.t.deps.control.spillPrefix}/`
    const dry = await removeOrphanSpills(f.deps, { olderThanMs: HOUR, dryRun: true })
    expect(dry.orphans).toEqual([f.straySpill])
    expect(await listAll(f.io, prefix)).toEqual([f.spill, f.straySpill].sort())
    const result = await removeOrphanSpills(f.deps, { olderThanMs: HOUR })
    expect(result).toMatchObject({ deleted: 1, referenced: 1 })
    expect(await listAll(f.io, prefix)).toEqual([f.spill])
  })
})

describe('scanPrefixes', () => {
  it('lists data and metadata folders under the table location only', () => {
    expect(scanPrefixes({ location: 's3://b/db/t', properties: {} })).toEqual(['s3://b/db/t/data/', 's3://b/db/t/metadata/'])
    expect(scanPrefixes({ location: 's3://b/db/t/', properties: { 'write.data.path': 's3://shared/data' } })).toEqual(['s3://b/db/t/data/', 's3://b/db/t/metadata/'])
    expect(scanPrefixes({ location: 's3://b/db/t', properties: { 'write.data.path': 's3://b/db/t/files' } })).toEqual([
      's3://b/db/t/data/',
      's3://b/db/t/files/',
      's3://b/db/t/metadata/',
    ])
    expect(scanPrefixes({ location: 's3://b/db/t', properties: { 'write.data.path': 's3://b/db/t/data/x' } })).toEqual(['s3://b/db/t/data/', 's3://b/db/t/metadata/'])
  })
})
