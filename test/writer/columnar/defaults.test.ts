import { describe, expect, it } from 'vitest'
import { SchemaError } from '../../../lib/errors.js'
import type { Schema } from '../../../lib/schema/types.js'
import { compileCoercer } from '../../../lib/writer/columnar/index.js'

const schemaOf = (fields: Schema['fields']): Schema => ({ type: 'struct', 'schema-id': 0, fields })

describe('v3 write-default', () => {
  const coerce = compileCoercer(
    schemaOf([
      { id: 1, name: 'id', required: true, type: 'long' },
      { id: 2, name: 'score', required: false, type: 'int', 'write-default': -999 },
      { id: 3, name: 'region', required: true, type: 'string', 'write-default': 'eu' },
      { id: 4, name: 'amount', required: false, type: 'decimal(9, 2)', 'write-default': '1.50' },
      { id: 5, name: 'seen', required: false, type: 'timestamptz', 'write-default': '2024-05-01T10:00:00.000001+00:00' },
      { id: 6, name: 'tag', required: false, type: 'binary', 'write-default': 'cafe' },
      {
        id: 7,
        name: 'meta',
        required: false,
        type: { type: 'struct', fields: [{ id: 8, name: 'v', required: false, type: 'int', 'write-default': 7 }] },
        'write-default': {},
      },
      { id: 9, name: 'plain', required: false, type: 'int' },
    ]),
    { table: 'db.events' },
  )

  it('a record that lacks a field is written with the field\'s write-default', () => {
    const { row } = coerce({ id: 1 })
    expect(row).toEqual({
      id: 1n,
      score: -999,
      region: 'eu',
      amount: 150n,
      seen: 1714557600000001n,
      tag: Uint8Array.from([0xca, 0xfe]),
      meta: { v: 7 },
      plain: null,
    })
  })

  it('an explicit null stays null and a present value wins over the default', () => {
    const { row } = coerce({ id: 2, score: null, region: 'us', meta: { v: null } })
    expect(row.score).toBeNull()
    expect(row.region).toBe('us')
    expect(row.meta).toEqual({ v: null })
  })

  it('a write-default that does not fit its type fails when the coercer is compiled, naming field and value', () => {
    const bad = schemaOf([{ id: 1, name: 'score', required: false, type: 'int', 'write-default': 'lots' }])
    expect(() => compileCoercer(bad, { table: 'db.events' })).toThrow(SchemaError)
    expect(() => compileCoercer(bad, { table: 'db.events' })).toThrow("field 'score': write-default string 'lots' is not a valid int")
  })
})
