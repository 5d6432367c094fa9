/**
 * Item 4 of the interop contract: Floe's own table maintenance (`floe maintain --compact
 * --expire --orphans`, lib/maintenance) read back by real engines. Floe commits many small
 * batches to a partitioned table, then compacts, expires snapshots and removes orphans; Spark
 * and PyIceberg then read every row exactly once, the current snapshot is Floe's `replace`, and
 * Spark's own `remove_orphan_files(dry_run => true)` finds nothing Floe should have removed.
 * Spark then maintains the same table (rewrite_data_files, expire_snapshots) while Floe keeps
 * committing and maintaining.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseTableId } from '../../lib/catalog/index.js'
import { maintain } from '../../lib/cli/maintain.js'
import type { TableMetadata } from '../../lib/iceberg/types.js'
import type { MaintenanceDeps } from '../../lib/maintenance/types.js'
import { missingReferenced } from '../maintenance/context.js'
import { skipReason, startEngines, type Engines, type Json } from './engine.js'
import { startFloe, type Floe } from './floe.js'

const TABLE = 'db.maintained'
const num = (v: Json | undefined) => (typeof v === 'object' && v !== null && '$int' in v ? Number(v.$int) : Number(v))
const ids = (rows: Record<string, Json>[]) => rows.map((r) => num(r.id)).sort((a, b) => a - b)
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i)
const REGIONS = ['eu', 'us']
/** A Spark TIMESTAMP literal a minute from now: every file written so far is older. */
const sparkNow = () => `TIMESTAMP '${new Date(Date.now() + 60_000).toISOString().replace('T', ' ').replace('Z', ' UTC')}'`

describe.skipIf(skipReason)("Floe's compaction, expiry and orphan cleanup, read back by Spark and PyIceberg", () => {
  let floe: Floe
  let engines: Engines
  let offset = 0
  const produce = (from: number, to: number) =>
    floe.write(range(from, to).map((id) => ({ topic: 'm', partition: 0, offset: offset++, value: { id, region: REGIONS[id % 2], ts: `2024-05-0${1 + (id % 3)}T12:00:00.${String(id % 1000).padStart(3, '0')}Z`, score: id / 4 } })))
  /** `floe maintain <args> --table db.maintained --json`, as the CLI runs it. */
  const floeMaintain = async (...args: string[]) => {
    let text = ''
    const deps: MaintenanceDeps = { config: floe.deps.config, io: floe.io, catalog: floe.catalog, control: floe.control }
    const code = await maintain([...args, '--table', TABLE, '--json'], () => deps, (t) => (text += t), 'usage')
    expect(code, text).toBe(0)
    return JSON.parse(text) as { filesCompacted: number; snapshotsExpired: number; orphans: number; deleted: number; results: { orphans?: { orphans: string[] } }[] }
  }
  const metadata = async (): Promise<TableMetadata> => (await floe.catalog.loadTable(parseTableId(TABLE))).metadata
  /** Spark's own orphan search; prefix_listing: through S3FileIO (no Hadoop S3 filesystem on the classpath). */
  const sparkOrphans = async () =>
    (await engines.spark(`CALL floe.system.remove_orphan_files(table => '${TABLE}', dry_run => true, older_than => ${sparkNow()}, prefix_listing => true)`)).rows.map((r) => String(r.orphan_file_location))

  beforeAll(async () => {
    floe = await startFloe({
      FLOE_ROUTES: JSON.stringify({
        defaultNamespace: 'db',
        routes: [{ topic: 'm', table: 'maintained' }],
        // Expire every snapshot the moment it is superseded (the default age is 5 days; one snapshot is kept).
        tables: { maintained: { partitionBy: ['region', 'day(ts)'], columns: { score: 'double' }, properties: { 'history.expire.max-snapshot-age-ms': '1' } } },
      }),
    })
    await floe.catalog.createNamespace('db').catch(() => undefined)
    engines = startEngines({ catalogTable: floe.deps.config.catalogTable, warehouse: floe.warehouse })
    await engines.spark('SELECT 1')
  })
  afterAll(async () => engines?.close())

  it('every row once with its types, a replace snapshot, expired snapshots\' files gone, kept ones present, and nothing left for Spark\'s orphan search', async () => {
    for (let batch = 0; batch < 8; batch++) {
      await produce(batch * 6, batch * 6 + 6)
      expect(await floe.commit()).toBe(6)
    }
    const before = await metadata()
    expect(before.snapshots.length).toBe(8)
    const dataBefore = (await engines.spark(`SELECT file_path FROM floe.${TABLE}.files`)).rows.map((r) => String(r.file_path))
    const filesBefore = dataBefore.length
    expect(filesBefore).toBe(48) // 8 commits, each of one row in each of 2 regions × 3 days
    // A crashed writer's Parquet file: under the table's data folder, in no snapshot and no pending batch.
    const orphan = `${before.location}/data/region=eu/ts_day=2024-05-01/crashed-writer.parquet`
    await floe.io.write(orphan, new TextEncoder().encode('PAR1 never registered PAR1'))
    // Spark's own dry run sees it (so its silence below means something).
    expect(await sparkOrphans()).toEqual([orphan])

    const run = await floeMaintain('--compact', '--expire', '--orphans', '--older-than-hours', '0')
    expect(run.filesCompacted).toBe(48)
    expect(run.snapshotsExpired).toBeGreaterThan(0)
    expect(run.results[0]!.orphans!.orphans).toEqual([orphan])
    expect(await floe.io.exists(orphan)).toBe(false)

    const after = await metadata()
    const current = after.snapshots.find((s) => s['snapshot-id'] === after['current-snapshot-id'])!
    expect(current.summary.operation).toBe('replace')
    const snaps = (await engines.spark(`SELECT s.snapshot_id AS id, s.operation AS op FROM floe.${TABLE}.snapshots s JOIN floe.${TABLE}.refs r ON s.snapshot_id = r.snapshot_id WHERE r.name = 'main'`)).rows
    expect(snaps.map((r) => r.op)).toEqual(['replace'])
    // Kept snapshots reach only files that exist; expired snapshots' manifest lists and data files are gone.
    expect(await missingReferenced(floe.io, after)).toEqual([])
    const kept = new Set(after.snapshots.map((s) => s['snapshot-id']))
    const expired = before.snapshots.filter((s) => !kept.has(s['snapshot-id']))
    expect(expired.length).toBe(run.snapshotsExpired)
    for (const s of expired) expect(await floe.io.exists(s['manifest-list']!), s['manifest-list']).toBe(false)
    expect(after.snapshots.map((s) => s['snapshot-id'])).toEqual([current['snapshot-id']])
    const liveData = new Set((await engines.spark(`SELECT file_path FROM floe.${TABLE}.files`)).rows.map((r) => String(r.file_path)))
    expect(liveData.size).toBe(6) // only the replace is kept: its six compacted files
    for (const path of liveData) expect(await floe.io.exists(path), path).toBe(true)
    expect(dataBefore.filter((p) => liveData.has(p))).toEqual([])
    for (const path of dataBefore) expect(await floe.io.exists(path), path).toBe(false)

    const spark = await engines.spark(`SELECT id, region, unix_micros(ts) AS ts, score FROM floe.${TABLE}`)
    expect(ids(spark.rows)).toEqual(range(0, 48))
    expect(spark.schema).toEqual([['id', 'bigint'], ['region', 'string'], ['ts', 'bigint'], ['score', 'double']])
    expect(spark.rows.find((r) => num(r.id) === 7)).toEqual({ id: 7, region: 'us', ts: Date.parse('2024-05-02T12:00:00.007Z') * 1000, score: 1.75 })
    const types = (await engines.spark(`DESCRIBE TABLE floe.${TABLE}`)).rows.slice(0, 4).map((r) => [r.col_name, r.data_type])
    expect(types).toEqual([['id', 'bigint'], ['region', 'string'], ['ts', 'timestamp'], ['score', 'double']])
    const py = await engines.scan(TABLE)
    expect(ids(py.rows)).toEqual(range(0, 48))
    expect(py.schema).toEqual([['id', 'int64'], ['region', 'string'], ['ts', 'timestamp[us, tz=UTC]'], ['score', 'double']])
    expect(py.files).toBe(6)

    expect(await sparkOrphans()).toEqual([])
  })

  it("Spark's rewrite_data_files and expire_snapshots on Floe's compacted table, with Floe committing and maintaining on: every row once", async () => {
    for (let batch = 8; batch < 11; batch++) {
      await produce(batch * 6, batch * 6 + 6)
      expect(await floe.commit()).toBe(6)
    }
    const rewrite = await engines.spark(`CALL floe.system.rewrite_data_files(table => '${TABLE}', options => map('min-input-files', '2'))`)
    expect(num(rewrite.rows[0]!.rewritten_data_files_count)).toBeGreaterThan(0)
    await produce(66, 72)
    expect(await floe.commit()).toBe(6)
    await engines.spark(`CALL floe.system.expire_snapshots(table => '${TABLE}', older_than => ${sparkNow()}, retain_last => 1)`)
    await produce(72, 78)
    expect(await floe.commit()).toBe(6)
    const run = await floeMaintain('--all', '--older-than-hours', '0')
    expect(run.filesCompacted).toBeGreaterThan(0)
    await produce(78, 80)
    expect(await floe.commit()).toBe(2)

    expect(ids((await engines.spark(`SELECT id FROM floe.${TABLE}`)).rows)).toEqual(range(0, 80))
    expect(ids((await engines.scan(TABLE)).rows)).toEqual(range(0, 80))
    expect(JSON.parse((await floe.summary(TABLE))['floe.offsets.test']!)).toEqual({ 'm-0': offset })
    expect(await missingReferenced(floe.io, await metadata())).toEqual([])
    expect(await sparkOrphans()).toEqual([])
  })
})
