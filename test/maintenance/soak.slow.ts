/**
 * Soak: many small real commits (Parquet written by the writer's encoder, registered, committed by
 * the committer) with maintenance on its schedule every INTERVAL commits, on an accelerated clock
 * (each maintenance run is a day later than the one before, so everything older than the last
 * run is past `history.expire.max-snapshot-age-ms` = 1 day). Bounded for `npm run test:slow`
 * (vitest.slow.config.ts); `FLOE_SOAK_COMMITS=5000 npm run test:slow -- test/maintenance/soak.slow.ts`
 * is the long run.
 */
import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { parseTableId } from '../../lib/catalog/index.js'
import { ALL_TASKS, runMaintenance } from '../../lib/maintenance/run.js'
import { countingIO, emptyIoCounts } from '../bench/counting-io.js'
import { testAws } from '../helpers/aws.js'
import { missingReferenced, rowKey, testMaintenance } from './context.js'

const COMMITS = Number(process.env.FLOE_SOAK_COMMITS ?? 120)
const INTERVAL = 20
const PER_PARTITION = 40
const TARGET = 32 * 1024
const DAY = 86_400_000
/** Iceberg's metadata log (100 entries) + INTERVAL snapshots + schema, spec and properties. */
const METADATA_BOUND = 64 * 1024

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

describe('soak: small commits with maintenance on its schedule', () => {
  it(`${COMMITS} commits: metadata bounded, per-commit requests flat, old partitions compacted, every row once, no dangling file`, async () => {
    let offset = 0
    const io = emptyIoCounts()
    let ddb = 0
    testAws().ddb.middlewareStack.add((next) => async (args) => (ddb++, next(args)), { step: 'initialize', name: 'soakCount' })
    const m = await testMaintenance({}, () => Date.now() + offset, (inner) => countingIO(inner, io))
    const table = await m.table({ 'write.target-file-size-bytes': String(TARGET), 'history.expire.max-snapshot-age-ms': String(DAY) })
    const written: string[] = []
    const perCommit: { s3: number; ddb: number }[] = []
    const maintenanceErrors: string[] = []
    const metadataSizes: number[] = []
    let id = 0
    for (let c = 0; c < COMMITS; c++) {
      const region = `p${Math.floor(c / PER_PARTITION)}`
      const rows = Array.from({ length: 16 }, () => ({ id: BigInt(id++), region, ts: BigInt(id) * 1_000n, tags: null, payload: randomBytes(300), score: id / 3 }))
      for (const r of rows) written.push(rowKey(r))
      const s3Before = io.GET + io.PUT + io.HEAD + io.LIST + io.DELETE
      const ddbBefore = ddb
      await m.append(table, rows)
      perCommit.push({ s3: io.GET + io.PUT + io.HEAD + io.LIST + io.DELETE - s3Before, ddb: ddb - ddbBefore })
      const { metadataLocation } = await m.t.catalog.loadTable(parseTableId(table))
      metadataSizes.push((await m.t.deps.io.stat(metadataLocation))!.size)
      if ((c + 1) % INTERVAL === 0) {
        offset += DAY
        const run = await runMaintenance(m.deps, { tables: [table], tasks: ALL_TASKS })
        maintenanceErrors.push(...run.results.flatMap((r) => (r.error ? [r.error.message] : [])))
      }
    }
    expect(maintenanceErrors).toEqual([])
    // metadata.json stays below a bound that does not depend on the number of commits.
    expect(Math.max(...metadataSizes)).toBeLessThan(METADATA_BOUND)
    // Per-commit S3 and DynamoDB requests: the same at the end as at the start (medians: a
    // manifest merge every 100 commits is a spike by design).
    const first = perCommit.slice(0, INTERVAL)
    const last = perCommit.slice(-INTERVAL)
    expect(median(last.map((x) => x.s3))).toBeLessThanOrEqual(median(first.map((x) => x.s3)) + 1)
    expect(median(last.map((x) => x.ddb))).toBeLessThanOrEqual(median(first.map((x) => x.ddb)) + 1)

    const back = await m.readBack(table)
    expect(back.rows).toEqual([...written].sort())
    // Partitions older than the one still written: ≥ 90 % of their bytes in files ≥ half the target.
    const current = `p${Math.floor((COMMITS - 1) / PER_PARTITION)}`
    const regions = [...new Set(back.files.map((f) => String(f.region)))].filter((r) => r !== current)
    expect(regions.length).toBeGreaterThan(0)
    for (const region of regions) {
      const files = back.files.filter((f) => f.region === region)
      const total = files.reduce((a, f) => a + f.size, 0)
      const big = files.filter((f) => f.size >= TARGET / 2).reduce((a, f) => a + f.size, 0)
      expect(big / total, `partition ${region}: ${files.map((f) => f.size).join(', ')}`).toBeGreaterThanOrEqual(0.9)
    }
    const { metadata } = await m.t.catalog.loadTable(parseTableId(table))
    expect(metadata.snapshots.length).toBeLessThanOrEqual(INTERVAL + 1)
    expect(await missingReferenced(m.t.deps.io, metadata)).toEqual([])
  }, 900_000)
})
