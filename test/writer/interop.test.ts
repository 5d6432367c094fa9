/**
 * Files the writer produces are plain Parquet with Iceberg field ids: hyparquet and DuckDB's
 * read_parquet read the same rows, and parquet_schema() shows the ids of the table's schema.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import { expect, it } from 'vitest'
import { currentSchema } from '../../lib/iceberg/metadata.js'
import { KAFKA_COLUMN } from '../../lib/writer/kafka-column.js'
import { writeBatch } from '../../lib/writer/pipeline.js'
import { kafkaEvent, registered, writerSetup } from './support.js'

it('writes Parquet that hyparquet and DuckDB read alike, with the Iceberg field ids', async () => {
  const s = await writerSetup({ FLOE_ROUTES: JSON.stringify({ defaultNamespace: 'db', routes: [{ table: 'events' }], tables: { events: { kafkaMetadata: ['offset'] } } }) })
  const values = [
    { id: 1, name: 'a', ts: '2024-05-01T10:00:00Z', tags: ['x', 'y'], geo: { lat: 1.5, ok: true } },
    { id: 2, name: null, ts: '2024-05-01T11:30:00.123Z', tags: [], geo: { lat: -2.25, ok: false } },
  ]
  await writeBatch(s.deps, kafkaEvent(values.map((value, i) => ({ topic: 't', partition: 0, offset: 10 + i, value }))))
  const file = [...(await registered(s.control)).get('db.events')!.files.values()].flat()[0]!
  const bytes = await s.io.read(file.filePath)
  const schema = currentSchema((await s.catalog.loadTable({ namespace: 'db', name: 'events' })).metadata)

  const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
  const viaHyparquet = (await parquetReadObjects({ file: ab, compressors })) as Record<string, unknown>[]
  expect(viaHyparquet.map((r) => [r.id, r.name, (r[KAFKA_COLUMN] as { offset: bigint }).offset])).toEqual([
    [1n, 'a', 10n],
    [2n, null, 11n],
  ])

  const dir = mkdtempSync(join(tmpdir(), 'floe-interop-'))
  const db = await DuckDBInstance.create()
  const duck = await db.connect()
  try {
    const local = join(dir, 'f.parquet')
    writeFileSync(local, bytes)
    const rows = (await duck.runAndReadAll(`SELECT id, name, epoch_ms(ts) AS ms, tags, geo.lat AS lat, _kafka.offset AS off FROM read_parquet('${local}') ORDER BY id`)).getRowObjectsJson()
    expect(rows).toEqual([
      { id: '1', name: 'a', ms: '1714557600000', tags: ['x', 'y'], lat: 1.5, off: '10' },
      { id: '2', name: null, ms: '1714563000123', tags: [], lat: -2.25, off: '11' },
    ])
    const ids = (await duck.runAndReadAll(`SELECT name, field_id FROM parquet_schema('${local}') WHERE field_id IS NOT NULL`)).getRowObjectsJson()
    const byName = Object.fromEntries(ids.map((r) => [r.name as string, Number(r.field_id)]))
    for (const f of schema.fields) expect(byName[f.name]).toBe(f.id)
  } finally {
    duck.closeSync()
    rmSync(dir, { recursive: true, force: true })
  }
})
