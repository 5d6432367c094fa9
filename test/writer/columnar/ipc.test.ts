import * as arrow from 'apache-arrow'
import { describe, expect, it } from 'vitest'
import type { Schema } from '../../../lib/schema/types.js'
import { compileArrowBuilder, compileCoercer, tableToStream } from '../../../lib/writer/columnar/index.js'

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'name', required: false, type: 'string' },
    { id: 3, name: 'tags', required: false, type: { type: 'list', 'element-id': 6, element: 'string', 'element-required': false } },
    { id: 4, name: 'at', required: false, type: { type: 'struct', fields: [{ id: 7, name: 'x', required: false, type: 'double' }] } },
    { id: 5, name: 'm', required: false, type: { type: 'map', 'key-id': 8, key: 'string', 'value-id': 9, value: 'long', 'value-required': false } },
  ],
}

describe('tableToStream: Arrow IPC with the schema message encoded once per schema', () => {
  const coerce = compileCoercer(schema, { table: 't' })
  const rows = Array.from({ length: 50 }, (_, i) => coerce({ id: i, name: i % 4 ? `n${i}` : null, tags: i % 2 ? null : ['a', `t${i}`], at: { x: i / 3 }, m: { k: i } }).row)
  const build = compileArrowBuilder(schema)

  it("writes exactly apache-arrow's stream, for the first table of a schema and every one after it", () => {
    for (const n of [1, 50, 7, 0, 1]) {
      const { table } = build(rows.slice(0, n))
      // What arrow-build returned before it kept the compiled schema: the table of the batch's own schema copy.
      const expected = arrow.tableToIPC(new arrow.Table(table.batches), 'stream')
      expect(Buffer.from(tableToStream(table)).equals(Buffer.from(expected)), `${n} rows`).toBe(true)
    }
  })

  it('reads back as the same rows and schema', () => {
    const { table } = build(rows)
    const back = arrow.tableFromIPC(tableToStream(table))
    expect(back.numRows).toBe(50)
    expect(back.schema.fields.map((f) => [f.name, f.metadata.get('PARQUET:field_id')])).toEqual([['id', '1'], ['name', '2'], ['tags', '3'], ['at', '4'], ['m', '5']])
    expect(back.get(10)!.toJSON()).toMatchObject({ id: 10n, name: 'n10', at: { x: 10 / 3 } })
  })

  it('gives every table of a compiled builder the same schema object (what the cache is keyed by)', () => {
    expect(build(rows.slice(0, 1)).table.schema).toBe(build(rows.slice(0, 2)).table.schema)
  })
})
