/** The writer's pointer cache: loads within the TTL read no catalog; a conflict forgets the table. */
import { describe, expect, it } from 'vitest'
import { DynamoDbCatalog } from '../../lib/catalog/dynamodb.js'
import { PointerCachedCatalog, withPointerCache } from '../../lib/catalog/pointer-cache.js'
import { CommitConflictError, NoSuchTableError } from '../../lib/errors.js'
import { addSchema } from '../../lib/iceberg/metadata.js'
import { createFileIO } from '../../lib/io/index.js'
import { createTestBucket, createTestCatalogTable, testAws } from '../helpers/aws.js'

const SCHEMA = { type: 'struct' as const, 'schema-id': 0, fields: [{ id: 1, name: 'id', required: false, type: 'long' as const }] }

async function catalogs() {
  const aws = testAws()
  const io = createFileIO(aws.clients)
  const warehouse = `s3://${await createTestBucket()}/wh`
  const tableName = await createTestCatalogTable()
  const inner = new DynamoDbCatalog({ ddb: aws.ddb, tableName, warehouse, io })
  let loads = 0
  const counting = Object.assign(Object.create(inner) as DynamoDbCatalog, { loadTable: (id: Parameters<DynamoDbCatalog['loadTable']>[0]) => (loads++, inner.loadTable(id)) })
  let clock = 1_000_000
  const cached = new PointerCachedCatalog(counting, 10_000, 8, () => clock)
  const other = new DynamoDbCatalog({ ddb: aws.ddb, tableName, warehouse, io })
  await inner.createNamespace('db')
  return { cached, other, loads: () => loads, tick: (ms: number) => void (clock += ms) }
}

describe('PointerCachedCatalog', () => {
  it('serves loads from the container for the TTL, then reads the catalog again and sees what others committed', async () => {
    const c = await catalogs()
    const id = { namespace: 'db', name: 't' }
    await expect(c.cached.loadTable(id)).rejects.toBeInstanceOf(NoSuchTableError)
    await c.other.createTable(id, { schema: SCHEMA })
    // A miss is not cached: the table created elsewhere is seen at once.
    const first = await c.cached.loadTable(id)
    expect(c.loads()).toBe(2)
    const theirs = await c.other.commit(id, { base: first.metadataLocation, metadata: addSchema(first.metadata, { ...SCHEMA, fields: [...SCHEMA.fields, { id: 2, name: 'x', required: false, type: 'string' }] }) })
    c.tick(9_999)
    expect((await c.cached.loadTable(id)).metadataLocation).toBe(first.metadataLocation)
    expect(c.loads()).toBe(2)
    c.tick(1)
    expect((await c.cached.loadTable(id)).metadataLocation).toBe(theirs.metadataLocation)
    expect(c.loads()).toBe(3)
  })

  it('a commit against a stale pointer conflicts and forgets the table; the reload reads the catalog; its own commit is cached', async () => {
    const c = await catalogs()
    const id = { namespace: 'db', name: 'u' }
    const created = await c.cached.createTable(id, { schema: SCHEMA })
    expect((await c.cached.loadTable(id)).metadataLocation).toBe(created.metadataLocation)
    expect(c.loads()).toBe(0)
    const base = await c.other.loadTable(id)
    const theirs = await c.other.commit(id, { base: base.metadataLocation, metadata: addSchema(base.metadata, { ...SCHEMA, fields: [...SCHEMA.fields, { id: 2, name: 'y', required: false, type: 'string' }] }) })
    const stale = await c.cached.loadTable(id)
    const ours = addSchema(stale.metadata, { ...SCHEMA, fields: [...SCHEMA.fields, { id: 2, name: 'z', required: false, type: 'string' }] })
    await expect(c.cached.commit(id, { base: stale.metadataLocation, metadata: ours })).rejects.toBeInstanceOf(CommitConflictError)
    const fresh = await c.cached.loadTable(id)
    expect(fresh.metadataLocation).toBe(theirs.metadataLocation)
    expect(c.loads()).toBe(1)
    const mine = await c.cached.commit(id, { base: fresh.metadataLocation, metadata: addSchema(fresh.metadata, { ...SCHEMA, fields: [...SCHEMA.fields, { id: 3, name: 'z', required: false, type: 'string' }] }) })
    expect((await c.cached.loadTable(id)).metadataLocation).toBe(mine.metadataLocation)
    expect(c.loads()).toBe(1)
  })

  it('TTL 0 is the catalog itself', async () => {
    const c = await catalogs()
    expect(withPointerCache(c.other, { catalogPointerTtlMs: 0, metadataCacheEntries: 64 })).toBe(c.other)
    expect(withPointerCache(c.other, { catalogPointerTtlMs: 5_000, metadataCacheEntries: 64 })).toBeInstanceOf(PointerCachedCatalog)
  })
})
