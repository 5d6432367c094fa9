import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { maintain, maintainCommand } from '../../lib/cli/maintain.js'
import { commitTable } from '../../lib/commit/table.js'
import { ConfigError } from '../../lib/errors.js'
import { testCommit } from '../commit/context.js'
import { row, testMaintenance } from '../maintenance/context.js'

async function setup() {
  const t = await testCommit()
  const tbl = await t.table()
  const files = await t.register(tbl.name)
  expect((await commitTable(t.deps, tbl.name)).status).toBe('committed')
  for (const f of files) await t.deps.io.write(f.filePath, 'parquet bytes')
  const stray = `${tbl.location}/data/crashed-00000-z.parquet`
  await t.deps.io.write(stray, 'stray')
  return { t, tbl, files, stray }
}

describe('floe maintain', () => {
  it('--orphans --dry-run lists the stray file and keeps it; without --dry-run deletes it', async () => {
    const { t, tbl, files, stray } = await setup()
    let text = ''
    const out = (s: string) => void (text += s)
    expect(await maintain(['--orphans', '--table', tbl.name, '--older-than-hours', '0', '--dry-run'], () => t.deps, out, maintainCommand.usage)).toBe(0)
    expect(text).toContain(`${tbl.name}: `)
    expect(text).toContain(`would delete 1\n  ${stray}\n`)
    expect(text).toContain('1 orphan files found (dry run: nothing deleted)')
    expect(await t.deps.io.exists(stray)).toBe(true)

    text = ''
    expect(await maintain(['--orphans', '--table', tbl.name, '--older-than-hours', '0', '--json'], () => t.deps, out, maintainCommand.usage)).toBe(0)
    const json = JSON.parse(text)
    expect(json).toMatchObject({ tables: 1, failures: 0, deleted: 1, dryRun: false, results: [{ table: tbl.name, status: 'cleaned', orphans: { orphans: [stray], deleted: 1 } }] })
    expect(await t.deps.io.exists(stray)).toBe(false)
    for (const f of files) expect(await t.deps.io.exists(f.filePath)).toBe(true)
  })

  it('--all compacts, expires and cleans a table, in that order, and --json reports each', async () => {
    const m = await testMaintenance({}, () => Date.now() + 6 * 86_400_000)
    const table = await m.table({ 'write.target-file-size-bytes': String(64 * 1024) })
    for (let c = 0; c < 3; c++) await m.append(table, [row(2 * c, 'r0'), row(2 * c + 1, 'r0')])
    let text = ''
    expect(await maintain(['--all', '--table', table], () => m.deps, (s) => void (text += s), maintainCommand.usage)).toBe(0)
    expect(text).toContain(`${table}: compaction: 3 data files, 100% small`)
    expect(text).toContain('rewrote 3 small files')
    expect(text).toMatch(new RegExp(`${table.replace('.', '\\.')}: expiry: 4 snapshots, expired 3, \\d+ files`))
    text = ''
    expect(await maintain(['--compact', '--expire', '--table', table, '--json'], () => m.deps, (s) => void (text += s), maintainCommand.usage)).toBe(0)
    const json = JSON.parse(text)
    expect(json.results[0]).toMatchObject({ table, status: 'cleaned', compaction: { groupsPlanned: 0, health: { dataFiles: 1 } }, expiry: { snapshotsExpired: 0 } })
    expect(json.results[0].orphans).toBeUndefined()
    expect((await m.readBack(table)).rows).toHaveLength(6)
  })

  it('the default horizon keeps a file written just now', async () => {
    const { t, tbl, stray } = await setup()
    let text = ''
    expect(await maintain(['--orphans', '--table', tbl.name], () => t.deps, (s) => void (text += s), maintainCommand.usage)).toBe(0)
    expect(text).toContain('1 unreferenced but younger than the horizon, deleted 0')
    expect(await t.deps.io.exists(stray)).toBe(true)
  })

  it('asks for a task, and rejects a bad horizon naming the option', async () => {
    let text = ''
    const never = () => {
      throw new Error('deps must not be built')
    }
    expect(await maintain([], never, (s) => void (text += s), maintainCommand.usage)).toBe(2)
    expect(text).toContain('--orphans')
    await expect(maintain(['--orphans', '--older-than-hours', 'soon'], never, () => {}, maintainCommand.usage)).rejects.toThrow(ConfigError)
    await expect(maintain(['--orphans', '--older-than-hours', 'soon'], never, () => {}, maintainCommand.usage)).rejects.toThrow(/--older-than-hours.*"soon"/)
  })

  it('runs through bin/floe.mjs against the local endpoints', async () => {
    const { t, tbl, stray } = await setup()
    const env = {
      ...process.env,
      FLOE_WAREHOUSE: t.config.warehouse,
      FLOE_CONTROL_TABLE: t.config.controlTable,
      FLOE_PIPELINE: t.config.pipeline,
      FLOE_CATALOG_TABLE: (t.catalog as unknown as { table: string }).table, // testCommit's own catalog table
    }
    const r = spawnSync(process.execPath, ['bin/floe.mjs', 'maintain', '--orphans', '--dry-run', '--older-than-hours', '0', '--json'], { encoding: 'utf8', env })
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    const json = JSON.parse(r.stdout)
    expect(json.results.map((x: { table: string }) => x.table)).toEqual([tbl.name])
    expect(json.results[0].orphans.orphans).toEqual([stray])
    expect(await t.deps.io.exists(stray)).toBe(true)
  })
})
