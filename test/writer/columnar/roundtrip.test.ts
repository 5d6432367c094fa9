import * as fc from 'fast-check'
import { parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import { describe, expect, it } from 'vitest'
import { RecordError } from '../../../lib/errors.js'
import { inferSchema } from '../../../lib/schema/infer.js'
import { compileCoercer, encodeParquet } from '../../../lib/writer/columnar/index.js'

/** JSON-ish values as a decoder hands them over, with the strings that look like timestamps. */
const scalar = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.maxSafeInteger(),
  fc.string({ maxLength: 12 }),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom('2024-05-01T10:00:00+02:00', '+275760-09-13T00:00:00Z', '2024-05-01 10:00:00.123456789z', '2023-02-29T00:00:00Z'),
)
const value = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, fc.array(tie('v'), { maxLength: 3 }), fc.dictionary(fc.constantFrom('a', 'b', 'c', 'ts', 'n'), tie('v'), { maxKeys: 3 })),
})).v
const record = fc.dictionary(fc.constantFrom('id', 'ts', 'name', 'n', 'nested', 'list'), value, { maxKeys: 6 })

describe('inference, coercion and encoding agree', () => {
  it('a record alone always coerces to the schema inferred from it; in a batch the ones that do (the others are dead letters) have no unknown fields, and the file reads back', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(record, { minLength: 1, maxLength: 8 }), async (records) => {
        const schema = inferSchema(records)
        const coerce = compileCoercer(schema, { table: 'prop.t' })
        const attempts = records.map((r) => {
          try {
            return coerce(r)
          } catch (err) {
            return err
          }
        })
        const coerced = attempts.filter((a): a is ReturnType<typeof coerce> => !(a instanceof Error))
        // What does not coerce is a RecordError (a dead letter), nothing else.
        expect(attempts.filter((a) => a instanceof Error && !(a instanceof RecordError))).toEqual([])
        // Alone, a record always fits the schema inferred from it.
        for (const r of records) expect(() => compileCoercer(inferSchema([r]), { table: 'prop.one' })(r)).not.toThrow()
        expect(coerced.flatMap((c) => c.unknown)).toEqual([])
        if (schema.fields.length === 0 || coerced.length === 0) return // Parquet has no file without columns
        const { bytes, recordCount } = await encodeParquet(schema, coerced.map((c) => c.row))
        expect(recordCount).toBe(coerced.length)
        const rows = await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer, compressors })
        expect(rows).toHaveLength(coerced.length)
      }),
      { numRuns: 150 },
    )
  })
})
