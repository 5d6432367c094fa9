/**
 * A schema change committed through a REST catalog, shared by the suite against Iceberg's own REST
 * handlers (test/rest/client.rest.ts) and the one against Floe's endpoint
 * (test/catalog/rest-server.test.ts): the writer's evolution commits `add-schema` +
 * `set-current-schema` guarded by `assert-current-schema-id` and `assert-last-assigned-field-id`;
 * a second schema change from the same, now stale, base is a 409 that changes nothing.
 */
import { expect } from 'vitest'
import type { Catalog, TableId } from '../../lib/catalog/index.js'
import { CommitConflictError } from '../../lib/errors.js'
import { addSchema, currentSchema } from '../../lib/iceberg/metadata.js'
import type { RestPipeline } from './pipeline.js'

/** `floe` writes to `id` through `rest`; returns nothing, asserts as it goes. */
export async function schemaChangeThroughRest(floe: RestPipeline, rest: Catalog, id: TableId, topic: string, firstOffset: number): Promise<void> {
  const before = currentSchema((await rest.loadTable(id)).metadata)
  // A record with a field the table does not have: the writer evolves the table through the catalog.
  await floe.write([{ topic, partition: 0, offset: firstOffset, value: { id: firstOffset, name: `e${firstOffset}`, added_by_rest: 7 } }])
  expect((await floe.commit()).failures).toBe(0)
  const evolved = await rest.loadTable(id)
  const schema = currentSchema(evolved.metadata)
  expect(schema['schema-id']).toBeGreaterThan(before['schema-id'])
  expect(schema.fields.find((f) => f.name === 'added_by_rest')).toMatchObject({ type: 'long', required: false })
  expect(evolved.metadata['last-column-id']).toBeGreaterThan(Math.max(...before.fields.map((f) => f.id)))

  // Two schema changes from one base: the first lands, the second is refused (409), nothing half-applied.
  const base = await rest.loadTable(id)
  const next = (name: string) => {
    const current = currentSchema(base.metadata)
    const fieldId = base.metadata['last-column-id'] + 1
    return addSchema(base.metadata, { ...current, fields: [...current.fields, { id: fieldId, name, required: false, type: 'string' }] })
  }
  await rest.commit(id, { base: base.metadataLocation, metadata: next('first_change'), baseMetadata: base.metadata })
  await expect(rest.commit(id, { base: base.metadataLocation, metadata: next('second_change'), baseMetadata: base.metadata })).rejects.toBeInstanceOf(CommitConflictError)
  const names = currentSchema((await rest.loadTable(id)).metadata).fields.map((f) => f.name)
  expect(names).toContain('first_change')
  expect(names).not.toContain('second_change')
}
