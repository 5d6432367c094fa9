/**
 * Smoke test of `npm run bench`: the whole suite at tiny sizes against the test run's endpoints,
 * checking the result is well formed (every section present, counts consistent). No thresholds:
 * figures from a shared CI machine mean nothing.
 */
import { describe, expect, it } from 'vitest'
import { formatResults, PARTITION_SPECS, runBench, SIZES } from './bench.js'

describe('bench', () => {
  it('the quick suite at tiny sizes produces every section and a printable table', { timeout: 300_000 }, async () => {
    const r = await runBench(SIZES.smoke)
    expect(r.machine.cores).toBeGreaterThan(0)
    expect(r.throughput.map((t) => t.dataset)).toEqual(['narrow', 'wide'])
    for (const t of r.throughput) {
      expect(t.records).toBe(t.dataset === 'narrow' ? SIZES.smoke.narrowRecords : SIZES.smoke.wideRecords)
      expect(t.floe.recordsPerSec).toBeGreaterThan(0)
      expect(t.duckdb.recordsPerSec).toBeGreaterThan(0)
      expect(t.floe.files).toBeGreaterThanOrEqual(t.events)
      expect(t.perInvocation.s3.PUT).toBeGreaterThanOrEqual(1)
      expect(t.perInvocation.ddbRequests['ddb:TransactWriteItems']).toBe(1)
    }
    // The two-worker rows: the same records with FLOE_WRITER_WORKERS 0 and 2, and one event's figures.
    expect(r.workers!.flatMap((w) => w.rows.map((x) => [x.dataset, x.workers, x.records]))).toEqual([
      ['narrow', 0, SIZES.smoke.narrowRecords],
      ['narrow', 2, SIZES.smoke.narrowRecords],
      ['wide', 0, SIZES.smoke.wideRecords],
      ['wide', 2, SIZES.smoke.wideRecords],
    ])
    for (const w of r.workers!) {
      expect(w.duckdbEvent.records).toBeGreaterThan(0)
      for (const x of w.rows) expect(x.perEvent.wallMs * x.cpuMs).toBeGreaterThan(0)
    }
    expect(formatResults(r)).toContain('#### Two workers')
    // The partitioned tables, lane on and off: the same files, and the lane's own; 8 cities a file each.
    expect(r.partitioned!.map((p) => p.partitionBy)).toEqual(PARTITION_SPECS)
    for (const p of r.partitioned!) {
      expect(p.rows.map((x) => x.scan)).toEqual([true, false])
      expect(p.rows[0]!.files).toBe(p.rows[1]!.files)
    }
    expect(r.partitioned![1]!.rows[0]!.files).toBeGreaterThanOrEqual(8 * r.partitioned![1]!.events)
    expect(formatResults(r)).toContain('#### A partitioned table')
    expect(r.memory).toHaveLength(SIZES.smoke.memory.budgets.length)
    const m = r.memory[0]!
    expect(m.tables).toBe(SIZES.smoke.memory.tables)
    expect(m.files).toBe(SIZES.smoke.memory.tables * SIZES.smoke.memory.slots)
    expect(m.peakRssMB).toBeGreaterThanOrEqual(m.rssBeforeMB)
    expect(r.commit.map((c) => [c.snapshots, c.batches])).toEqual([[3, 2]])
    expect(r.commit[0]!.s3Requests).toBeGreaterThan(0)
    expect(r.commit[0]!.ddbRequests).toBeGreaterThan(0)
    expect(r.cost.totalPerGb).toBeGreaterThan(0)
    expect(r.profile.byModule.length).toBeGreaterThan(0)
    expect(r.compactMemory.inputMB).toBeGreaterThan(r.compactMemory.boundMB)
    expect(r.compactMemory.ledgerPeakMB).toBeLessThanOrEqual(r.compactMemory.boundMB)
    expect(r.compactMemory.peakRssMB).toBeGreaterThanOrEqual(r.compactMemory.rssBaselineMB)
    expect(r.history.map((h) => h.commits)).toEqual(SIZES.smoke.history)
    expect(r.history[0]!.metadataBytesAfter).toBeLessThan(r.history[0]!.metadataBytesBefore)
    expect(JSON.parse(JSON.stringify(r))).toEqual(r)
    expect(formatResults(r)).toContain('#### Commit cost')
    expect(formatResults(r)).toContain('#### Compaction memory')
  })
})
