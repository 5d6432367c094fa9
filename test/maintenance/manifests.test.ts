/**
 * Manifest rewrite (lib/maintenance/manifests.ts) on DynamoDB Local + s3rver, checked with the
 * independent reader (plain Avro for manifest lists and manifests, hyparquet for data): same live
 * files and rows, fewer manifests, every entry's sequence numbers and snapshot id as before, a
 * `replace` snapshot carrying the floe.* keys, and the committer appending on top afterwards.
 */
import { describe, expect, it } from 'vitest'
import { parseTableId } from '../../lib/catalog/index.js'
import { currentSnapshot } from '../../lib/iceberg/metadata.js'
import type { TableMetadata } from '../../lib/iceberg/types.js'
import type { FileIO } from '../../lib/io/types.js'
import { withTableLease } from '../../lib/maintenance/commit.js'
import { rewriteTableManifests } from '../../lib/maintenance/manifests.js'
import { runMaintenance } from '../../lib/maintenance/run.js'
import { plainDecode } from '../helpers/plain-avro.js'
import { row, testMaintenance } from './context.js'

/** Live entries as the spec defines them, read with plain Avro: path → [snapshot id, data seq, file seq] (inherited from the manifest when null). */
async function plainEntries(io: FileIO, md: TableMetadata) {
  const snap = currentSnapshot(md)!
  const out = new Map<string, string>()
  const manifests = (await plainDecode(await io.read(snap['manifest-list']!))).records
  for (const m of manifests) {
    for (const e of (await plainDecode(await io.read(m.manifest_path as string))).records) {
      if (Number(e.status) === 2) continue
      const inherit = (v: unknown, d: unknown) => String(v ?? d)
      const status = Number(e.status)
      const seq = inherit(e.sequence_number, status === 1 ? m.sequence_number : undefined)
      const fileSeq = inherit(e.file_sequence_number, status === 1 ? m.sequence_number : undefined)
      out.set((e.data_file as Record<string, unknown>).file_path as string, [inherit(e.snapshot_id, m.added_snapshot_id), seq, fileSeq].join('/'))
    }
  }
  return { entries: out, manifests: manifests.length }
}

describe('manifest rewrite', () => {
  it('packs many small manifests into one replace snapshot with the same entries and sequence numbers', async () => {
    const m = await testMaintenance()
    // Append-time merging off (a fast-appending writer), rewrite once 4 small manifests pile up.
    const table = await m.table({ 'commit.manifest-merge.enabled': 'false', 'commit.manifest.min-count-to-merge': '4' })
    let id = 0
    for (let c = 0; c < 6; c++) await m.append(table, [row(id++, 'r0'), row(id++, 'r1')])
    const io = m.t.deps.io
    const before = await m.t.catalog.loadTable(parseTableId(table))
    const plainBefore = await plainEntries(io, before.metadata)
    expect(plainBefore.manifests).toBe(6)
    const rowsBefore = (await m.readBack(table)).rows

    const dry = await withTableLease(m.deps, table, (h) => rewriteTableManifests(m.deps, table, h, { dryRun: true }))
    expect(dry).toMatchObject({ manifestsBefore: 6, manifestsReplaced: 6, manifestsCreated: 1, dryRun: true })
    expect((await m.t.catalog.loadTable(parseTableId(table))).metadataLocation).toBe(before.metadataLocation)

    const run = await runMaintenance(m.deps, { tables: [table], tasks: ['manifests'] })
    expect(run.results[0]).toMatchObject({ status: 'cleaned', manifests: { manifestsBefore: 6, manifestsReplaced: 6, manifestsCreated: 1 } })
    const after = await m.t.catalog.loadTable(parseTableId(table))
    const snap = currentSnapshot(after.metadata)!
    const parent = currentSnapshot(before.metadata)!
    expect(snap['parent-snapshot-id']).toBe(parent['snapshot-id'])
    expect(snap['sequence-number']).toBe(parent['sequence-number']! + 1n)
    expect(snap.summary).toMatchObject({ operation: 'replace', 'manifests-replaced': '6', 'manifests-created': '1', 'entries-processed': '12', 'total-records': parent.summary['total-records'], 'floe.maintenance': 'rewrite-manifests' })
    const offsets = (x: Record<string, string>) => Object.fromEntries(Object.entries(x).filter(([k]) => k.startsWith('floe.offsets.')))
    expect(Object.keys(offsets(parent.summary))).not.toHaveLength(0)
    expect(offsets(snap.summary)).toEqual(offsets(parent.summary))

    const plainAfter = await plainEntries(io, after.metadata)
    expect(plainAfter.manifests).toBe(1)
    expect(plainAfter.entries).toEqual(plainBefore.entries)
    expect((await m.readBack(table)).rows).toEqual(rowsBefore)

    // Nothing left to do; the committer appends on top (its covered check finds the offsets).
    const again = await withTableLease(m.deps, table, (h) => rewriteTableManifests(m.deps, table, h))
    expect(again).toMatchObject({ manifestsBefore: 1, manifestsReplaced: 0 })
    await m.append(table, [row(id++, 'r0')])
    expect((await m.readBack(table)).rows).toHaveLength(rowsBefore.length + 1)
  })

  it('leaves a table with fewer small manifests than min-count-to-merge alone', async () => {
    const m = await testMaintenance()
    const table = await m.table({ 'commit.manifest-merge.enabled': 'false' })
    for (let c = 0; c < 3; c++) await m.append(table, [row(c, 'r0')])
    const before = await m.t.catalog.loadTable(parseTableId(table))
    const r = await withTableLease(m.deps, table, (h) => rewriteTableManifests(m.deps, table, h))
    expect(r).toMatchObject({ manifestsBefore: 3, manifestsReplaced: 0, manifestsCreated: 0 })
    expect((await m.t.catalog.loadTable(parseTableId(table))).metadataLocation).toBe(before.metadataLocation)
  })
})
