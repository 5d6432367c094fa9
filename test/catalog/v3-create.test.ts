/**
 * `formatVersion: 3` in a table's route options: the writer creates a v3 table (the reserved
 * create-time property `format-version` picks the version and is not stored), and every commit
 * writes the row-lineage fields the spec requires: table `next-row-id`, snapshot `first-row-id`
 * and `added-rows`, manifest-list `first_row_id`. Through the DynamoDB catalog and through
 * Floe's REST endpoint over it. (Spark reading the `_row_id`s: test/interop/v3-lineage.interop.ts.)
 */
import { afterAll, describe, expect, it } from 'vitest'
import { listenRest, noAuth, RestCatalog, type ServingRest } from '../../lib/catalog/index.js'
import { readManifestList } from '../../lib/iceberg/manifests.js'
import { restPipeline } from '../rest/pipeline.js'

const routes = (table: string) => JSON.stringify({ defaultNamespace: 'db', routes: [{ topic: 't', table }], tables: { [table]: { formatVersion: 3 } } })
const records = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ topic: 't', partition: 0, offset: from + i, value: { id: from + i } }))

describe('v3 tables on request', () => {
  let serving: ServingRest | undefined
  afterAll(async () => serving?.close())

  for (const via of ['dynamodb', 'rest endpoint'] as const) {
    it(`creates a v3 table and writes row lineage on every append (${via})`, async () => {
      const floe = await restPipeline({ FLOE_ROUTES: routes('lineage'), FLOE_PIPELINE: 'v3' }, (s) => {
        if (via === 'dynamodb') return s.catalog
        return {
          // Floe's REST endpoint over this setup's DynamoDB catalog, started on first use.
          ...lazyRest(async () => (serving ??= await listenRest(s.catalog)).uri),
        }
      })
      await floe.write(records(0, 3))
      expect((await floe.commit()).records).toBe(3)
      await floe.write(records(3, 2))
      expect((await floe.commit()).records).toBe(2)
      const { metadata } = await floe.catalog.loadTable({ namespace: 'db', name: 'lineage' })
      expect(metadata['format-version']).toBe(3)
      expect(metadata.properties['format-version']).toBeUndefined()
      expect(metadata['next-row-id']).toBe(5n)
      const snaps = [...metadata.snapshots].sort((a, b) => Number(a['sequence-number']! - b['sequence-number']!))
      expect(snaps.map((s) => [s['first-row-id'], s['added-rows']])).toEqual([[0n, 3n], [3n, 2n]])
      const manifests = await readManifestList(floe.io, snaps[1]!['manifest-list']!)
      const byRowId = manifests.map((m) => m.firstRowId).sort((a, b) => Number(a! - b!))
      expect(byRowId).toEqual([0n, 3n])
    })
  }
})


/** A Catalog that builds a RestCatalog on first use (the endpoint's URI is known only then). */
function lazyRest(uri: () => Promise<string>) {
  let client: Promise<RestCatalog> | undefined
  const c = () => (client ??= uri().then((u) => new RestCatalog({ uri: u, auth: noAuth, timeoutMs: 10_000 })))
  return {
    createNamespace: async (ns: string, p?: Record<string, string>) => (await c()).createNamespace(ns, p),
    listNamespaces: async () => (await c()).listNamespaces(),
    loadNamespace: async (ns: string) => (await c()).loadNamespace(ns),
    listTables: async (ns: string) => (await c()).listTables(ns),
    loadTable: async (id: Parameters<RestCatalog['loadTable']>[0]) => (await c()).loadTable(id),
    createTable: async (id: Parameters<RestCatalog['createTable']>[0], o: Parameters<RestCatalog['createTable']>[1]) => (await c()).createTable(id, o),
    commit: async (id: Parameters<RestCatalog['commit']>[0], r: Parameters<RestCatalog['commit']>[1]) => (await c()).commit(id, r),
  }
}
