/** A control-table context on the local endpoints, and fake-but-valid data files, for control and commit tests. */
import { randomUUID } from 'node:crypto'
import { loadConfig, type FloeConfig } from '../../lib/config.js'
import type { ControlContext, OffsetRange, PendingBatchInput } from '../../lib/control/types.js'
import { encodeDataFile } from '../../lib/iceberg/datafile-json.js'
import type { DataFile } from '../../lib/iceberg/types.js'
import { createFileIO } from '../../lib/io/index.js'
import { createTestBucket, createTestControlTable, testAws } from '../helpers/aws.js'

export interface TestControl {
  ctx: ControlContext
  bucket: string
  config: FloeConfig
}

export async function testControl(overrides: Partial<FloeConfig> = {}): Promise<TestControl> {
  const aws = testAws()
  const bucket = await createTestBucket()
  const table = await createTestControlTable()
  const base = loadConfig({ FLOE_WAREHOUSE: `s3://${bucket}/warehouse`, FLOE_CONTROL_TABLE: table, FLOE_PIPELINE: 'p1', FLOE_ROUTES: JSON.stringify({ routes: [{ table: '{topic}' }] }) })
  const config: FloeConfig = { ...base, commitBackoffMs: 1, ...overrides }
  const io = createFileIO(aws.clients)
  return { ctx: { doc: aws.doc, table, io, spillPrefix: `s3://${bucket}/_floe/spill`, config }, bucket, config }
}

/** A data file entry that is valid for a manifest (the bytes need not exist for commit tests). */
export function fakeDataFile(location: string, recordCount = 10, specId = 0, partition: DataFile['partition'] = []): DataFile {
  return {
    content: 0,
    filePath: `${location}/data/${randomUUID()}.parquet`,
    fileFormat: 'PARQUET',
    specId,
    partition,
    recordCount,
    fileSizeInBytes: 1000 + recordCount,
  }
}

export function range(topic: string, partition: number, firstOffset: bigint, nextOffset: bigint, maxTimestamp = 1_700_000_000_000): OffsetRange {
  return { topic, partition, firstOffset, nextOffset, records: Number(nextOffset - firstOffset), maxTimestamp }
}

export function batchInput(table: string, ranges: OffsetRange[], files: DataFile[], schemaId = 0, specId = 0): PendingBatchInput {
  return {
    table,
    files: files.map(encodeDataFile),
    schemaId,
    specId,
    ranges,
    recordCount: files.reduce((n, f) => n + f.recordCount, 0),
    bytes: files.reduce((n, f) => n + f.fileSizeInBytes, 0),
  }
}
