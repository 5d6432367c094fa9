/**
 * The writer decodes JSON with JSON.parse and checks exactness only where it matters (issue 20):
 * an integer beyond 2^53 anywhere (2^53 + 1 is rounded by JSON.parse), a number into a string or decimal column. Each of these lands
 * exactly as the lossless decoding would store it, through the real writer on DynamoDB Local +
 * s3rver; the records around them take the fast path and land too.
 */
import { describe, expect, it } from 'vitest'
import { writeBatch } from '../../lib/writer/pipeline.js'
import { deadLines, registeredRows } from './readback.js'
import { kafkaEvent, writerSetup, type EventRecord } from './support.js'

const ev = (offset: number, value: string): EventRecord => ({ topic: 'events', partition: 0, offset, value })

describe('JSON fast path: exact where digits matter', () => {
  it('unsafe integers, long literals into string and decimal columns and plain doubles land exactly', { timeout: 60_000 }, async () => {
    const s = await writerSetup({
      FLOE_ROUTES: JSON.stringify({ defaultNamespace: 'db', routes: [{ table: 'events' }], tables: { 'db.events': { columns: { code: 'string', price: 'decimal(20, 2)' } } } }),
    })
    const out = await writeBatch(
      s.deps,
      kafkaEvent([
        // Creates the table: id long, score double, code string, price decimal.
        ev(0, '{"id": 1, "score": 0.5, "code": "a", "price": "1.5"}'),
        // 2^53 + 1: JSON.parse rounds it to 2^53.
        ev(1, '{"id": 9007199254740993, "score": 33.583333333333336, "code": "b", "price": 2}'),
        // JSON.parse reads 1.0049999999999999 as 1.005 (which rounds half up to 1.01); the literal is 1.00.
        ev(2, '{"id": 9223372036854775807, "score": 0.1, "code": 0.10000000000000001, "price": 1.0049999999999999}'),
        ev(3, '{"id": 3, "score": 1e300, "code": 12, "price": 0.5}'),
      ]),
    )
    expect(out).toMatchObject({ outcome: 'registered', deadLetters: 0, tables: [{ table: 'db.events', rows: 4 }] })
    expect(await deadLines(s)).toEqual([])
    const rows = (await registeredRows(s)).get('db.events')!
    const byId = new Map(rows.map((r) => [String(r.id), r]))
    expect(byId.get('9007199254740993')).toMatchObject({ score: 33.583333333333336, code: 'b' })
    const max = byId.get('9223372036854775807')!
    expect(max.code).toBe('0.10000000000000001')
    expect(Number(max.price)).toBe(1)
    expect(byId.get('3')).toMatchObject({ score: 1e300, code: '12' })
  })
})
