/**
 * JSON date-time text with digits past microseconds, through the real writer path (DynamoDB
 * Local + s3rver, read back with hyparquet). A microsecond column cannot hold such text, so it is
 * never floored into one: a format-v3 table infers `timestamptz_ns` for it, a format-v2 table
 * (no nanosecond type) a string, and in an existing microsecond column such a value is a dead
 * letter naming the field, the limit and the value while the batch's other records land.
 */
import { describe, expect, it } from 'vitest'
import { currentSchema } from '../../lib/iceberg/metadata.js'
import { writeBatch } from '../../lib/writer/pipeline.js'
import { deadLines, rawTimestamps, registeredRows } from './readback.js'
import { kafkaEvent, writerSetup } from './support.js'

const routes = (formatVersion?: 3) =>
  JSON.stringify({ defaultNamespace: 'db', routes: [{ topic: 'ticks', table: 'ticks' }], ...(formatVersion ? { tables: { ticks: { formatVersion } } } : {}) })
const event = (values: object[]) => kafkaEvent(values.map((value, offset) => ({ topic: 'ticks', partition: 0, offset, value })))
const columnType = async (s: Awaited<ReturnType<typeof writerSetup>>, name: string) =>
  currentSchema((await s.catalog.loadTable({ namespace: 'db', name: 'ticks' })).metadata).fields.find((f) => f.name === name)?.type

describe('date-time text with nanoseconds', () => {
  it('a format-v3 table infers timestamptz_ns and stores every value exactly (µs ones too)', async () => {
    const s = await writerSetup({ FLOE_ROUTES: routes(3) })
    const r = await writeBatch(s.deps, event([{ id: 1, at: '2024-05-01T12:51:30.123456789Z' }, { id: 2, at: '2024-05-01T12:51:30.5Z' }]), { writerId: 'w1' })
    expect(r).toMatchObject({ deadLetters: 0, tables: [{ rows: 2 }] })
    expect(await columnType(s, 'at')).toBe('timestamptz_ns')
    const rows = (await registeredRows(s, rawTimestamps)).get('db.ticks')!
    expect(rows.map((row) => [row.id, row.at])).toEqual([
      [1n, 1_714_567_890_123_456_789n],
      [2n, 1_714_567_890_500_000_000n],
    ])
  })

  it('a format-v2 table infers a string for it (no nanosecond type there) and keeps the text as sent', async () => {
    const s = await writerSetup({ FLOE_ROUTES: routes() })
    const text = '2024-05-01T12:51:30.123456789Z'
    const r = await writeBatch(s.deps, event([{ id: 1, at: text }]), { writerId: 'w1' })
    expect(r).toMatchObject({ deadLetters: 0, tables: [{ rows: 1 }] })
    expect(await columnType(s, 'at')).toBe('string')
    expect((await registeredRows(s)).get('db.ticks')!.map((row) => row.at)).toEqual([text])
  })

  it('into an existing microsecond column: a dead letter naming field, limit and value; trailing zeros and the other records land', async () => {
    const s = await writerSetup({ FLOE_ROUTES: routes() })
    await writeBatch(s.deps, event([{ id: 0, at: '2024-05-01T12:51:30.123456Z' }]), { writerId: 'w1' })
    expect(await columnType(s, 'at')).toBe('timestamptz')
    const r = await writeBatch(
      s.deps,
      kafkaEvent([
        { topic: 'ticks', partition: 0, offset: 1, value: { id: 1, at: '2024-05-01T12:51:30.123456789Z' } },
        { topic: 'ticks', partition: 0, offset: 2, value: { id: 2, at: '2024-05-01T12:51:30.123456000Z' } },
        { topic: 'ticks', partition: 0, offset: 3, value: { id: 3, at: '2024-05-01T14:51:30.000000001+02:00' } },
      ]),
      { writerId: 'w1' },
    )
    expect(r).toMatchObject({ deadLetters: 2, tables: [{ rows: 1 }] })
    const reasons = Object.fromEntries((await deadLines(s)).map((l) => [l.offset, l.reason]))
    expect(reasons['1']).toBe("table db.ticks: field 'at' expected timestamptz (microseconds: the value has non-zero digits past them), got string '2024-05-01T12:51:30.123456789Z'")
    expect(reasons['3']).toMatch(/field 'at' expected timestamptz \(microseconds: .*got string '2024-05-01T14:51:30.000000001\+02:00'/)
    expect((await registeredRows(s, rawTimestamps)).get('db.ticks')!.map((row) => [row.id, row.at])).toEqual([
      [0n, 1_714_567_890_123_456n],
      [2n, 1_714_567_890_123_456n],
    ])
  })
})
