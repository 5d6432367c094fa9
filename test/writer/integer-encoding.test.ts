/**
 * FLOE_PARQUET_INTEGER_ENCODING reaches the files: the real writer (writeBatch on DynamoDB Local
 * + s3rver) writes DELTA_BINARY_PACKED top-level long and timestamp columns with `delta` and
 * none without it, the same rows either way; compaction follows the setting in
 * test/maintenance/compact.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { writeBatch } from '../../lib/writer/pipeline.js'
import { deltaEncoded } from '../helpers/parquet-encodings.js'
import { registeredRows } from './readback.js'
import { kafkaEvent, registered, writerSetup, type EventRecord } from './support.js'

const ROUTES = JSON.stringify({ defaultNamespace: 'enc', routes: [{ topic: 'events', table: 'events' }], tables: { events: { columns: { at: 'timestamptz' } } } })

const records: EventRecord[] = Array.from({ length: 300 }, (_, i) => ({
  topic: 'events',
  partition: 0,
  offset: i,
  value: { id: i, n: i % 7 === 0 ? null : i * 1_000_003, at: `2024-05-01T10:00:${String(i % 60).padStart(2, '0')}.000Z`, name: `n${i % 5}`, nested: { count: i } },
}))

/** Per registered file: does each column chunk hold DELTA_BINARY_PACKED pages. */
async function deltaColumns(settings: Record<string, string>) {
  const s = await writerSetup({ FLOE_ROUTES: ROUTES, ...settings })
  await writeBatch(s.deps, kafkaEvent(records))
  const files = [...(await registered(s.control)).values()].flatMap((r) => [...r.files.values()].flat())
  expect(files.length).toBeGreaterThan(0)
  const encodings = await Promise.all(files.map(async (f) => deltaEncoded(await s.io.read(f.filePath))))
  return { encodings, rows: (await registeredRows(s)).get('enc.events')! }
}

describe('FLOE_PARQUET_INTEGER_ENCODING in the writer', () => {
  it('delta: top-level long and timestamp columns DELTA_BINARY_PACKED, strings and nested longs not; plain (the default): none; the same rows', async () => {
    const delta = await deltaColumns({ FLOE_PARQUET_INTEGER_ENCODING: 'delta' })
    const plain = await deltaColumns({})
    for (const file of delta.encodings) expect(file).toEqual({ id: true, n: true, at: true, name: false, 'nested.count': false })
    for (const file of plain.encodings) expect(Object.values(file).some(Boolean)).toBe(false)
    const key = (r: Record<string, unknown>) => Number(r.id)
    expect([...delta.rows].sort((a, b) => key(a) - key(b))).toEqual([...plain.rows].sort((a, b) => key(a) - key(b)))
    expect(delta.rows).toHaveLength(records.length)
  })
})
