import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { isLosslessNumber, parse } from 'lossless-json'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { inspectCommand, inspectTable } from '../../lib/cli/inspect.js'
import { findCurrentMetadataPath, readTableMetadata, writeTableMetadata } from '../../lib/iceberg/metadata-io.js'
import { newTableMetadata } from '../../lib/iceberg/metadata.js'
import { localIO, mapPath, rel, tableDirs, tableIO, tablePathMap } from './fixture-tables.js'
import { plainRecords } from '../helpers/plain-avro.js'

/** Tables whose metadata was hand-edited and whose Avro files were never committed. */
const NO_AVRO = ['partitioned_table_with_missing_spec', 'partitioned_table_with_multiple_spec', 'partitioned_table_with_void_transform']

/** File and record counts of the current snapshot, from the raw JSON and Avro only. */
async function independentCounts(metadataPath: string, dir: string) {
  const bytes = readFileSync(metadataPath)
  const text = (bytes[0] === 0x1f ? gunzipSync(bytes) : bytes).toString('utf8')
  const md = parse(text) as Record<string, unknown>
  const str = (v: unknown) => (isLosslessNumber(v) ? v.toString() : String(v))
  const current = str(md['current-snapshot-id'])
  const snapshots = (md.snapshots ?? []) as Record<string, unknown>[]
  const snap = snapshots.find((s) => str(s['snapshot-id']) === current)
  if (!snap) return { dataFiles: 0, deleteFiles: 0, records: 0 }
  const map = tablePathMap(md.location as string, dir)
  const manifests = snap['manifest-list']
    ? (await plainRecords(mapPath(snap['manifest-list'] as string, map))).map((m) => m.manifest_path as string)
    : (snap.manifests as string[])
  let dataFiles = 0
  let deleteFiles = 0
  let records = 0
  for (const m of manifests) {
    for (const e of await plainRecords(mapPath(m, map))) {
      if (e.status === 2) continue
      const f = e.data_file as Record<string, unknown>
      if ((f.content ?? 0) === 0) {
        dataFiles++
        records += Number(f.record_count)
      } else deleteFiles++
    }
  }
  return { dataFiles, deleteFiles, records }
}

const whole = tableDirs().filter((d) => !NO_AVRO.some((n) => d.endsWith(n)))

describe('floe inspect agrees with the manifests of every whole fixture table', () => {
  it('finds the tables', () => expect(whole.length).toBeGreaterThan(60))

  for (const dir of whole) {
    it(`${rel(dir)}`, async () => {
      const path = await findCurrentMetadataPath(localIO, dir)
      const md = await readTableMetadata(localIO, path)
      const result = await inspectTable(tableIO(md.location, dir), dir)
      const expected = await independentCounts(path, dir)
      expect(result.formatVersion).toBe(md['format-version'])
      expect(result.snapshotCount).toBe(md.snapshots.length)
      expect({ dataFiles: result.currentSnapshot.dataFiles, deleteFiles: result.currentSnapshot.deleteFiles, records: result.currentSnapshot.records }).toEqual(expected)
    })
  }

  for (const dir of tableDirs().filter((d) => NO_AVRO.some((n) => d.endsWith(n)))) {
    it(`${rel(dir)} (manifests never committed) fails naming the missing manifest list`, async () => {
      const md = await readTableMetadata(localIO, await findCurrentMetadataPath(localIO, dir))
      await expect(inspectTable(tableIO(md.location, dir), dir)).rejects.toThrow(/snap-3829439561253574382-1-.*\.avro/)
    })
  }
})

describe('floe inspect command', () => {
  afterEach(() => vi.restoreAllMocks())

  it('prints JSON with the snapshot id as a string, reading a copied table through --path-map', async () => {
    const dir = whole.find((d) => d.endsWith('icebird/test/files/hyperparam-iceberg/java/bunnies'))!
    let out = ''
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out += String(chunk)
      return true
    })
    const code = await inspectCommand.run(['s3a://hyperparam-iceberg/java/bunnies', '--path-map', `s3a://hyperparam-iceberg/java/bunnies=${dir}`])
    expect(code).toBe(0)
    const json = JSON.parse(out) as Record<string, unknown>
    expect(json).toMatchObject({ formatVersion: 2, snapshotCount: 3, location: 's3a://hyperparam-iceberg/java/bunnies' })
    expect(typeof json.currentSnapshotId).toBe('string')
    expect(json.currentSnapshot).toMatchObject({ dataFiles: 2, deleteFiles: 2, records: 22 })
    expect(json.metadataLocation).toBe('s3a://hyperparam-iceberg/java/bunnies/metadata/v5.metadata.json')
  })

  it('prints zero counts for a table without snapshots', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'floe-inspect-'))
    const md = newTableMetadata({ location: dir, schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: false, type: 'long' }] } })
    await writeTableMetadata(localIO, `${dir}/metadata/v1.metadata.json`, md)
    let out = ''
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out += String(chunk)
      return true
    })
    expect(await inspectCommand.run([dir])).toBe(0)
    const json = JSON.parse(out) as Record<string, unknown>
    expect(json).toMatchObject({ snapshotCount: 0, currentSnapshotId: null })
    expect(json.currentSnapshot).toEqual({ operation: null, dataFiles: 0, deleteFiles: 0, positionDeleteFiles: 0, equalityDeleteFiles: 0, records: 0 })
  })

  it('exits 2 with usage when the table is missing', async () => {
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true)
    expect(await inspectCommand.run([])).toBe(2)
  })
})
