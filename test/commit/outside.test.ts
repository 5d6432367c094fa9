/** Other engines change the table between a writer's registration and the commit (DESIGN.md "Interoperability"). */
import { describe, expect, it } from 'vitest'
import { parseTableId } from '../../lib/catalog/index.js'
import { commitTable } from '../../lib/commit/table.js'
import { addSchema, currentSnapshot } from '../../lib/iceberg/metadata.js'
import { liveDataFiles } from '../../lib/iceberg/scan.js'
import { testCommit } from './context.js'

describe('outside writers', () => {
  it('a schema change made outside is respected: the files keep their schema, the table keeps the new one', async () => {
    const t = await testCommit()
    const { name } = await t.table()
    const files = await t.register(name, { files: 2 })
    const id = parseTableId(name)
    const before = await t.catalog.loadTable(id)
    const evolved = addSchema(before.metadata, {
      type: 'struct',
      'schema-id': 0,
      fields: [...before.metadata.schemas[0]!.fields, { id: 2, name: 'added_by_spark', required: false, type: 'string' }],
    })
    await t.catalog.commit(id, { base: before.metadataLocation, metadata: evolved })

    expect(await commitTable(t.deps, name)).toMatchObject({ status: 'committed', files: 2 })
    const { metadata } = await t.catalog.loadTable(id)
    expect(metadata['current-schema-id']).toBe(1)
    expect(metadata.schemas.map((s) => s['schema-id'])).toEqual([0, 1])
    expect(metadata['last-column-id']).toBe(2)
    expect(currentSnapshot(metadata)!['schema-id']).toBe(1)
    expect((await liveDataFiles(t.deps.io, metadata)).map((e) => e.dataFile.filePath).sort()).toEqual(files.map((f) => f.filePath).sort())
  })

  it('a partition spec change made outside is respected: pending files keep their spec id, new ones use the new spec', async () => {
    const t = await testCommit()
    const { name } = await t.table()
    const old = await t.register(name, { files: 2 })
    const id = parseTableId(name)
    const before = await t.catalog.loadTable(id)
    const spec = { 'spec-id': 1, fields: [{ 'source-id': 1, 'field-id': 1000, name: 'id_bucket', transform: 'bucket[4]' }] }
    await t.catalog.commit(id, {
      base: before.metadataLocation,
      metadata: { ...before.metadata, 'partition-specs': [...before.metadata['partition-specs'], spec], 'default-spec-id': 1, 'last-partition-id': 1000 },
    })
    const fresh = await t.register(name, { specId: 1, files: 1, partitionTuple: [3] })
    expect(await commitTable(t.deps, name)).toMatchObject({ status: 'committed', files: 3 })
    const { metadata } = await t.catalog.loadTable(id)
    expect(metadata['default-spec-id']).toBe(1)
    const bySpec = new Map<string, number>()
    for (const e of await liveDataFiles(t.deps.io, metadata)) bySpec.set(e.dataFile.filePath, e.dataFile.specId)
    for (const f of old) expect(bySpec.get(f.filePath)).toBe(0)
    for (const f of fresh) expect(bySpec.get(f.filePath)).toBe(1)
  })
})
