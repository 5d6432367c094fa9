/**
 * DynamoDB catalog against DynamoDB Local and s3rver (started by test/setup/global.ts).
 */
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type DynamoDBClient, GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb'
import { beforeAll, describe, expect, it } from 'vitest'
import { DynamoDbCatalog } from '../../lib/catalog/dynamodb.js'
import { ensureNamespace } from '../../lib/catalog/index.js'
import type { TableId } from '../../lib/catalog/index.js'
import { AlreadyExistsError, CommitConflictError, CommitStateUnknownError, NoSuchTableError } from '../../lib/errors.js'
import { appendFiles } from '../../lib/iceberg/append.js'
import { currentSnapshot } from '../../lib/iceberg/metadata.js'
import { readTableMetadata } from '../../lib/iceberg/metadata-io.js'
import { liveDataFiles } from '../../lib/iceberg/scan.js'
import type { DataFile, TableMetadata } from '../../lib/iceberg/types.js'
import { createFileIO } from '../../lib/io/index.js'
import type { FileIO } from '../../lib/io/types.js'
import type { Schema } from '../../lib/schema/types.js'
import { createTestBucket, createTestCatalogTable, testAws, uniqueName } from '../helpers/aws.js'
import { fixturesDir } from '../helpers/fixtures.js'

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'ts', required: false, type: 'timestamptz' },
  ],
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const metadataFile = (prefix: string, n: number) => new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/metadata/${String(n).padStart(5, '0')}-[0-9a-f-]{36}\\.metadata\\.json$`)

let io: FileIO
let warehouse: string
let ddb: DynamoDBClient

beforeAll(async () => {
  const aws = testAws()
  ddb = aws.ddb
  io = createFileIO(aws.clients)
  warehouse = `s3://${await createTestBucket()}/warehouse`
})

async function freshCatalog(now?: () => number) {
  const table = await createTestCatalogTable()
  return { table, catalog: new DynamoDbCatalog({ ddb, tableName: table, warehouse, io, now }) }
}

const rawItem = async (table: string, identifier: string, namespace: string) =>
  (await ddb.send(new GetItemCommand({ TableName: table, Key: { identifier: { S: identifier }, namespace: { S: namespace } }, ConsistentRead: true }))).Item

function dataFile(n: number): DataFile {
  return { content: 0, filePath: `${warehouse}/data/file-${n}.parquet`, fileFormat: 'PARQUET', specId: 0, partition: [], recordCount: 1, fileSizeInBytes: 100 + n }
}

async function metadataFiles(location: string): Promise<string[]> {
  const out: string[] = []
  for await (const f of io.list(`${location}/metadata/`)) if (f.path.endsWith('.metadata.json')) out.push(f.path)
  return out.sort()
}

describe('items in Iceberg Java layout', () => {
  it('a created table has exactly the attributes Iceberg Java writes, and a commit updates them as Java does', async () => {
    let clock = 1_700_000_000_000
    const { table, catalog } = await freshCatalog(() => clock)
    await catalog.createNamespace('db', { owner: 'floe' })
    const id = { namespace: 'db', name: 'events' }
    const created = await catalog.createTable(id, { schema })

    const item = await rawItem(table, 'db.events', 'db')
    expect(Object.keys(item!).sort()).toEqual(['created_at', 'identifier', 'namespace', 'p.metadata_location', 'p.table_type', 'updated_at', 'v'])
    expect(item!.identifier).toEqual({ S: 'db.events' })
    expect(item!.namespace).toEqual({ S: 'db' })
    expect(item!['p.table_type']).toEqual({ S: 'ICEBERG' })
    expect(item!['p.metadata_location']).toEqual({ S: created.metadataLocation })
    expect(created.metadataLocation).toMatch(metadataFile(`${warehouse}/db.db/events`, 0))
    expect(item!.created_at).toEqual({ N: String(clock) })
    expect(item!.updated_at).toEqual({ N: String(clock) })
    expect(item!.v!.S).toMatch(UUID)
    expect(created.metadata.location).toBe(`${warehouse}/db.db/events`)
    expect(created.metadata['format-version']).toBe(2)

    const ns = await rawItem(table, 'NAMESPACE', 'db')
    expect(Object.keys(ns!).sort()).toEqual(['created_at', 'identifier', 'namespace', 'p.owner', 'updated_at', 'v'])
    expect(ns!['p.owner']).toEqual({ S: 'floe' })
    expect(ns!.created_at).toEqual({ N: String(clock) })
    expect(ns!.v!.S).toMatch(UUID)

    clock += 5000
    const next = await appendFiles(io, created.metadata, [dataFile(1)])
    const committed = await catalog.commit(id, { base: created.metadataLocation, metadata: next })
    const after = await rawItem(table, 'db.events', 'db')
    expect(Object.keys(after!).sort()).toEqual(['created_at', 'identifier', 'namespace', 'p.metadata_location', 'p.previous_metadata_location', 'p.table_type', 'updated_at', 'v'])
    expect(after!['p.metadata_location']).toEqual({ S: committed.metadataLocation })
    expect(committed.metadataLocation).toMatch(metadataFile(`${warehouse}/db.db/events`, 1))
    expect(after!['p.previous_metadata_location']).toEqual({ S: created.metadataLocation })
    expect(after!.created_at).toEqual({ N: String(clock - 5000) })
    expect(after!.updated_at).toEqual({ N: String(clock) })
    expect(after!.v!.S).toMatch(UUID)
    expect(after!.v!.S).not.toBe(item!.v!.S)

    // The new file is what the pointer names, and it logs the file it replaced.
    const written = await readTableMetadata(io, committed.metadataLocation)
    expect(written['metadata-log'].map((e) => e['metadata-file'])).toEqual([created.metadataLocation])
    expect(written['metadata-log'][0]!['timestamp-ms']).toBe(created.metadata['last-updated-ms'])
    expect(currentSnapshot(written)?.['snapshot-id']).toBe(currentSnapshot(next)?.['snapshot-id'])
  })

  it('loads a table that Iceberg Java registered (raw item + a Java-written metadata file)', async () => {
    const { table, catalog } = await freshCatalog()
    const fixture = join(fixturesDir('iceberg'), 'apache-iceberg/core/src/test/resources/TableMetadataV2Valid.json')
    const location = `${warehouse}/java.db/trips`
    const text = readFileSync(fixture, 'utf8').replace(/"location"\s*:\s*"[^"]*"/, `"location": "${location}"`)
    const path = `${location}/metadata/00007-1b2c3d4e-0000-4000-8000-000000000000.metadata.json`
    await io.write(path, text)
    const now = String(Date.now())
    await ddb.send(new PutItemCommand({ TableName: table, Item: { identifier: { S: 'NAMESPACE' }, namespace: { S: 'java' }, created_at: { N: now }, updated_at: { N: now }, v: { S: randomUUID() } } }))
    await ddb.send(
      new PutItemCommand({
        TableName: table,
        Item: {
          identifier: { S: 'java.trips' },
          namespace: { S: 'java' },
          'p.table_type': { S: 'iceberg' }, // Java compares case-insensitively
          'p.metadata_location': { S: path },
          created_at: { N: now },
          updated_at: { N: now },
          v: { S: randomUUID() },
        },
      }),
    )
    const id = { namespace: 'java', name: 'trips' }
    const loaded = await catalog.loadTable(id)
    expect(loaded.metadataLocation).toBe(path)
    expect(loaded.metadata['current-snapshot-id']).toBe(3055729675574597004n)
    expect(await catalog.listTables('java')).toEqual([id])

    // A property change committed on top keeps the numbering: 00007 → 00008.
    const next: TableMetadata = { ...loaded.metadata, properties: { ...loaded.metadata.properties, 'floe.touched': 'yes' } }
    const committed = await catalog.commit(id, { base: path, metadata: next, baseMetadata: loaded.metadata })
    expect(committed.metadataLocation).toMatch(metadataFile(location, 8))
    const item = await rawItem(table, 'java.trips', 'java')
    expect(item!['p.previous_metadata_location']).toEqual({ S: path })
    expect(item!['p.table_type']).toEqual({ S: 'ICEBERG' })
    const reloaded = await catalog.loadTable(id)
    expect(reloaded.metadata.properties['floe.touched']).toBe('yes')
    expect(reloaded.metadata['current-snapshot-id']).toBe(3055729675574597004n)
  })
})

describe('namespaces and tables', () => {
  it('lists namespaces and the tables of a namespace (not the namespace row)', async () => {
    const { catalog } = await freshCatalog()
    await catalog.createNamespace('a')
    await catalog.createNamespace('b')
    await catalog.createTable({ namespace: 'a', name: 't1' }, { schema })
    await catalog.createTable({ namespace: 'a', name: 't2' }, { schema })
    await catalog.createTable({ namespace: 'b', name: 't3' }, { schema })
    expect((await catalog.listNamespaces()).sort()).toEqual(['a', 'b'])
    expect((await catalog.listTables('a')).map((t) => t.name).sort()).toEqual(['t1', 't2'])
    expect(await catalog.listTables('b')).toEqual([{ namespace: 'b', name: 't3' }])
    expect(await catalog.listTables('nope')).toEqual([])
  })

  it("loads one namespace's properties with a single read, and undefined for a missing one", async () => {
    const { catalog } = await freshCatalog()
    await catalog.createNamespace('props', { owner: 'floe', comment: 'events' })
    expect(await catalog.loadNamespace('props')).toEqual({ owner: 'floe', comment: 'events' })
    expect(await catalog.loadNamespace('absent')).toBeUndefined()
  })

  it('refuses duplicates and missing namespaces or tables with typed errors', async () => {
    const { catalog } = await freshCatalog()
    await catalog.createNamespace('db')
    await expect(catalog.createNamespace('db')).rejects.toThrow(AlreadyExistsError)
    await ensureNamespace(catalog, 'db') // idempotent helper
    const id = { namespace: 'db', name: 't' }
    const first = await catalog.createTable(id, { schema })
    await expect(catalog.createTable(id, { schema })).rejects.toThrow(/table db.t already exists/)
    await expect(catalog.createTable({ namespace: 'missing', name: 't' }, { schema })).rejects.toThrow(NoSuchTableError)
    await expect(catalog.loadTable({ namespace: 'db', name: 'nope' })).rejects.toThrow(/table db.nope does not exist in DynamoDB catalog/)
    await expect(catalog.createTable({ namespace: 'db', name: 'a.b' }, { schema })).rejects.toThrow(/must be non-empty and contain no dot/)
    expect(await metadataFiles(first.metadata.location)).toEqual([first.metadataLocation])
  })

  it('places tables under the namespace default_location when set, else <warehouse>/<ns>.db/<table>', async () => {
    const { catalog } = await freshCatalog()
    await catalog.createNamespace('custom', { default_location: `${warehouse}/elsewhere/` })
    const t = await catalog.createTable({ namespace: 'custom', name: 'x' }, { schema, properties: { 'write.format.default': 'parquet' } })
    expect(t.metadata.location).toBe(`${warehouse}/elsewhere/x`)
    expect(t.metadata.properties['write.format.default']).toBe('parquet')
    const explicit = await catalog.createTable({ namespace: 'custom', name: 'y' }, { schema, location: `${warehouse}/pinned/y` })
    expect(explicit.metadataLocation).toMatch(metadataFile(`${warehouse}/pinned/y`, 0))
  })
})

describe('commits', () => {
  async function table(name = uniqueName('t').replace(/-/g, '_')) {
    const env = await freshCatalog()
    await env.catalog.createNamespace('db')
    const id: TableId = { namespace: 'db', name }
    const created = await env.catalog.createTable(id, { schema })
    return { ...env, id, created }
  }

  it('two concurrent commits from the same base: exactly one succeeds, the other gets CommitConflictError and its file is deleted', async () => {
    const { catalog, id, created } = await table()
    const a = await appendFiles(io, created.metadata, [dataFile(1)])
    const b = await appendFiles(io, created.metadata, [dataFile(2)])
    const results = await Promise.allSettled([
      catalog.commit(id, { base: created.metadataLocation, metadata: a, baseMetadata: created.metadata }),
      catalog.commit(id, { base: created.metadataLocation, metadata: b, baseMetadata: created.metadata }),
    ])
    const ok = results.filter((r) => r.status === 'fulfilled')
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')
    expect(ok).toHaveLength(1)
    expect(failed).toHaveLength(1)
    expect(failed[0]!.reason).toBeInstanceOf(CommitConflictError)
    expect((failed[0]!.reason as CommitConflictError).retryable).toBe(true)
    const winner = (ok[0] as PromiseFulfilledResult<{ metadataLocation: string }>).value.metadataLocation
    expect((await catalog.loadTable(id)).metadataLocation).toBe(winner)
    expect(await metadataFiles(created.metadata.location)).toEqual([created.metadataLocation, winner].sort())
  })

  it('a commit from a stale base is a conflict and writes no metadata file', async () => {
    const { catalog, id, created } = await table()
    await catalog.commit(id, { base: created.metadataLocation, metadata: await appendFiles(io, created.metadata, [dataFile(1)]) })
    const before = await metadataFiles(created.metadata.location)
    await expect(catalog.commit(id, { base: created.metadataLocation, metadata: await appendFiles(io, created.metadata, [dataFile(2)]) })).rejects.toThrow(
      /base metadata .* is no longer current/,
    )
    expect(await metadataFiles(created.metadata.location)).toEqual(before)
  })

  it('20 concurrent committers that reload and re-apply on conflict lose nothing: 20 appends in 20 consecutive snapshots', async () => {
    const { catalog, id } = await table()
    let conflicts = 0
    const committer = async (n: number) => {
      for (;;) {
        const { metadata, metadataLocation } = await catalog.loadTable(id)
        const next = await appendFiles(io, metadata, [dataFile(n)], { summary: { 'floe.committer': String(n) } })
        try {
          return await catalog.commit(id, { base: metadataLocation, metadata: next, baseMetadata: metadata })
        } catch (err) {
          if (!(err instanceof CommitConflictError)) throw err
          conflicts++
        }
      }
    }
    await Promise.all(Array.from({ length: 20 }, (_, n) => committer(n)))
    const { metadata, metadataLocation } = await catalog.loadTable(id)
    expect(metadata.snapshots).toHaveLength(20)
    // A chain: each snapshot's parent is the one before it, sequence numbers 1..20.
    const chain = metadata.snapshots
    chain.forEach((s, i) => {
      expect(s['sequence-number']).toBe(BigInt(i + 1))
      expect(s['parent-snapshot-id']).toBe(i === 0 ? undefined : chain[i - 1]!['snapshot-id'])
    })
    expect(new Set(chain.map((s) => s.summary['floe.committer'])).size).toBe(20)
    expect(currentSnapshot(metadata)!.summary['total-data-files']).toBe('20')
    const live = await liveDataFiles(io, metadata)
    expect(live.map((e) => e.dataFile.filePath).sort()).toEqual(Array.from({ length: 20 }, (_, n) => dataFile(n).filePath).sort())
    // Only referenced metadata files remain: the 21 versions in the log, no loser's leftovers.
    const files = await metadataFiles(metadata.location)
    expect(files).toEqual([...metadata['metadata-log'].map((e) => e['metadata-file']), metadataLocation].sort())
    expect(conflicts).toBeGreaterThan(0)
  }, 300_000)
})

describe('failed swaps', () => {
  /** Wraps the real client: UpdateItem fails after (or instead of) reaching DynamoDB Local, as a timeout would. */
  function faulty(real: DynamoDBClient, mode: 'applied-then-timeout' | 'timeout-not-sent'): DynamoDBClient {
    return {
      send: async (cmd: unknown) => {
        if (cmd instanceof UpdateItemCommand) {
          if (mode === 'applied-then-timeout') await real.send(cmd)
          throw Object.assign(new Error('socket timed out'), { name: 'TimeoutError', $metadata: { attempts: 1 } })
        }
        return real.send(cmd as never)
      },
    } as unknown as DynamoDBClient
  }

  it('a swap that landed although the request errored counts as committed', async () => {
    const { table } = await freshCatalog()
    const good = new DynamoDbCatalog({ ddb, tableName: table, warehouse, io })
    await good.createNamespace('db')
    const id = { namespace: 'db', name: 'landed' }
    const created = await good.createTable(id, { schema })
    const flaky = new DynamoDbCatalog({ ddb: faulty(ddb, 'applied-then-timeout'), tableName: table, warehouse, io })
    const res = await flaky.commit(id, { base: created.metadataLocation, metadata: await appendFiles(io, created.metadata, [dataFile(1)]) })
    expect((await good.loadTable(id)).metadataLocation).toBe(res.metadataLocation)
  })

  it('an unknown outcome is CommitStateUnknownError (not retryable) and keeps the new metadata file', async () => {
    const { table } = await freshCatalog()
    const good = new DynamoDbCatalog({ ddb, tableName: table, warehouse, io })
    await good.createNamespace('db')
    const id = { namespace: 'db', name: 'unknown' }
    const created = await good.createTable(id, { schema })
    const flaky = new DynamoDbCatalog({ ddb: faulty(ddb, 'timeout-not-sent'), tableName: table, warehouse, io })
    const err = await flaky.commit(id, { base: created.metadataLocation, metadata: await appendFiles(io, created.metadata, [dataFile(1)]) }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(CommitStateUnknownError)
    expect((err as CommitStateUnknownError).retryable).toBe(false)
    expect((err as Error).message).toMatch(/outcome unknown: TimeoutError/)
    expect((await good.loadTable(id)).metadataLocation).toBe(created.metadataLocation)
    expect(await metadataFiles(created.metadata.location)).toHaveLength(2)
  })
})

describe('concurrent creates', () => {
  it('two engines creating the same table at once: one wins, the other gets AlreadyExistsError and leaves no file behind', async () => {
    const { catalog } = await freshCatalog()
    await catalog.createNamespace('db')
    const id = { namespace: 'db', name: 'raced' }
    const results = await Promise.allSettled([catalog.createTable(id, { schema }), catalog.createTable(id, { schema })])
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')
    expect(failed).toHaveLength(1)
    expect(failed[0]!.reason).toBeInstanceOf(AlreadyExistsError)
    const winner = (await catalog.loadTable(id)).metadataLocation
    expect(await metadataFiles(`${warehouse}/db.db/raced`)).toEqual([winner])
  })
})
