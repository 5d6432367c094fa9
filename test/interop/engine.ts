/**
 * Node's side of engine.py: one Python process per test file holding Spark (started on first
 * use), a PyIceberg catalog and a DuckDB connection, all configured on Floe's DynamoDB catalog
 * table and bucket. Replies are parsed losslessly; engine.py tags typed values (`$decimal`,
 * `$timestamp`, `$uuid`, `$bytes`, `$int`…) so a test sees the type an engine read.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createInterface } from 'node:readline'
import { parse } from 'lossless-json'

const here = dirname(fileURLToPath(import.meta.url))
const REPLY = '@@floe-engine '

/** Why the suite is skipped (a registry could not be reached), or undefined when engines are installed. */
export const skipReason: string | undefined = process.env.FLOE_INTEROP_SKIP

export type Json = null | boolean | number | bigint | string | Json[] | { [k: string]: Json }
export interface Rows {
  schema: [string, string][]
  rows: Record<string, Json>[]
}

export interface Engines {
  /** Spark SQL through the `floe` catalog (Iceberg's DynamoDbCatalog on Floe's catalog table). */
  spark(sql: string): Promise<Rows>
  explain(sql: string): Promise<string>
  /** PyIceberg `table.scan(row_filter)` through its DynamoDB catalog: rows and planned file count. */
  scan(table: string, opts?: { rowFilter?: string; columns?: string[] }): Promise<Rows & { files: number; iceberg_schema: { fields: Record<string, Json>[] } }>
  pyicebergMetadata(table: string): Promise<{ metadata_location: string; metadata: Record<string, Json> }>
  duckdb(sql: string, params?: unknown[]): Promise<Rows>
  /** pyarrow's view of one Parquet file: logical types per column, Arrow types, rows. */
  parquet(path: string): Promise<{ columns: [string, string, string][]; arrow: [string, string][]; rows: Record<string, Json>[] }>
  close(): Promise<void>
}

export interface EngineTarget {
  catalogTable: string
  warehouse: string
}

const numbers = (v: string) => {
  const n = Number(v)
  return Number.isSafeInteger(n) || !/^-?\d+$/.test(v) ? n : BigInt(v)
}

export function startEngines(target: EngineTarget): Engines {
  const python = process.env.FLOE_INTEROP_PYTHON
  const jars = process.env.FLOE_INTEROP_JARS
  if (!python || !jars) throw new Error('FLOE_INTEROP_PYTHON/FLOE_INTEROP_JARS unset: run through `npm run test:interop` (test/interop/setup.ts installs the engines)')
  const child: ChildProcessWithoutNullStreams = spawn(python, [join(here, 'engine.py')], {
    env: {
      ...process.env,
      FLOE_INTEROP_CATALOG_TABLE: target.catalogTable,
      FLOE_INTEROP_WAREHOUSE: target.warehouse,
      // s3rver computes no flexible checksums; recent AWS SDKs (Java's included) send and expect them.
      AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
      AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
      PYSPARK_PYTHON: python,
      // Loopback only, no web UI, no progress bars: this is a test machine. spark.testing lets
      // remove_orphan_files take an older_than under 24 hours (its guard), so its dry run sees today's files.
      SPARK_LOCAL_IP: '127.0.0.1',
      PYSPARK_SUBMIT_ARGS: '--conf spark.ui.enabled=false --conf spark.ui.showConsoleProgress=false --conf spark.testing=true pyspark-shell',
      PYTHONUNBUFFERED: '1',
    },
  })
  const pending = new Map<number, { resolve: (v: Record<string, unknown>) => void; reject: (e: Error) => void }>()
  let nextId = 1
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-20_000)
    if (process.env.FLOE_INTEROP_VERBOSE) process.stderr.write(d)
  })
  const lines = createInterface({ input: child.stdout })
  lines.on('line', (line) => {
    if (!line.startsWith(REPLY)) return
    const reply = parse(line.slice(REPLY.length), undefined, numbers) as Record<string, unknown>
    const waiter = pending.get(reply.id as number)
    pending.delete(reply.id as number)
    if (reply.ok) waiter?.resolve(reply)
    else waiter?.reject(new Error(`${String(reply.error)}\n${String(reply.trace)}`))
  })
  const exited = new Promise<void>((res) => child.on('exit', (code) => {
    for (const w of pending.values()) w.reject(new Error(`engine.py exited (${code}); its stderr ends:\n${stderr.slice(-4000)}`))
    pending.clear()
    res()
  }))
  const call = <T>(op: string, args: Record<string, unknown>): Promise<T> =>
    new Promise((resolve, reject) => {
      const id = nextId++
      pending.set(id, { resolve: resolve as (v: Record<string, unknown>) => void, reject })
      child.stdin.write(`${JSON.stringify({ id, op, ...args })}\n`)
    })
  return {
    spark: (sql) => call('spark', { sql }),
    explain: async (sql) => (await call<{ plan: string }>('spark', { sql, explain: true })).plan,
    scan: (table, opts = {}) => call('pyiceberg_scan', { table, row_filter: opts.rowFilter, columns: opts.columns }),
    pyicebergMetadata: (table) => call('pyiceberg_metadata', { table }),
    duckdb: (sql, params) => call('duckdb', { sql, params }),
    parquet: (path) => call('parquet_schema', { path }),
    async close() {
      child.stdin.end()
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
      await exited
      clearTimeout(timer)
    },
  }
}
