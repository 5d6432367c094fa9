/**
 * Compaction's memory bound, behaviourally: compacting input several times FLOE_COMPACT_MEMORY_MB
 * (output files larger than the budget too) through the real path — ranged reads from s3rver,
 * the streaming Parquet writer, a multipart upload — keeps the run's ledger (budget.ts: bytes
 * fetched and decoded, rows, Arrow copies, output not uploaded, parquet-wasm's growth) under the
 * budget, and a group that cannot fit is skipped instead of overrunning it. RSS against the
 * bound is measured by the benchmark (test/bench/compact-memory.ts), not here.
 */
import { describe, expect, it } from 'vitest'
import { parseTableId } from '../../lib/catalog/index.js'
import { currentSnapshot } from '../../lib/iceberg/metadata.js'
import { CompactionBudget } from '../../lib/maintenance/budget.js'
import { withTableLease } from '../../lib/maintenance/commit.js'
import { compactTable } from '../../lib/maintenance/compact.js'
import { appendFiles } from '../../lib/iceberg/append.js'
import { encodeParquet } from '../../lib/writer/columnar/index.js'
import { writeDataFile } from '../../lib/writer/files.js'
import { row, SCHEMA, testMaintenance } from './context.js'

const MB = 1024 * 1024
const BUDGET = 32 * MB
const REGIONS = 2
const FILES_PER_REGION = 30
const ROWS_PER_FILE = 420

describe('compaction memory', () => {
  it('compacts input over 3× its memory budget (32 MB) into files larger than the budget without its ledger passing the budget', { timeout: 240_000 }, async () => {
    const m = await testMaintenance({ compactChunkBytes: MB / 2, compactMemoryBytes: BUDGET })
    // Uncompressed Parquet: file bytes are the data's bytes, and the test spends no time compressing.
    const table = await m.table({ 'write.target-file-size-bytes': String(64 * MB), 'write.parquet.compression-codec': 'uncompressed' })
    // 60 files of ~1.7 MB (~101 MB), appended in one commit.
    // (16 MB is the smallest FLOE_COMPACT_MEMORY_MB: S3 parts are at least 5 MiB.)
    const { metadata, metadataLocation } = await m.t.catalog.loadTable(parseTableId(table))
    const files = []
    for (let f = 0, id = 0; f < FILES_PER_REGION * REGIONS; f++) {
      const region = `r${f % REGIONS}`
      const encoded = await encodeParquet(SCHEMA, Array.from({ length: ROWS_PER_FILE }, () => ({ ...row(id, region), payload: Buffer.alloc(4_000, `payload-${id++}`) })), { properties: metadata.properties })
      files.push(await writeDataFile(m.t.deps.io, `${metadata.location}/data/region=${region}/in-${f}.parquet`, encoded, 0, [region]))
    }
    const appended = await appendFiles(m.t.deps.io, metadata, files)
    await m.t.catalog.commit(parseTableId(table), { base: metadataLocation, metadata: appended, baseMetadata: metadata })
    const before = await m.readBack(table)
    const inputBytes = before.files.reduce((a, f) => a + f.size, 0)
    expect(inputBytes).toBeGreaterThan(3 * BUDGET)

    // A budget one input row group does not fit in: every group is skipped, nothing changes.
    const tiny = new CompactionBudget(MB)
    const refused = await withTableLease(m.deps, table, (h) => compactTable(m.deps, table, h, { budget: tiny }))
    expect(refused).toMatchObject({ groupsPlanned: REGIONS, groupsOverBudget: REGIONS, groupsCommitted: 0 })
    expect(tiny.peak).toBeLessThanOrEqual(MB)
    const unchanged = await m.t.catalog.loadTable(parseTableId(table))
    expect(currentSnapshot(unchanged.metadata)!.summary.operation).toBe('append')

    const budget = new CompactionBudget(BUDGET)
    const result = await withTableLease(m.deps, table, (h) => compactTable(m.deps, table, h, { budget }))
    expect(result).toMatchObject({ groupsPlanned: REGIONS, groupsCommitted: REGIONS, groupsOverBudget: 0, filesRewritten: FILES_PER_REGION * REGIONS, filesWritten: REGIONS })
    expect(result!.bytesRewritten).toBe(inputBytes)
    expect(budget.peak).toBeGreaterThan(0)
    expect(budget.peak).toBeLessThanOrEqual(BUDGET)
    const after = await m.readBack(table)
    expect(after.files).toHaveLength(REGIONS)
    // Each output is larger than the budget: it was uploaded in parts, never held whole.
    for (const f of after.files) expect(f.size).toBeGreaterThan(BUDGET)
    expect(after.rows).toEqual(before.rows)
  })
})
