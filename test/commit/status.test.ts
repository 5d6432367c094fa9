import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { pipelineStatus } from '../../lib/commit/status.js'
import { commitTable } from '../../lib/commit/table.js'
import { formatStatus } from '../../lib/cli/status.js'
import { testCommit } from './context.js'

const run = promisify(execFile)

describe('pipeline status', () => {
  it('shows backlog, last commit and lag per partition', async () => {
    const t = await testCommit()
    const { name } = await t.table()
    await t.register(name, { partition: 0, count: 10 })
    await t.register(name, { partition: 1, count: 4 })
    const committed = await commitTable(t.deps, name)
    await t.register(name, { partition: 0, count: 6 })
    const [status] = await pipelineStatus(t.deps, { nowMs: Date.now() + 5_000 })
    expect(status).toMatchObject({ table: name, pendingBatches: 1, pendingRecords: 5 })
    expect(status!.oldestPendingAgeMs).toBeGreaterThanOrEqual(5_000)
    expect(status!.lastCommit?.snapshotId).toBe(committed.snapshotId)
    expect(status!.partitions).toEqual([
      { partition: 'events-0', committed: 10n, checkpoint: 16n, lag: 6n },
      { partition: 'events-1', committed: 4n, checkpoint: 4n, lag: 0n },
    ])
    const text = formatStatus([status!])
    expect(text).toContain(`${name}: 1 pending batches (5 records)`)
    expect(text).toMatch(/events-0\s+10\s+16\s+6/)
    // Health from the metadata alone: one snapshot, two fake files of 1,005 and 1,004 bytes, never compacted.
    expect(status!.health).toMatchObject({ snapshots: 1, dataFiles: 2, avgFileBytes: 1005 })
    expect(text).toMatch(/health: 1 snapshots, oldest \S+, 2 data files \(avg 1 KB\); never compacted/)
  })

  it('a table missing from the catalog is listed with its error and pending batches', async () => {
    const t = await testCommit()
    await t.register('db.missing', { count: 3 })
    const [status] = await pipelineStatus(t.deps)
    expect(status).toMatchObject({ table: 'db.missing', pendingBatches: 1, partitions: [{ partition: 'events-0', checkpoint: 3n, lag: 3n }] })
    expect(status!.error).toMatch(/NoSuchTableError/)
  })

  it('`floe commit` then `floe status` from the command line', async () => {
    const t = await testCommit()
    const { name } = await t.table()
    await t.register(name, { count: 8 })
    const env = {
      ...process.env,
      FLOE_WAREHOUSE: t.config.warehouse,
      FLOE_CONTROL_TABLE: t.config.controlTable,
      FLOE_CATALOG_TABLE: (t.catalog as unknown as { table: string }).table,
      FLOE_PIPELINE: t.config.pipeline,
      FLOE_ROUTES: JSON.stringify({ routes: [{ table: '{topic}' }] }),
    }
    const commit = await run('node', ['bin/floe.mjs', 'commit'], { env })
    expect(commit.stdout).toMatch(new RegExp(`${name}: committed 1 batches, 1 files, 5 records as snapshot \\d+`))
    const status = await run('node', ['bin/floe.mjs', 'status', '--json'], { env })
    const parsed = JSON.parse(status.stdout) as { table: string; pendingBatches: number; partitions: unknown[] }[]
    expect(parsed).toEqual([expect.objectContaining({ table: name, pendingBatches: 0, partitions: [{ partition: 'events-0', committed: '8', checkpoint: '8', lag: '0' }] })])
  })
})
