/**
 * Floe's REST catalog client against a real REST catalog server: Apache Iceberg 1.12.0's own
 * CatalogHandlers (iceberg-core) over a JdbcCatalog, in a JVM on loopback (test/rest/server).
 * Config and prefix, namespaces, create/load, the writer and committer end to end, a second
 * writer's commit between load and commit (409 → the committer's rebase), 5xx and timeouts after
 * sending (commit-state-unknown, then the committer's reload finds the commit), OAuth2.
 */
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { noAuth, oauth2Auth, RestCatalog } from '../../lib/catalog/index.js'
import type { Catalog } from '../../lib/catalog/types.js'
import { AlreadyExistsError, CatalogRequestError, CommitConflictError, CommitStateUnknownError, NoSuchTableError } from '../../lib/errors.js'
import { currentSnapshot } from '../../lib/iceberg/index.js'
import { appendFiles, liveDataFiles } from '../../lib/iceberg/manifests.js'
import { currentSchema } from '../../lib/iceberg/metadata.js'
import { createTestBucket } from '../helpers/aws.js'
import { restPipeline } from './pipeline.js'
import { schemaChangeThroughRest } from './schema-change.js'
import { startRestServer, type RunningRestServer } from './server.js'

const skip = process.env.FLOE_REST_SKIP
const ROUTES = JSON.stringify({ defaultNamespace: 'db', routes: [{ topic: 'events', table: 'events' }] })
const events = (from: number, n: number, partition = 0) =>
  Array.from({ length: n }, (_, i) => ({ topic: 'events', partition, offset: from + i, value: { id: from + i, name: `e${from + i}` } }))
const rowCount = async (io: Parameters<typeof liveDataFiles>[0], md: Parameters<typeof liveDataFiles>[1]) =>
  (await liveDataFiles(io, md)).reduce((sum, e) => sum + e.dataFile.recordCount, 0)

describe.skipIf(skip)('REST catalog client against Iceberg REST catalog handlers', () => {
  let server: RunningRestServer
  let bucket: string
  const client = (uri = server.uri, timeoutMs = 30_000) => new RestCatalog({ uri, warehouse: 'test-warehouse', auth: noAuth, timeoutMs })

  beforeAll(async () => {
    bucket = await createTestBucket('floe-rest')
    server = await startRestServer({ warehouse: `s3://${bucket}/rest`, prefix: 'wh1' })
  })
  afterAll(async () => server?.stop())

  it('reads the config endpoint (defaults, overrides, prefix) and manages namespaces under the prefix', async () => {
    const catalog = client()
    const props = await catalog.properties()
    expect(props).toMatchObject({ 'floe.test.default': 'yes', prefix: 'wh1', warehouse: 'test-warehouse' })
    await catalog.createNamespace('ns_a', { owner: 'floe' })
    await expect(catalog.createNamespace('ns_a')).rejects.toBeInstanceOf(AlreadyExistsError)
    expect(await catalog.listNamespaces()).toContain('ns_a')
    expect(await catalog.listTables('ns_a')).toEqual([])
    await expect(catalog.loadTable({ namespace: 'ns_a', name: 'missing' })).rejects.toBeInstanceOf(NoSuchTableError)
  })

  it('the writer and committer append through the REST catalog; the server-chosen location is used', async () => {
    const floe = await restPipeline({ FLOE_ROUTES: ROUTES, FLOE_PIPELINE: 'p1' }, () => client())
    await floe.write(events(0, 5))
    const run = await floe.commit()
    expect(run.failures).toBe(0)
    expect(run.records).toBe(5)
    const loaded = await floe.catalog.loadTable({ namespace: 'db', name: 'events' })
    expect(loaded.metadata.location).toBe(`s3://${bucket}/rest/db/events`)
    expect(loaded.metadataLocation.startsWith(`s3://${bucket}/rest/db/events/metadata/`)).toBe(true)
    expect(await rowCount(floe.io, loaded.metadata)).toBe(5)
    expect(JSON.parse(currentSnapshot(loaded.metadata)!.summary['floe.offsets.p1']!)).toMatchObject({ 'events-0': 5 })
    expect(await floe.catalog.listTables('db')).toEqual([{ namespace: 'db', name: 'events' }])
  })

  it('a second writer commits between load and commit: 409 → CommitConflictError, the committer rebases, every record lands once', async () => {
    const second = await restPipeline({ FLOE_ROUTES: ROUTES, FLOE_PIPELINE: 'p2' }, () => client())
    await second.write(events(100, 3, 1))
    let conflicts = 0
    let interleaved = false
    let secondRecords = 0
    const first = await restPipeline({ FLOE_ROUTES: ROUTES, FLOE_PIPELINE: 'p3' }, () => {
      const inner = client()
      const racing: Catalog = {
        createNamespace: (ns, p) => inner.createNamespace(ns, p),
        listNamespaces: () => inner.listNamespaces(),
        loadNamespace: (ns) => inner.loadNamespace(ns),
        listTables: (ns) => inner.listTables(ns),
        loadTable: (id) => inner.loadTable(id),
        createTable: (id, o) => inner.createTable(id, o),
        async commit(id, req) {
          if (!interleaved) {
            interleaved = true
            secondRecords = (await second.commit()).records // the other writer wins the race
          }
          try {
            return await inner.commit(id, req)
          } catch (err) {
            if (err instanceof CommitConflictError) conflicts++
            throw err
          }
        },
      }
      return racing
    })
    const before = await rowCount(first.io, (await first.catalog.loadTable({ namespace: 'db', name: 'events' })).metadata)
    await first.write(events(200, 4, 2))
    const run = await first.commit()
    expect(run.failures).toBe(0)
    expect(run.records).toBe(4)
    expect(secondRecords).toBe(3)
    expect(conflicts).toBe(1)
    expect(run.results[0]!.conflicts).toBe(1)
    const after = await first.catalog.loadTable({ namespace: 'db', name: 'events' })
    expect(await rowCount(first.io, after.metadata)).toBe(before + 7)
    const summaries = after.metadata.snapshots.map((s) => s.summary)
    expect(summaries.filter((s) => s['floe.offsets.p2'])).toHaveLength(1)
    expect(summaries.filter((s) => s['floe.offsets.p3'])).toHaveLength(1)
  })

  it('a commit on a stale base is refused with 409 (assert-ref-snapshot-id), never applied', async () => {
    const catalog = client()
    const id = { namespace: 'db', name: 'events' }
    const stale = await catalog.loadTable(id)
    const fresh = await catalog.loadTable(id)
    const io = await restIo()
    const files = (await liveDataFiles(io, stale.metadata)).slice(0, 1).map((e) => e.dataFile)
    const winner = await appendFiles(io, fresh.metadata, files)
    await catalog.commit(id, { base: fresh.metadataLocation, metadata: winner, baseMetadata: fresh.metadata })
    const loser = await appendFiles(io, stale.metadata, files)
    const err = await catalog.commit(id, { base: stale.metadataLocation, metadata: loser, baseMetadata: stale.metadata }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(CommitConflictError)
    expect((err as Error).message).toMatch(/HTTP 409.*CommitFailedException/)
    const now = await catalog.loadTable(id)
    expect(now.metadata.snapshots.map((s) => s['snapshot-id'])).not.toContain(currentSnapshot(loser)!['snapshot-id'])
  })

  for (const failure of ['502 after forwarding', '500 after forwarding', 'timeout after forwarding'] as const) {
    it(`a commit answered by ${failure} is CommitStateUnknownError though it landed; the committer's reload finds it, nothing twice`, async () => {
      const proxy = await failingProxy(server.uri, failure)
      try {
        const id = { namespace: 'db', name: 'events' }
        const rest = client(proxy.uri, 5_000)
        const io = await restIo()
        const base = await rest.loadTable(id)
        const next = await appendFiles(io, base.metadata, (await liveDataFiles(io, base.metadata)).slice(0, 1).map((e) => e.dataFile))
        proxy.armed = true
        const err = await rest.commit(id, { base: base.metadataLocation, metadata: next, baseMetadata: base.metadata }).catch((e: unknown) => e)
        expect(err).toBeInstanceOf(CommitStateUnknownError)
        expect((err as Error).message).toMatch(failure.startsWith('timeout') ? /timed out after 5000 ms/ : /answered HTTP 50[02]/)
        expect((await rest.loadTable(id)).metadata.snapshots.map((s) => s['snapshot-id'])).toContain(currentSnapshot(next)!['snapshot-id'])

        const floe = await restPipeline({ FLOE_ROUTES: ROUTES, FLOE_PIPELINE: `u${failure.slice(0, 3)}` }, () => client(proxy.uri, 5_000))
        const before = await rowCount(floe.io, (await floe.catalog.loadTable(id)).metadata)
        await floe.write(events(0, 2))
        proxy.armed = true
        const run = await floe.commit()
        expect(proxy.hits).toBe(2)
        expect(run.failures).toBe(0)
        expect(run.results[0]!.conflicts).toBe(1) // the unknown outcome, resolved by the reload
        expect(await rowCount(floe.io, (await floe.catalog.loadTable(id)).metadata)).toBe(before + 2)
        expect((await floe.commit()).records).toBe(0)
      } finally {
        await proxy.close()
      }
    })
  }

  it("a schema change through Iceberg's handlers: the writer's evolution commits add-schema under its requirements; a stale second change is a 409", async () => {
    const floe = await restPipeline({ FLOE_ROUTES: ROUTES, FLOE_PIPELINE: 'schema' }, () => client())
    await schemaChangeThroughRest(floe, client(), { namespace: 'db', name: 'events' }, 'events', 900)
    expect(currentSchema((await client().loadTable({ namespace: 'db', name: 'events' })).metadata).fields.map((f) => f.name)).toContain('added_by_rest')
  })

  it('OAuth2 client credentials: a token from the token endpoint; a wrong secret is refused with 401', async () => {
    const authed = await startRestServer({ warehouse: `s3://${bucket}/oauth`, oauth: { clientId: 'floe', clientSecret: 's3cret' } })
    try {
      const auth = (secret: string) => oauth2Auth({ tokenUri: `${authed.uri}/v1/oauth/tokens`, scope: 'catalog', timeoutMs: 5_000, credentials: async () => ({ clientId: 'floe', clientSecret: secret }) })
      const good = new RestCatalog({ uri: authed.uri, auth: auth('s3cret'), timeoutMs: 5_000 })
      await good.createNamespace('secured')
      expect(await good.listNamespaces()).toEqual(['secured'])
      const bad = new RestCatalog({ uri: authed.uri, auth: auth('wrong'), timeoutMs: 5_000 })
      const err = await bad.listNamespaces().catch((e: unknown) => e)
      expect(err).toBeInstanceOf(CatalogRequestError)
      expect((err as Error).message).toMatch(/HTTP 401/)
      const noToken = new RestCatalog({ uri: authed.uri, auth: noAuth, timeoutMs: 5_000 })
      await expect(noToken.listNamespaces()).rejects.toThrow(/HTTP 401/)
    } finally {
      await authed.stop()
    }
  })
})

async function restIo() {
  const { createFileIO } = await import('../../lib/io/index.js')
  const { testAws } = await import('../helpers/aws.js')
  return createFileIO(testAws().clients)
}

interface FailingProxy {
  uri: string
  armed: boolean
  hits: number
  close(): Promise<void>
}

/**
 * A gateway in front of the REST server: once armed, the next table commit (POST …/tables/<t>)
 * is forwarded — so it lands — and then answered with a 5xx, or not answered at all (the client
 * times out). Everything else passes through.
 */
async function failingProxy(target: string, failure: '502 after forwarding' | '500 after forwarding' | 'timeout after forwarding'): Promise<FailingProxy> {
  const upstream = new URL(target)
  const state: FailingProxy = { uri: '', armed: false, hits: 0, close: async () => undefined }
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const isCommit = req.method === 'POST' && /\/tables\/[^/]+$/.test(req.url ?? '')
      const fail = isCommit && state.armed
      if (fail) {
        state.armed = false
        state.hits++
      }
      const out = httpRequest({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (up) => {
        const body: Buffer[] = []
        up.on('data', (c: Buffer) => body.push(c))
        up.on('end', () => {
          if (!fail) {
            res.writeHead(up.statusCode ?? 500, up.headers)
            res.end(Buffer.concat(body))
          } else if (failure === 'timeout after forwarding') {
            setTimeout(() => res.destroy(), 12_000)
          } else {
            res.writeHead(failure.startsWith('502') ? 502 : 500, { 'content-type': 'application/json' })
            res.end(JSON.stringify({ error: { message: 'gateway lost the answer', type: 'BadGateway', code: 502 } }))
          }
        })
      })
      out.end(Buffer.concat(chunks))
    })
  })
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  state.uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  state.close = () =>
    new Promise<void>((ok) => {
      server.close(() => ok())
      server.closeAllConnections()
    })
  return state
}
