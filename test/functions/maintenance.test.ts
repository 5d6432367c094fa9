import { describe, expect, it } from 'vitest'
import type { Context } from 'aws-lambda'
import { createMaintenanceHandler } from '../../functions/maintenance.js'
import { eventOptions } from '../../lib/maintenance/invocation.js'
import { commitTable } from '../../lib/commit/table.js'
import type { FileIO } from '../../lib/io/types.js'
import type { MaintenanceDeps } from '../../lib/maintenance/types.js'
import { testCommit } from '../commit/context.js'
import { row, testMaintenance } from '../maintenance/context.js'

const context = { awsRequestId: 'req-1', functionName: 'floe-maintenance', getRemainingTimeInMillis: () => 600_000 } as unknown as Context
const HOUR = 3_600_000

async function exists(io: FileIO, paths: string[]): Promise<boolean[]> {
  return Promise.all(paths.map((p) => io.exists(p)))
}

describe('maintenance handler', () => {
  it("cleans every table the pipeline writes; a broken table fails alone; pending-only tables keep their files", async () => {
    const t = await testCommit()
    const io = t.deps.io
    const healthy = await t.table()
    const broken = await t.table()
    const pendingOnly = await t.table()
    const foreign = await t.table() // in the catalog, never written by this pipeline: not touched
    const files: string[] = []
    for (const tbl of [healthy, broken]) {
      files.push(...(await t.register(tbl.name)).map((f) => f.filePath))
      expect((await commitTable(t.deps, tbl.name)).status).toBe('committed')
    }
    files.push(...(await t.register(pendingOnly.name, { files: 2 })).map((f) => f.filePath))
    for (const f of files) await io.write(f, 'parquet bytes')
    const strays = [healthy, broken, pendingOnly, foreign].map((tbl) => `${tbl.location}/data/crashed-00000-x.parquet`)
    for (const s of strays) await io.write(s, 'stray')
    // Break one table: its only manifest is gone.
    const brokenManifests: string[] = []
    for await (const f of io.list(`${broken.location}/metadata/`)) if (f.path.endsWith('-m0.avro')) brokenManifests.push(f.path)
    expect(brokenManifests).toHaveLength(1)
    await io.delete(brokenManifests[0]!)

    const deps: MaintenanceDeps = { ...t.deps, now: () => Date.now() + 2 * HOUR }
    const handler = createMaintenanceHandler(deps)
    // Orphan cleanup only here (compaction and expiry: test/maintenance, and the last test below).
    const dry = await handler({ olderThanHours: 1, dryRun: true, tasks: ['orphans'] }, context)
    expect(dry).toMatchObject({ tables: 3, failures: 1, deleted: 0, dryRun: true })
    expect(await exists(io, strays)).toEqual([true, true, true, true])

    const summary = await handler({ olderThanHours: 1, tasks: ['orphans'] }, context)
    expect(summary).toMatchObject({ tables: 3, failures: 1, orphans: 2, deleted: 2, dryRun: false })
    const byTable = Object.fromEntries(summary.results.map((r) => [r.table, r]))
    expect(byTable[healthy.name]).toMatchObject({ status: 'cleaned', deleted: 1 })
    expect(byTable[pendingOnly.name]).toMatchObject({ status: 'cleaned', deleted: 1 })
    expect(byTable[broken.name]).toMatchObject({ status: 'failed' })
    expect(byTable[broken.name]!.error).toMatch(/no orphan is deleted/)
    expect(summary.results.find((r) => r.table === '_spill')).toMatchObject({ status: 'cleaned' })
    expect(await exists(io, strays)).toEqual([false, true, false, true])
    expect(await exists(io, files)).toEqual(files.map(() => true))
    expect(JSON.parse(JSON.stringify(summary))).toEqual(summary)
  })

  it('the default horizon keeps everything written just now', async () => {
    const t = await testCommit()
    const tbl = await t.table()
    await t.register(tbl.name)
    const stray = `${tbl.location}/data/crashed-00000-y.parquet`
    await t.deps.io.write(stray, 'stray')
    const summary = await createMaintenanceHandler(t.deps)({}, context)
    expect(summary).toMatchObject({ tables: 1, failures: 0, deleted: 0 })
    expect(await t.deps.io.exists(stray)).toBe(true)
  })
})

describe('maintenance handler, scheduled', () => {
  it('a scheduled event compacts and expires too, and reports it', async () => {
    const m = await testMaintenance({}, () => Date.now() + 6 * 86_400_000)
    const table = await m.table({ 'write.target-file-size-bytes': String(64 * 1024) })
    for (let i = 0; i < 3; i++) await m.append(table, [row(i, 'r0')])
    const summary = await createMaintenanceHandler(m.deps)({ source: 'floe.schedule' }, context)
    expect(summary).toMatchObject({ failures: 0, filesCompacted: 3, snapshotsExpired: 3 })
    expect(summary.results.find((r) => r.table === table)).toMatchObject({ status: 'cleaned', compacted: 3, expired: 3, smallFileRatio: 1 })
    expect((await m.readBack(table)).rows).toHaveLength(3)
  })
})

describe('eventOptions', () => {
  it('reads tables, dry run and a horizon of at least one hour; ignores the rest', () => {
    const all = ['compact', 'manifests', 'expire', 'orphans']
    expect(eventOptions({})).toEqual({ dryRun: false, tasks: all })
    expect(eventOptions(undefined)).toEqual({ dryRun: false, tasks: all })
    expect(eventOptions({ tables: ['db.t'], dryRun: true, olderThanHours: 48 })).toEqual({ tables: ['db.t'], dryRun: true, olderThanMs: 48 * HOUR, tasks: all })
    expect(eventOptions({ olderThanHours: 0 })).toMatchObject({ olderThanMs: HOUR })
    expect(eventOptions({ tables: [1], 'detail-type': 'Scheduled Event' })).toEqual({ dryRun: false, tasks: all })
    expect(eventOptions({ tasks: ['orphans', 'compact', 'bogus'] })).toMatchObject({ tasks: ['compact', 'orphans'] })
  })
})
