/** The metadata cache by location: a warm load reads the catalog pointer, never the metadata file again. */
import { describe, expect, it } from 'vitest'
import { DynamoDbCatalog } from '../../lib/catalog/dynamodb.js'
import { MetadataCache } from '../../lib/catalog/metadata-cache.js'
import { appendFiles } from '../../lib/iceberg/append.js'
import { createFileIO } from '../../lib/io/index.js'
import type { FileIO } from '../../lib/io/types.js'
import { createTestBucket, createTestCatalogTable, testAws } from '../helpers/aws.js'

function countingReads(io: FileIO): { io: FileIO; reads: string[] } {
  const reads: string[] = []
  return { io: { ...io, read: (p: string) => (reads.push(p), io.read(p)) }, reads }
}

describe('MetadataCache', () => {
  it('parses each metadata file once; a commit primes the cache; another writer\'s commit is seen at once', async () => {
    const aws = testAws()
    const { io, reads } = countingReads(createFileIO(aws.clients))
    const warehouse = `s3://${await createTestBucket()}/wh`
    const tableName = await createTestCatalogTable()
    const cache = new MetadataCache(8)
    const catalog = new DynamoDbCatalog({ ddb: aws.ddb, tableName, warehouse, io, metadataCache: cache })
    const other = new DynamoDbCatalog({ ddb: aws.ddb, tableName, warehouse, io: createFileIO(aws.clients) })
    await catalog.createNamespace('db')
    const id = { namespace: 'db', name: 't' }
    await catalog.createTable(id, { schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: false, type: 'long' }] } })
    const first = await catalog.loadTable(id)
    const again = await catalog.loadTable(id)
    expect(again.metadata).toBe(first.metadata)
    expect(reads.filter((p) => p.endsWith('.metadata.json'))).toHaveLength(1)

    const committed = await catalog.commit(id, { base: first.metadataLocation, metadata: await appendFiles(io, first.metadata, []), baseMetadata: first.metadata })
    const afterOwn = await catalog.loadTable(id)
    expect(afterOwn.metadataLocation).toBe(committed.metadataLocation)
    expect(reads.filter((p) => p.endsWith('.metadata.json'))).toHaveLength(1)

    const theirs = await other.loadTable(id)
    const moved = await other.commit(id, { base: theirs.metadataLocation, metadata: await appendFiles(io, theirs.metadata, []), baseMetadata: theirs.metadata })
    const afterTheirs = await catalog.loadTable(id)
    expect(afterTheirs.metadataLocation).toBe(moved.metadataLocation)
    expect(afterTheirs.metadata.snapshots).toHaveLength(2)
    expect(cache.hits).toBe(2)
  })

  it('keeps at most maxEntries, least recently used out first; 0 disables it', async () => {
    const cache = new MetadataCache(2)
    const md = (n: number) => ({ location: `l${n}` }) as never
    cache.put('a', md(1))
    cache.put('b', md(2))
    await cache.read({} as FileIO, 'a')
    cache.put('c', md(3))
    expect(cache.size).toBe(2)
    expect(await cache.read({} as FileIO, 'a')).toEqual({ location: 'l1' })
    const off = new MetadataCache(0)
    off.put('a', md(1))
    expect(off.size).toBe(0)
  })
})
