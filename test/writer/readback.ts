/**
 * Reading back what the writer handler left, independently of the writer's own result: rows of
 * every registered data file (hyparquet, not Floe's encoder), dead-letter lines from S3, the
 * files' column metrics summed per column, and a Lambda context for calling the real handler.
 */
import type { Context } from 'aws-lambda'
import { parquetReadObjects, type ParquetParsers } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import { fromBoundBytes, type BoundValue } from '../../lib/iceberg/conversions.js'
import { currentSchema } from '../../lib/iceberg/index.js'
import type { DataFile } from '../../lib/iceberg/types.js'
import { leafFields } from '../../lib/schema/index.js'
import { deadLetterLines, registered, type WriterSetup } from './support.js'

export const lambdaContext = (id: string, remainingMs = 60_000) =>
  ({
    awsRequestId: id,
    functionName: 'floe-writer',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:floe-writer',
    memoryLimitInMB: '1024',
    logGroupName: '/aws/lambda/floe-writer',
    logStreamName: 'stream',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => remainingMs,
  }) as unknown as Context

/** hyparquet parsers that keep timestamps as the stored integers (µs, ns) instead of millisecond Dates. */
export const rawTimestamps: Partial<ParquetParsers> = { timestampFromMicroseconds: (v: bigint) => v, timestampFromNanoseconds: (v: bigint) => v } as unknown as Partial<ParquetParsers>

/** Rows of every registered file, by table. */
export async function registeredRows(s: WriterSetup, parsers?: Partial<ParquetParsers>): Promise<Map<string, Record<string, unknown>[]>> {
  const out = new Map<string, Record<string, unknown>[]>()
  for (const [table, reg] of await registered(s.control)) {
    const rows: Record<string, unknown>[] = []
    for (const file of [...reg.files.values()].flat()) {
      const bytes = await s.io.read(file.filePath)
      const buf = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
      rows.push(...((await parquetReadObjects({ file: buf, compressors, ...(parsers ? { parsers } : {}) })) as Record<string, unknown>[]))
    }
    out.set(table, rows)
  }
  return out
}

export type DeadLine = { topic: string; partition: number; offset: string; table?: string; stage: string; reason: string }

/** Every dead-letter line of the setup's DLQ. */
export const deadLines = async (s: WriterSetup): Promise<DeadLine[]> => (await deadLetterLines(s.io, s.deps.config.dlq)) as unknown as DeadLine[]

/** Per column: summed value and null counts, and the lowest / highest bound over the files, compared as values of the column's type. */
export function fileMetrics(files: DataFile[], types: Map<number, string>) {
  const cols = new Map<number, { values: number; nulls: number; lower?: BoundValue; upper?: BoundValue }>()
  const key = (v: BoundValue) => (v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v)
  const less = (a: BoundValue, b: BoundValue) => key(a)! < key(b)!
  for (const f of files) {
    for (const [id, n] of f.valueCounts ?? []) {
      const c = cols.get(id) ?? { values: 0, nulls: 0 }
      c.values += n
      c.nulls += f.nullValueCounts?.get(id) ?? 0
      const lo = f.lowerBounds?.get(id)
      const hi = f.upperBounds?.get(id)
      if (lo) {
        const v = fromBoundBytes(types.get(id)!, lo)
        if (c.lower === undefined || less(v, c.lower)) c.lower = v
      }
      if (hi) {
        const v = fromBoundBytes(types.get(id)!, hi)
        if (c.upper === undefined || less(c.upper, v)) c.upper = v
      }
      cols.set(id, c)
    }
  }
  return Object.fromEntries([...cols].sort(([a], [b]) => a - b))
}

/** Leaf field id → type of a registered table's current schema. */
export async function leafTypes(s: WriterSetup, table: string): Promise<Map<number, string>> {
  const [namespace, name] = table.split('.')
  const { metadata } = await s.catalog.loadTable({ namespace: namespace!, name: name! })
  return new Map(leafFields(currentSchema(metadata)).map((f) => [f.id, f.type as string]))
}
