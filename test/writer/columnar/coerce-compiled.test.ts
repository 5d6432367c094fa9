/**
 * The compiled struct coercion (columnar/struct-code.ts) against coerce.ts's generic loop, which
 * case-insensitive tables still use: over records whose keys are the schema's exact (lowercase)
 * names or unknown ones, both give the same row (values and key order), size, unknown fields, or
 * the same error — for required fields, write-defaults, nested structs, lists and every scalar.
 */
import * as fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { compileCoercer } from '../../../lib/writer/columnar/index.js'
import type { Schema } from '../../../lib/schema/types.js'

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'score', required: false, type: 'double' },
    { id: 3, name: 'name', required: false, type: 'string' },
    { id: 4, name: 'ok', required: false, type: 'boolean' },
    { id: 5, name: 'n', required: false, type: 'int', 'write-default': 7 },
    { id: 6, name: 'at', required: false, type: 'timestamptz' },
    { id: 7, name: 'tags', required: false, type: { type: 'list', 'element-id': 8, element: 'string', 'element-required': false } },
    {
      id: 9,
      name: 'inner',
      required: false,
      type: { type: 'struct', fields: [{ id: 10, name: 'a', required: true, type: 'string' }, { id: 11, name: 'b', required: false, type: 'long' }] },
    },
    { id: 12, name: 'amount', required: false, type: 'decimal(9, 2)' },
  ],
}

const scalar = fc.oneof(fc.integer(), fc.double(), fc.string({ maxLength: 6 }), fc.boolean(), fc.constant(null), fc.constantFrom('2024-05-01T10:00:00Z', '12.50', 'x'))
const inner = fc.oneof(scalar, fc.dictionary(fc.constantFrom('a', 'b', 'zz'), scalar, { maxKeys: 3 }))
const value = fc.oneof(scalar, fc.array(scalar, { maxLength: 3 }), inner)
const record = fc.dictionary(fc.constantFrom('id', 'score', 'name', 'ok', 'n', 'at', 'tags', 'inner', 'amount', 'extra'), value, { maxKeys: 10 })

function run(coerce: ReturnType<typeof compileCoercer>, r: unknown, fast: boolean): unknown {
  try {
    const c = coerce(r, fast)
    return { row: c.row, keys: JSON.stringify(Object.keys(c.row)), unknown: c.unknown, bytes: c.bytes }
  } catch (err) {
    return { error: (err as Error).message ?? String(err) }
  }
}

describe('compiled struct coercion', () => {
  it('gives what the generic loop gives, for any record', () => {
    const compiled = compileCoercer(schema, { table: 't', longsAsNumbers: true })
    const generic = compileCoercer(schema, { table: 't', caseInsensitive: true, longsAsNumbers: true })
    fc.assert(
      fc.property(record, fc.boolean(), (r, fast) => {
        expect(run(compiled, r, fast)).toEqual(run(generic, r, fast))
      }),
      { numRuns: 2000 },
    )
  })

  it("reads a field named like an inherited member (constructor, toString, __proto__…) only from the record's own key", () => {
    const names = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__']
    const inherited: Schema = { type: 'struct', 'schema-id': 0, fields: names.map((name, k) => ({ id: k + 1, name, required: false, type: k === 4 ? 'long' : 'string' })) }
    for (const ci of [false, true]) {
      const coerce = compileCoercer(inherited, { table: 't', caseInsensitive: ci, longsAsNumbers: true })
      // Absent keys are nulls, never the function or prototype every object inherits.
      expect(JSON.stringify(coerce(JSON.parse('{}')).row)).toBe(JSON.stringify(Object.fromEntries(names.map((n) => [n, null]))))
      // A `__proto__` field is the row's own key, not its prototype (a `{}` row used to drop 5 and to take null as its prototype).
      const row = coerce(JSON.parse('{"toString":"t","__proto__":5}')).row
      expect(JSON.stringify(row)).toBe('{"constructor":null,"toString":"t","valueOf":null,"hasOwnProperty":null,"__proto__":5}')
      expect(Object.getOwnPropertyDescriptor(row, '__proto__')?.value).toBe(5)
    }
    // Without `__proto__` the schema takes the compiled struct code (struct-code.ts), with it the generic loop: both read own keys only.
    const compiled = compileCoercer({ ...inherited, fields: inherited.fields.slice(0, 4) }, { table: 't', longsAsNumbers: true })
    expect(compiled(JSON.parse('{"valueOf":"v"}')).row).toEqual({ constructor: null, toString: null, valueOf: 'v', hasOwnProperty: null })
  })
})
