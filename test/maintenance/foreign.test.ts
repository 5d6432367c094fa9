/**
 * Orphan cleanup on tables written by other engines (Spark, Trino, PyIceberg, Athena, Iceberg
 * Java; v1–v3, deletes, overwrites, expired snapshots): on a copy of each fixture table, with a
 * stray file added, cleanup deletes the stray and never a file that any retained snapshot, the
 * current metadata or its metadata log references — checked with plain avsc, not Floe's reader.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { gunzipSync } from 'node:zlib'
import { parse } from 'lossless-json'
import { afterAll, describe, expect, it } from 'vitest'
import { findCurrentMetadataPath, readTableMetadata } from '../../lib/iceberg/metadata-io.js'
import { parsePath, withPathMap } from '../../lib/io/index.js'
import type { FileIO } from '../../lib/io/types.js'
import { removeOrphanFiles } from '../../lib/maintenance/orphans.js'
import type { MaintenanceDeps } from '../../lib/maintenance/types.js'
import { testControl } from '../control/context.js'
import { localIO, mapPath, rel, tableDirs, tablePathMap } from '../iceberg/fixture-tables.js'
import { plainRecords } from '../helpers/plain-avro.js'

/** Hand-edited tables whose Avro files were never committed: cleanup must refuse them (see below). */
const NO_AVRO = ['partitioned_table_with_missing_spec', 'partitioned_table_with_multiple_spec', 'partitioned_table_with_void_transform']
const HOUR = 3_600_000
const root = mkdtempSync(path.join(tmpdir(), 'floe-orphans-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

/**
 * Local paths of every file the metadata references, from raw JSON and Avro; `missing`: manifest
 * lists and manifests that are not there (fixtures often lack expired snapshots' files).
 */
async function independentlyReferenced(metadataFile: string, map: [string, string][]): Promise<{ files: Set<string>; missing: string[] }> {
  const bytes = readFileSync(metadataFile)
  const md = parse((bytes[0] === 0x1f ? gunzipSync(bytes) : bytes).toString('utf8')) as Record<string, unknown>
  const local = (p: string) => {
    const mapped = parsePath(mapPath(p, map))
    return mapped.kind === 'file' ? mapped.path : mapPath(p, map)
  }
  const files = new Set<string>([metadataFile])
  const missing: string[] = []
  const avroFile = async (p: string) => {
    files.add(local(p))
    if (existsSync(local(p))) return plainRecords(local(p))
    missing.push(p)
    return []
  }
  for (const e of (md['metadata-log'] ?? []) as { 'metadata-file': string }[]) files.add(local(e['metadata-file']))
  for (const s of (md.snapshots ?? []) as Record<string, unknown>[]) {
    const list = s['manifest-list'] as string | undefined
    const manifests = list ? (await avroFile(list)).map((m) => m.manifest_path as string) : ((s.manifests ?? []) as string[])
    for (const m of manifests) {
      for (const e of await avroFile(m)) files.add(local((e.data_file as Record<string, unknown>).file_path as string))
    }
  }
  return { files, missing }
}

/** localIO, but deleting outside the temporary copies throws (the fixtures are read-only). */
const guarded: FileIO = {
  ...localIO,
  list: (p) => localIO.list(p),
  async delete(p) {
    assertInRoot(p)
    return localIO.delete(p)
  },
  async deleteMany(ps) {
    ps.forEach(assertInRoot)
    return localIO.deleteMany(ps)
  },
}
function assertInRoot(p: string) {
  const parsed = parsePath(p)
  if (parsed.kind !== 'file' || !parsed.path.startsWith(`${root}/`)) throw new Error(`refusing to delete outside the test copy: ${p}`)
}

const whole = tableDirs().filter((d) => !NO_AVRO.some((n) => d.endsWith(n)))
let control: Awaited<ReturnType<typeof testControl>> | undefined
const outcomes = { cleaned: [] as string[], refused: [] as string[] }

async function cleanCopy(dir: string) {
  control ??= await testControl()
  const copy = path.join(root, rel(dir).replace(/[^A-Za-z0-9_.-]+/g, '_'), path.basename(dir))
  cpSync(dir, copy, { recursive: true })
  mkdirSync(path.join(copy, 'data'), { recursive: true })
  const metadataFile = await findCurrentMetadataPath(localIO, copy)
  const md = await readTableMetadata(localIO, metadataFile)
  const map = tablePathMap(md.location, copy)
  const io = withPathMap(guarded, map)
  const location = md.location.replace(/\/+$/, '')
  const metadataLocation = `${location}/metadata/${path.basename(metadataFile)}`
  const deps: MaintenanceDeps = {
    config: control.config,
    io,
    control: { ...control.ctx, io },
    catalog: {
      loadTable: async () => ({ metadata: md, metadataLocation }),
      commit: async () => {
        throw new Error('orphan cleanup never commits')
      },
    },
    now: () => Date.now() + 2 * HOUR,
  }
  return { copy, metadataFile, map, deps, location }
}

describe('orphan cleanup on tables written by other engines', () => {
  it('finds the tables', () => expect(whole.length).toBeGreaterThan(60))

  for (const dir of whole) {
    it(`${rel(dir)}`, async () => {
      const { copy, metadataFile, map, deps, location } = await cleanCopy(dir)
      const stray = path.join(copy, 'data', 'zz-stray-from-a-crashed-writer.parquet')
      writeFileSync(stray, 'stray')
      const { files, missing } = await independentlyReferenced(metadataFile, map)
      const referenced = [...files].filter((p) => p.startsWith(`${copy}/`) && existsSync(p))
      const result = await removeOrphanFiles(deps, 'db.t', { olderThanMs: HOUR }).catch((err: Error) => err)
      // A retained snapshot whose manifests cannot be read (or live on gs://): nothing may be deleted.
      const refused = result instanceof Error
      expect(refused).toBe(missing.length > 0)
      expect(refused ? result.message : 'cleaned').toMatch(/no orphan is deleted|unsupported path scheme|^cleaned$/)
      expect(existsSync(stray)).toBe(refused)
      expect(refused || result.orphans.includes(`${location}/data/zz-stray-from-a-crashed-writer.parquet`)).toBe(true)
      expect(referenced.filter((p) => !existsSync(p))).toEqual([])
      outcomes[refused ? 'refused' : 'cleaned'].push(rel(dir))
    })
  }

  it('most tables are cleaned; only those whose retained snapshots lack manifests (or live on gs://) are refused', () => {
    expect(outcomes.cleaned.length).toBeGreaterThan(50)
    expect(outcomes.refused.length).toBeLessThan(10)
  })

  for (const dir of tableDirs().filter((d) => NO_AVRO.some((n) => d.endsWith(n)))) {
    it(`${rel(dir)} (manifest list missing): fails and deletes nothing`, async () => {
      const { copy, deps } = await cleanCopy(dir)
      const stray = path.join(copy, 'data', 'zz-stray.parquet')
      writeFileSync(stray, 'stray')
      await expect(removeOrphanFiles(deps, 'db.t', { olderThanMs: HOUR })).rejects.toThrow(/no orphan is deleted/)
      expect(existsSync(stray)).toBe(true)
    })
  }
})
