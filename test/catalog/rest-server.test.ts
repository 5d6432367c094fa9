/**
 * Floe's REST catalog endpoint (lib/catalog/rest-server) over the DynamoDB catalog (DynamoDB
 * Local + s3rver), driven by Floe's own REST client: the writer and committer append through it,
 * the DynamoDB item (what Spark's DynamoDbCatalog reads) follows, a second writer's commit makes
 * the stale one a 409 that the committer rebases over, and the Lambda handler speaks the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRestCatalogHandler } from '../../functions/rest-catalog.js'
import { DynamoDbCatalog, listenRest, noAuth, RestCatalog, type ServingRest } from '../../lib/catalog/index.js'
import type { Catalog } from '../../lib/catalog/types.js'
import { CommitConflictError } from '../../lib/errors.js'
import { currentSnapshot } from '../../lib/iceberg/index.js'
import { appendFiles, liveDataFiles } from '../../lib/iceberg/manifests.js'
import { currentSchema } from '../../lib/iceberg/metadata.js'
import { createFileIO } from '../../lib/io/index.js'
import { createTestBucket, createTestCatalogTable, testAws } from '../helpers/aws.js'
import { restPipeline } from '../rest/pipeline.js'
import { schemaChangeThroughRest } from '../rest/schema-change.js'

const ROUTES = JSON.stringify({ defaultNamespace: 'db', routes: [{ topic: 'events', table: 'events' }] })
const events = (from: number, n: number, partition = 0) =>
  Array.from({ length: n }, (_, i) => ({ topic: 'events', partition, offset: from + i, value: { id: from + i, name: `e${from + i}` } }))

describe("Floe's REST endpoint over the DynamoDB catalog", () => {
  const aws = testAws()
  const io = createFileIO(aws.clients)
  let ddbCatalog: DynamoDbCatalog
  let serving: ServingRest
  const client = () => new RestCatalog({ uri: serving.uri, auth: noAuth, timeoutMs: 10_000 })
  const id = { namespace: 'db', name: 'events' }
  const rows = async (c: Catalog) => (await liveDataFiles(io, (await c.loadTable(id)).metadata)).reduce((n, e) => n + e.dataFile.recordCount, 0)

  beforeAll(async () => {
    const [bucket, table] = await Promise.all([createTestBucket('floe-rest-serve'), createTestCatalogTable()])
    ddbCatalog = new DynamoDbCatalog({ ddb: aws.ddb, tableName: table, warehouse: `s3://${bucket}/wh`, io })
    serving = await listenRest(ddbCatalog)
  })
  afterAll(async () => serving?.close())

  it('config, namespaces and a table created through REST are rows of the DynamoDB catalog', async () => {
    const rest = client()
    expect(await rest.properties()).toEqual({})
    await rest.createNamespace('db')
    expect(await ddbCatalog.listNamespaces()).toContain('db')
    expect(await rest.listNamespaces()).toContain('db')
    await ddbCatalog.createNamespace('owned', { owner: 'data-platform' })
    expect(await rest.loadNamespace('owned')).toEqual({ owner: 'data-platform' })
    expect(await rest.loadNamespace('absent')).toBeUndefined()
  })

  it('the writer and committer append through the endpoint; the DynamoDB pointer is what REST returns', async () => {
    const floe = await restPipeline({ FLOE_ROUTES: ROUTES, FLOE_PIPELINE: 'a' }, () => client())
    await floe.write(events(0, 4))
    const run = await floe.commit()
    expect(run.failures).toBe(0)
    expect(run.records).toBe(4)
    const viaRest = await floe.catalog.loadTable(id)
    const viaDdb = await ddbCatalog.loadTable(id)
    expect(viaRest.metadataLocation).toBe(viaDdb.metadataLocation)
    expect(await rows(ddbCatalog)).toBe(4)
    expect(viaDdb.metadata['metadata-log'].length).toBeGreaterThan(0)
    expect(currentSnapshot(viaDdb.metadata)!.summary['floe.offsets.a']).toBeDefined()
  })

  it('a second writer between load and commit: 409 with the failed requirement; the committer rebases; all records once', async () => {
    const second = await restPipeline({ FLOE_ROUTES: ROUTES, FLOE_PIPELINE: 'b' }, () => client())
    await second.write(events(10, 2, 1))
    let raced = false
    let secondRecords = 0
    const conflicts: string[] = []
    const first = await restPipeline({ FLOE_ROUTES: ROUTES, FLOE_PIPELINE: 'c' }, () => {
      const inner = client()
      return {
        createNamespace: (ns, p) => inner.createNamespace(ns, p),
        listNamespaces: () => inner.listNamespaces(),
        loadNamespace: (ns) => inner.loadNamespace(ns),
        listTables: (ns) => inner.listTables(ns),
        loadTable: (t) => inner.loadTable(t),
        createTable: (t, o) => inner.createTable(t, o),
        async commit(t, req) {
          if (!raced) {
            raced = true
            secondRecords = (await second.commit()).records
          }
          return inner.commit(t, req).catch((err: unknown) => {
            if (err instanceof CommitConflictError) conflicts.push(err.message)
            throw err
          })
        },
      } satisfies Catalog
    })
    const before = await rows(ddbCatalog)
    await first.write(events(20, 3, 2))
    const run = await first.commit()
    expect(run.failures).toBe(0)
    expect(secondRecords).toBe(2)
    expect(conflicts).toHaveLength(1)
    expect(conflicts[0]).toMatch(/HTTP 409 \(CommitFailedException: Requirement failed: branch main changed/)
    expect(await rows(ddbCatalog)).toBe(before + 5)
  })

  it('the Lambda handler (function URL event) serves the same endpoint', async () => {
    const handler = createRestCatalogHandler(ddbCatalog)
    const event = (method: string, rawPath: string, body?: string) =>
      ({ rawPath, rawQueryString: '', requestContext: { http: { method } }, body, isBase64Encoded: false }) as unknown as Parameters<typeof handler>[0]
    const load = await handler(event('GET', '/v1/namespaces/db/tables/events'))
    expect(load.statusCode).toBe(200)
    const loaded = JSON.parse(load.body!) as { 'metadata-location': string }
    expect(loaded['metadata-location']).toBe((await ddbCatalog.loadTable(id)).metadataLocation)
    const missing = await handler(event('GET', '/v1/namespaces/db/tables/nope'))
    expect(missing.statusCode).toBe(404)
    expect(JSON.parse(missing.body!)).toMatchObject({ error: { type: 'NoSuchTableException', code: 404 } })
    const stale = await handler(event('POST', '/v1/namespaces/db/tables/events', JSON.stringify({ requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': 1 }], updates: [] })))
    expect(stale.statusCode).toBe(409)
    const bad = await handler(event('POST', '/v1/namespaces/db/tables/events', JSON.stringify({ requirements: [], updates: [{ action: 'teleport' }] })))
    expect(bad.statusCode).toBe(400)
    expect(bad.body).toContain("unsupported update action 'teleport'")
  })

  it('a raw stale commit through the client is a CommitConflictError and changes nothing', async () => {
    const rest = client()
    const stale = await rest.loadTable(id)
    const files = (await liveDataFiles(io, stale.metadata)).slice(0, 1).map((e) => e.dataFile)
    const fresh = await rest.loadTable(id)
    await rest.commit(id, { base: fresh.metadataLocation, metadata: await appendFiles(io, fresh.metadata, files), baseMetadata: fresh.metadata })
    const pointer = (await ddbCatalog.loadTable(id)).metadataLocation
    await expect(rest.commit(id, { base: stale.metadataLocation, metadata: await appendFiles(io, stale.metadata, files), baseMetadata: stale.metadata })).rejects.toBeInstanceOf(CommitConflictError)
    expect((await ddbCatalog.loadTable(id)).metadataLocation).toBe(pointer)
  })

  it("a change to a branch other than main pins that branch: a concurrent move of it is a 409, not overwritten", async () => {
    const rest = client()
    const t0 = await rest.loadTable(id)
    const [older, newer] = [t0.metadata.snapshots[0]!['snapshot-id'], currentSnapshot(t0.metadata)!['snapshot-id']]
    expect(older).not.toBe(newer)
    const withBranch = { ...t0.metadata, refs: { ...t0.metadata.refs, audit: { 'snapshot-id': newer, type: 'branch' as const } } }
    await rest.commit(id, { base: t0.metadataLocation, metadata: withBranch, baseMetadata: t0.metadata })
    const stale = await rest.loadTable(id)
    const fresh = await rest.loadTable(id)
    const moved = { ...fresh.metadata, refs: { ...fresh.metadata.refs, audit: { 'snapshot-id': older, type: 'branch' as const } } }
    await rest.commit(id, { base: fresh.metadataLocation, metadata: moved, baseMetadata: fresh.metadata })
    // Dropping the branch from the stale base (what expiry does to an expired ref) must not erase the other writer's move.
    const { audit: _dropped, ...withoutAudit } = stale.metadata.refs ?? {}
    await expect(rest.commit(id, { base: stale.metadataLocation, metadata: { ...stale.metadata, refs: withoutAudit }, baseMetadata: stale.metadata })).rejects.toBeInstanceOf(CommitConflictError)
    expect((await ddbCatalog.loadTable(id)).metadata.refs?.audit?.['snapshot-id']).toBe(older)
  })

  it("a schema change through the endpoint: the writer's evolution commits add-schema under its requirements; a stale second change is a 409", async () => {
    const floe = await restPipeline({ FLOE_ROUTES: ROUTES, FLOE_PIPELINE: 'schema' }, () => client())
    await schemaChangeThroughRest(floe, client(), id, 'events', 500)
    expect(currentSchema((await ddbCatalog.loadTable(id)).metadata).fields.map((f) => f.name)).toContain('added_by_rest')
  })
})
