/**
 * The one reload-and-rebase loop (lib/catalog/rebase.ts) against the DynamoDB catalog on
 * DynamoDB Local and s3rver: conflicts reload and re-apply, an unknown outcome is rechecked
 * only when the caller's build can tell whether it landed, and the policy bounds the attempts.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { DynamoDbCatalog } from '../../lib/catalog/dynamodb.js'
import { commitWithRebase, type LoadedTable, type RebaseCatalog } from '../../lib/catalog/index.js'
import type { TableId } from '../../lib/catalog/index.js'
import { loadConfig } from '../../lib/config.js'
import { CommitConflictError, CommitStateUnknownError, FloeError } from '../../lib/errors.js'
import type { TableMetadata } from '../../lib/iceberg/types.js'
import { createFileIO } from '../../lib/io/index.js'
import { immediately, tableCommitPolicy } from '../../lib/retry/index.js'
import { createTestBucket, createTestCatalogTable, testAws, uniqueName } from '../helpers/aws.js'

let catalog: DynamoDbCatalog
beforeAll(async () => {
  const aws = testAws()
  const warehouse = `s3://${await createTestBucket()}/warehouse`
  catalog = new DynamoDbCatalog({ ddb: aws.ddb, tableName: await createTestCatalogTable(), warehouse, io: createFileIO(aws.clients) })
  await catalog.createNamespace('db')
})

const withProperty = (md: TableMetadata, key: string, value: string): TableMetadata => ({ ...md, properties: { ...md.properties, [key]: value } })

async function newTable(properties: Record<string, string> = {}): Promise<TableId> {
  const id = { namespace: 'db', name: uniqueName('t').replace(/-/g, '_') }
  await catalog.createTable(id, { schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: true, type: 'long' }] }, properties })
  return id
}

/** Sets `mine=1` unless the base already has it; counts the builds. */
function setMine() {
  const bases: LoadedTable[] = []
  const build = (base: LoadedTable) => {
    bases.push(base)
    return base.metadata.properties.mine === '1' ? { plan: 'already' } : { plan: 'set', metadata: withProperty(base.metadata, 'mine', '1') }
  }
  return { build, bases }
}

/** The real catalog, whose first commit lands and then reports an unknown outcome. */
function lostResponse(): RebaseCatalog {
  let first = true
  return {
    loadTable: (id) => catalog.loadTable(id),
    commit: async (id, req) => {
      const out = await catalog.commit(id, req)
      if (!first) return out
      first = false
      throw new CommitStateUnknownError('timed out waiting for the catalog')
    },
  }
}

describe('commitWithRebase', () => {
  it('on a conflict reloads and re-applies the change on the new base, so both changes land', async () => {
    const id = await newTable()
    const { build, bases } = setMine()
    const out = await commitWithRebase(catalog, id, build, {
      policy: immediately(3),
      beforeCommit: async (attempt) => {
        if (attempt > 0) return
        const theirs = await catalog.loadTable(id)
        await catalog.commit(id, { base: theirs.metadataLocation, metadata: withProperty(theirs.metadata, 'theirs', '1') })
      },
    })
    expect(out.attempts).toBe(2)
    expect(bases[1]!.metadata.properties.theirs).toBe('1')
    const { metadata } = await catalog.loadTable(id)
    expect(metadata.properties).toMatchObject({ mine: '1', theirs: '1' })
    expect(out.committed?.metadataLocation).toBe((await catalog.loadTable(id)).metadataLocation)
  })

  it('CommitStateUnknownError is not retried unless the build rechecks it', async () => {
    const id = await newTable()
    const { build, bases } = setMine()
    const err = await commitWithRebase(lostResponse(), id, build, { policy: immediately(5) }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(CommitStateUnknownError)
    expect(bases).toHaveLength(1)
  })

  it('with recheckUnknown the reload shows the swap landed: nothing is applied twice', async () => {
    const id = await newTable()
    const { build, bases } = setMine()
    const retried: string[] = []
    const out = await commitWithRebase(lostResponse(), id, build, { policy: immediately(5), recheckUnknown: true, onRetry: (e) => void retried.push(e.name) })
    expect(retried).toEqual(['CommitStateUnknownError'])
    expect(out).toMatchObject({ plan: 'already', attempts: 2 })
    expect(out.committed).toBeUndefined()
    expect(bases).toHaveLength(2)
    const { metadata } = await catalog.loadTable(id)
    expect(metadata['metadata-log']).toHaveLength(1)
  })

  it('conflicts past the policy surface the exhausted error with the attempt count', async () => {
    const id = await newTable()
    const { build, bases } = setMine()
    const conflicting: RebaseCatalog = { loadTable: (t) => catalog.loadTable(t), commit: async () => Promise.reject(new CommitConflictError('base moved')) }
    const err = await commitWithRebase(conflicting, id, build, { policy: immediately(3), exhausted: (e, n) => new FloeError(`${e.message} ${n} times`) }).catch((e: Error) => e)
    expect((err as Error).message).toBe('base moved 3 times')
    expect(bases).toHaveLength(3)
  })

  it("a table's commit.retry.num-retries bounds its data commits", async () => {
    const id = await newTable({ 'commit.retry.num-retries': '1', 'commit.retry.min-wait-ms': '0' })
    const config = loadConfig({ FLOE_WAREHOUSE: 's3://bucket/warehouse', FLOE_CONTROL_TABLE: 'control', FLOE_ROUTES: JSON.stringify({ routes: [{ table: '{topic}' }] }) })
    const { build, bases } = setMine()
    const conflicting: RebaseCatalog = { loadTable: (t) => catalog.loadTable(t), commit: async () => Promise.reject(new CommitConflictError('base moved')) }
    await expect(commitWithRebase(conflicting, id, build, { policy: (first) => tableCommitPolicy(config, first.metadata.properties, id.name) })).rejects.toThrow('base moved')
    expect(bases).toHaveLength(2)
  })
})
