import { describe, expect, it } from 'vitest'
import { parseTableId } from '../../lib/catalog/index.js'
import { commitTable } from '../../lib/commit/table.js'
import { acquireLease } from '../../lib/control/lease.js'
import { currentSnapshot } from '../../lib/iceberg/metadata.js'
import { liveDataFiles } from '../../lib/iceberg/scan.js'
import { withTableLease } from '../../lib/maintenance/commit.js'
import { compactTable } from '../../lib/maintenance/compact.js'
import { runMaintenance } from '../../lib/maintenance/run.js'
import { appendFiles } from '../../lib/iceberg/append.js'
import { replaceDataFiles } from '../../lib/iceberg/replace.js'
import { encodeParquet } from '../../lib/writer/columnar/index.js'
import { writeDataFile } from '../../lib/writer/files.js'
import { deltaEncoded } from '../helpers/parquet-encodings.js'
import { row, SCHEMA, testMaintenance } from './context.js'

const TARGET = 64 * 1024

async function smallFilesTable(commits = 6, perCommit = 40, config: Parameters<typeof testMaintenance>[0] = {}) {
  const m = await testMaintenance(config)
  const table = await m.table({ 'write.target-file-size-bytes': String(TARGET) })
  let id = 0
  for (let c = 0; c < commits; c++) await m.append(table, Array.from({ length: perCommit }, () => row(id, `r${id++ % 2}`)))
  return { m, table, rows: id }
}

describe('compaction', () => {
  it('rewrites small files into one per partition as a replace snapshot, keeping every row, metrics, sequence numbers and floe keys', async () => {
    const { m, table, rows } = await smallFilesTable()
    const before = await m.readBack(table)
    expect(before.rows).toHaveLength(rows)
    expect(before.files).toHaveLength(12)
    const { metadata: md0 } = await m.t.catalog.loadTable(parseTableId(table))
    const inputs = await liveDataFiles(m.t.deps.io, md0)
    const seqBefore = new Map(inputs.map((e) => [e.dataFile.filePath, e.sequenceNumber!]))
    const summed = (region: unknown, metric: 'valueCounts' | 'nullValueCounts', id: number) =>
      inputs.filter((e) => e.dataFile.partition[0] === region).reduce((a, e) => a + e.dataFile[metric]!.get(id)!, 0)

    const result = await withTableLease(m.deps, table, (h) => compactTable(m.deps, table, h))
    expect(result).toMatchObject({ groupsPlanned: 2, groupsCommitted: 2, groupsDropped: 0, filesRewritten: 12, filesWritten: 2 })
    const after = await m.readBack(table)
    expect(after.rows).toEqual(before.rows)
    expect(after.files.map((f) => f.region).sort()).toEqual(['r0', 'r1'])

    const { metadata } = await m.t.catalog.loadTable(parseTableId(table))
    const snap = currentSnapshot(metadata)!
    expect(snap.summary).toMatchObject({ operation: 'replace', 'added-data-files': '2', 'deleted-data-files': '12', 'total-data-files': '2', 'total-records': String(rows), 'floe.maintenance': 'compaction' })
    expect(snap.summary['floe.offsets.p1']).toBe(md0.snapshots.at(-1)!.summary['floe.offsets.p1'])
    const live = await liveDataFiles(m.t.deps.io, metadata)
    for (const e of live) {
      // The rewritten file's data sequence number is the max of its inputs'; its file sequence number is this snapshot's.
      const seqs = [...seqBefore.entries()].filter(([p]) => p.includes(`region=${e.dataFile.partition[0]}/`)).map(([, s]) => s)
      expect(e.sequenceNumber).toBe(seqs.reduce((a, b) => (b > a ? b : a)))
      expect(e.fileSequenceNumber).toBe(snap['sequence-number'])
      expect(e.dataFile.recordCount).toBe(rows / 2)
      for (const id of [1, 2, 3, 5, 6, 7]) {
        expect(e.dataFile.valueCounts?.get(id)).toBe(summed(e.dataFile.partition[0], 'valueCounts', id))
        expect(e.dataFile.nullValueCounts?.get(id)).toBe(summed(e.dataFile.partition[0], 'nullValueCounts', id))
      }
      expect(Buffer.from(e.dataFile.lowerBounds!.get(2)!).toString()).toBe(String(e.dataFile.partition[0]))
      expect(e.dataFile.columnSizes?.size).toBeGreaterThan(0)
    }
    // The committer still finds its offsets: a new batch appends on top, a re-registered one would be covered.
    await m.append(table, [row(10_000, 'r0')])
    expect((await m.readBack(table)).rows).toHaveLength(rows + 1)
  })

  it('keeps a commit another writer made during compaction, and drops the group whose files that writer replaced', async () => {
    const { m, table, rows } = await smallFilesTable(4, 20)
    let outside: string | undefined
    const result = await withTableLease(m.deps, table, (h) =>
      compactTable(m.deps, table, h, {
        beforeCommit: async () => {
          // An outside writer (not under Floe's lease) deletes all but one file of region r1, then appends a file to r0.
          const id = parseTableId(table)
          const base = await m.t.catalog.loadTable(id)
          const r1 = (await liveDataFiles(m.t.deps.io, base.metadata)).filter((e) => e.dataFile.partition[0] === 'r1')
          const deleted = await replaceDataFiles(m.t.deps.io, base.metadata, { remove: r1.slice(1).map((e) => e.dataFile.filePath), add: [] })
          await m.t.catalog.commit(id, { base: base.metadataLocation, metadata: deleted, baseMetadata: base.metadata })
          const reloaded = await m.t.catalog.loadTable(id)
          const encoded = await encodeParquet(SCHEMA, [row(50_000, 'r0'), row(50_001, 'r0')])
          const file = await writeDataFile(m.t.deps.io, `${reloaded.metadata.location}/data/region=r0/outside.parquet`, encoded, 0, ['r0'])
          const appended = await appendFiles(m.t.deps.io, reloaded.metadata, [file], { summary: { 'spark.app.id': 'outside' } })
          await m.t.catalog.commit(id, { base: reloaded.metadataLocation, metadata: appended, baseMetadata: reloaded.metadata })
          outside = currentSnapshot(appended)!['snapshot-id'].toString()
        },
      }),
    )
    expect(result).toMatchObject({ groupsPlanned: 2, groupsCommitted: 1, groupsDropped: 1 })
    const { metadata } = await m.t.catalog.loadTable(parseTableId(table))
    const ids = metadata.snapshots.map((s) => s['snapshot-id'].toString())
    expect(ids).toContain(outside)
    expect(currentSnapshot(metadata)!['parent-snapshot-id']!.toString()).toBe(outside)
    const back = await m.readBack(table)
    // r0 compacted to one file; r1 as the outside writer left it (one of its files).
    expect(back.files.filter((f) => f.region === 'r0').map((f) => f.path.includes('compacted-') || f.path.endsWith('outside.parquet'))).toEqual([true, true])
    expect(back.files.filter((f) => f.region === 'r1')).toHaveLength(1)
    expect(back.rows.length).toBe(rows / 2 + 2 + rows / 2 / 4)
    // The dropped group's output was deleted.
    const listed: string[] = []
    for await (const f of m.t.deps.io.list(`${metadata.location}/data/region=r1/`)) listed.push(f.path)
    expect(listed.filter((p) => p.includes('compacted-'))).toEqual([])
  })

  it('is busy while the committer holds the lease, and a commit waits for maintenance to release it', async () => {
    const { m, table } = await smallFilesTable(2, 10)
    const lease = await acquireLease(m.t.deps.control, 'p1', table)
    expect(lease).toBeDefined()
    const run = await runMaintenance(m.deps, { tables: [table], tasks: ['compact'] })
    expect(run.results[0]!.status).toBe('busy')
    expect(run.busy).toBe(1)
    const { releaseLease } = await import('../../lib/control/lease.js')
    await releaseLease(m.t.deps.control, lease!)
    await m.t.register(table, { partitionTuple: ['r0'] })
    const during = await withTableLease(m.deps, table, () => commitTable(m.t.deps, table))
    expect(during?.status).toBe('busy')
    expect((await commitTable(m.t.deps, table)).status).toBe('committed')
  })

  it('encodes as FLOE_PARQUET_INTEGER_ENCODING says: with delta, the top-level long and timestamp columns of the compacted files are DELTA_BINARY_PACKED, every row kept', async () => {
    const { m, table, rows } = await smallFilesTable(3, 40, { parquetIntegerEncoding: 'delta' })
    const before = await m.readBack(table)
    await withTableLease(m.deps, table, (h) => compactTable(m.deps, table, h))
    const after = await m.readBack(table)
    expect(after.rows).toEqual(before.rows)
    expect(after.rows).toHaveLength(rows)
    expect(after.files).toHaveLength(2)
    for (const f of after.files) {
      expect(f.path).toContain('compacted-')
      expect(deltaEncoded(await m.t.deps.io.read(f.path))).toEqual({ id: true, region: false, ts: true, 'tags.list.element': false, payload: false, score: false })
    }
  })
})
