/**
 * A small Floe-written table for reader tests: `events(id, name, ts)` partitioned by day(ts),
 * two rows appended per day, each append with its own metadata file — as a path-based writer
 * leaves a table. Written with Floe's own encoder and append; the tests read it with others.
 */
import { appendFiles } from '../../lib/iceberg/append.js'
import { newMetadataPath, writeTableMetadata } from '../../lib/iceberg/metadata-io.js'
import { appendMetadataLog, newTableMetadata } from '../../lib/iceberg/metadata.js'
import { applyTransform } from '../../lib/iceberg/transforms.js'
import type { TableMetadata } from '../../lib/iceberg/types.js'
import type { FileIO } from '../../lib/io/types.js'
import type { Schema } from '../../lib/schema/types.js'
import { coerceRecord, encodeParquet } from '../../lib/writer/columnar/index.js'

export const EVENTS: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: false, type: 'long' },
    { id: 2, name: 'name', required: false, type: 'string' },
    { id: 3, name: 'ts', required: false, type: 'timestamptz' },
  ],
}

/** Create the table at `location` and append two rows for each of `days` (YYYY-MM-DD): row i of day n has id 10n + i. */
export async function writeDailyEventsTable(io: FileIO, location: string, days: string[], properties?: Record<string, string>): Promise<{ md: TableMetadata; path: string }> {
  const spec = { 'spec-id': 0, fields: [{ 'source-id': 3, 'field-id': 1000, name: 'ts_day', transform: 'day' }] }
  let md = newTableMetadata({ location, schema: EVENTS, spec, properties })
  let path = newMetadataPath(md)
  await writeTableMetadata(io, path, md)
  for (const [n, day] of days.entries()) {
    const rows = [0, 1].map((i) => coerceRecord(EVENTS, { id: 10 * n + i, name: `r${n}${i}`, ts: `${day}T0${i}:00:00Z` }, { table: 'events' }).row)
    const parquet = await encodeParquet(EVENTS, rows)
    const filePath = `${location}/data/ts_day=${day}/f${n}.parquet`
    await io.write(filePath, parquet.bytes)
    const partition = [applyTransform('day', 'timestamptz', rows[0]!.ts)]
    const next = await appendFiles(io, md, [{ content: 0, filePath, fileFormat: 'PARQUET', specId: 0, partition, recordCount: 2, fileSizeInBytes: parquet.bytes.length, ...parquet.metrics }])
    const nextPath = newMetadataPath(next, path)
    md = appendMetadataLog(next, { path, lastUpdatedMs: md['last-updated-ms'] }).metadata
    await writeTableMetadata(io, nextPath, md)
    path = nextPath
  }
  return { md, path }
}
