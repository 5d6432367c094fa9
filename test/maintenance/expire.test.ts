import { describe, expect, it } from 'vitest'
import { parseTableId } from '../../lib/catalog/index.js'
import { commitTable } from '../../lib/commit/table.js'
import { registerBatches } from '../../lib/control/batches.js'
import { readCheckpoints } from '../../lib/control/checkpoints.js'
import { appendFiles } from '../../lib/iceberg/append.js'
import { currentSnapshot } from '../../lib/iceberg/metadata.js'
import { liveDataFiles } from '../../lib/iceberg/scan.js'
import { runMaintenance } from '../../lib/maintenance/run.js'
import { batchInput, range } from '../control/context.js'
import { missingReferenced, row, testMaintenance } from './context.js'

const DAY = 86_400_000

describe('snapshot expiry', () => {
  it('after compaction, expires old snapshots and deletes only what no kept snapshot, tag or pending batch reaches', async () => {
    let clock = Date.now()
    const m = await testMaintenance({}, () => clock)
    const table = await m.table({ 'write.target-file-size-bytes': String(64 * 1024) })
    let id = 0
    for (let c = 0; c < 5; c++) await m.append(table, Array.from({ length: 20 }, () => row(id, `r${id++ % 2}`)))
    const tid = parseTableId(table)
    const { metadata: before, metadataLocation } = await m.t.catalog.loadTable(tid)
    const originals = (await liveDataFiles(m.t.deps.io, before)).map((e) => e.dataFile)
    // A tag on the second snapshot keeps it (and its two files).
    const tagged = before.snapshots[1]!
    await m.t.catalog.commit(tid, { base: metadataLocation, metadata: { ...before, refs: { ...before.refs, audit: { 'snapshot-id': tagged['snapshot-id'], type: 'tag' } } }, baseMetadata: before })
    // A pending batch that names one of the oldest files (a committer that crashed before marking, say).
    const inTagged = new Set((await liveDataFiles(m.t.deps.io, before, tagged['snapshot-id'])).map((e) => e.dataFile.filePath))
    const named = originals.find((f) => !inTagged.has(f.filePath))!
    const expected = await readCheckpoints(m.t.deps.control, 'p1', [{ topic: 'other', partition: 0 }])
    await registerBatches(m.t.deps.control, { pipeline: 'p1', writerId: 'w', expected, next: new Map([['other-0', 5n]]), batches: [batchInput(table, [range('other', 0, 0n, 5n)], [named], 0, 0)] })

    const rowsBefore = (await m.readBack(table)).rows
    clock += 6 * DAY
    const run = await runMaintenance(m.deps, { tables: [table], tasks: ['compact', 'expire'] })
    expect(run.failures).toBe(0)
    const r = run.results[0]!
    expect(r.compaction).toMatchObject({ filesRewritten: 10, filesWritten: 2 })
    expect(r.expiry!.snapshotsExpired).toBe(4) // 6 snapshots (5 appends + replace) − current − the tagged one
    expect(r.expiry!.protectedByPending).toBe(1)
    expect(r.expiry!.metadataBytesAfter).toBeLessThan(r.expiry!.metadataBytesBefore)

    const { metadata } = await m.t.catalog.loadTable(tid)
    expect(metadata.snapshots.map((s) => s['snapshot-id'])).toEqual([tagged['snapshot-id'], currentSnapshot(metadata)!['snapshot-id']])
    expect(currentSnapshot(metadata)!.summary['floe.offsets.p1']).toBeDefined()
    expect(await missingReferenced(m.t.deps.io, metadata)).toEqual([])
    expect((await m.readBack(table)).rows).toEqual(rowsBefore)
    const taggedFiles = new Set((await liveDataFiles(m.t.deps.io, metadata, tagged['snapshot-id'])).map((e) => e.dataFile.filePath))
    for (const f of originals) {
      const kept = taggedFiles.has(f.filePath) || f.filePath === named.filePath
      expect(await m.t.deps.io.exists(f.filePath)).toBe(kept)
    }
  })

  it('keeps the newest snapshot that carries floe offsets however many other snapshots follow it', async () => {
    let clock = Date.now()
    const m = await testMaintenance({}, () => clock)
    const table = await m.table({ 'history.expire.max-snapshot-age-ms': '1000' })
    await m.append(table, [row(1, 'r0')])
    await m.append(table, [row(2, 'r0')])
    const tid = parseTableId(table)
    for (let i = 0; i < 3; i++) {
      const { metadata, metadataLocation } = await m.t.catalog.loadTable(tid)
      const next = await appendFiles(m.t.deps.io, metadata, [], { summary: { 'spark.app.id': `other-${i}` } })
      await m.t.catalog.commit(tid, { base: metadataLocation, metadata: next, baseMetadata: metadata })
    }
    clock += DAY
    const run = await runMaintenance(m.deps, { tables: [table], tasks: ['expire'] })
    expect(run.results[0]!.expiry!.snapshotsExpired).toBe(3)
    const { metadata } = await m.t.catalog.loadTable(tid)
    const kept = metadata.snapshots.map((s) => s.summary['spark.app.id'] ?? 'floe')
    expect(kept).toEqual(['floe', 'other-2'])
    // A re-delivered (already committed) batch is still recognised as covered.
    expect((await commitTable(m.t.deps, table)).status).toBe('idle')
    expect(await missingReferenced(m.t.deps.io, metadata)).toEqual([])
  })

  it('honours min-snapshots-to-keep and a dry run changes nothing', async () => {
    let clock = Date.now()
    const m = await testMaintenance({}, () => clock)
    const table = await m.table({ 'history.expire.min-snapshots-to-keep': '3' })
    for (let i = 0; i < 5; i++) await m.append(table, [row(i, 'r0')])
    clock += 30 * DAY
    const dry = await runMaintenance(m.deps, { tables: [table], tasks: ['expire'], dryRun: true })
    expect(dry.results[0]!.expiry).toMatchObject({ snapshotsExpired: 2, dryRun: true })
    expect((await m.t.catalog.loadTable(parseTableId(table))).metadata.snapshots).toHaveLength(5)
    const run = await runMaintenance(m.deps, { tables: [table], tasks: ['expire'] })
    expect(run.results[0]!.expiry!.snapshotsExpired).toBe(2)
    const { metadata } = await m.t.catalog.loadTable(parseTableId(table))
    expect(metadata.snapshots).toHaveLength(3)
    expect(metadata['snapshot-log']).toHaveLength(3)
    expect(await missingReferenced(m.t.deps.io, metadata)).toEqual([])
    expect((await m.readBack(table)).rows).toHaveLength(5)
  })

  it('FLOE_EXPIRE_MAX_SNAPSHOTS bounds a branch whose age is Iceberg\'s default; a table that sets its age keeps exactly Iceberg\'s rule', async () => {
    const m = await testMaintenance({ expireMaxSnapshots: 3 })
    const bounded = await m.table()
    const aged = await m.table({ 'history.expire.max-snapshot-age-ms': String(5 * DAY) })
    for (let i = 0; i < 7; i++) {
      await m.append(bounded, [row(i, `r${i % 2}`)])
      await m.append(aged, [row(i, `r${i % 2}`)])
    }
    // All seven are minutes old, far younger than 5 days: only the bound expires any.
    const run = await runMaintenance(m.deps, { tables: [bounded, aged], tasks: ['expire'] })
    const byTable = new Map(run.results.map((r) => [r.table, r.expiry!]))
    expect(byTable.get(bounded)).toMatchObject({ snapshotsBefore: 7, snapshotsExpired: 4 })
    expect(byTable.get(aged)).toMatchObject({ snapshotsBefore: 7, snapshotsExpired: 0 })
    const { metadata } = await m.t.catalog.loadTable(parseTableId(bounded))
    // The three newest of main's ancestry stay, the current one first.
    const ids = metadata.snapshots.map((s) => s['snapshot-id'])
    expect(ids).toHaveLength(3)
    expect(ids).toContain(currentSnapshot(metadata)!['snapshot-id'])
    expect(await missingReferenced(m.t.deps.io, metadata)).toEqual([])
    expect((await m.readBack(bounded)).rows).toHaveLength(7)
    expect((await m.t.catalog.loadTable(parseTableId(aged))).metadata.snapshots).toHaveLength(7)
  })

  it('the bound never keeps fewer than min-snapshots-to-keep, and 0 turns it off', async () => {
    const m = await testMaintenance({ expireMaxSnapshots: 2 })
    const table = await m.table({ 'history.expire.min-snapshots-to-keep': '4' })
    for (let i = 0; i < 6; i++) await m.append(table, [row(i, 'r0')])
    expect((await runMaintenance(m.deps, { tables: [table], tasks: ['expire'] })).results[0]!.expiry!.snapshotsExpired).toBe(2)
    const off = await testMaintenance({ expireMaxSnapshots: 0 })
    const free = await off.table()
    for (let i = 0; i < 4; i++) await off.append(free, [row(i, 'r0')])
    expect((await runMaintenance(off.deps, { tables: [free], tasks: ['expire'] })).results[0]!.expiry!.snapshotsExpired).toBe(0)
  })
})
