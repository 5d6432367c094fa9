/**
 * `npx tsx test/bench/parquet-settings.ts [--narrow 13830] [--wide 1415] [--runs 7]`: parquet-wasm's
 * writer settings measured on the bench's data (data.ts: one 6 MB event's worth of narrow and of
 * wide records, coerced and built into Arrow as the writer does), for encode time (median of
 * runs, IPC → Parquet, what a writer worker does) and file size. The settings Floe writes
 * (columnar/parquet.ts `parquetSettings`) are the baseline; docs/benchmarks.md "Parquet
 * settings" states the result and what was chosen.
 */
import { parseArgs } from 'node:util'
import * as arrow from 'apache-arrow'
import { Compression, Encoding, EnabledStatistics, Table as WasmTable, writeParquet, WriterPropertiesBuilder, WriterVersion } from 'parquet-wasm/node'
import { inferSchema } from '../../lib/schema/infer.js'
import type { StructType } from '../../lib/schema/index.js'
import { compileArrowBuilder, compileCoercer, integerColumns, parquetSettings } from '../../lib/writer/columnar/index.js'
import { median, round } from './common.js'
import { narrowRecord, wideRecord } from './data.js'

type Tune = (b: WriterPropertiesBuilder, table: arrow.Table) => WriterPropertiesBuilder

const intColumns = (t: arrow.Table) => t.schema.fields.filter((f) => arrow.DataType.isInt(f.type) || arrow.DataType.isTimestamp(f.type)).map((f) => f.name)
const stringColumns = (t: arrow.Table) => t.schema.fields.filter((f) => arrow.DataType.isUtf8(f.type)).map((f) => f.name)

export const VARIANTS: Record<string, Tune> = {
  'Floe today (V1 pages, PLAIN, dictionary for low-cardinality strings, zstd)': (b) => b,
  'V2 data pages': (b) => b.setWriterVersion(WriterVersion.V2),
  // What FLOE_PARQUET_INTEGER_ENCODING=delta writes: Floe's own choice of columns (parquet.ts integerColumns).
  'FLOE_PARQUET_INTEGER_ENCODING=delta (DELTA_BINARY_PACKED top-level ints, longs, dates, times, timestamps; V1 pages)': (b, t) =>
    integerColumns(icebergSchemas.get(t)!, 'delta').reduce((x, c) => x.setColumnEncoding(c, Encoding.DELTA_BINARY_PACKED), b),
  'V2 pages + DELTA_BINARY_PACKED longs + DELTA_LENGTH_BYTE_ARRAY strings': (b, t) =>
    stringColumns(t).reduce((x, c) => x.setColumnEncoding(c, Encoding.DELTA_LENGTH_BYTE_ARRAY), intColumns(t).reduce((x, c) => x.setColumnEncoding(c, Encoding.DELTA_BINARY_PACKED), b.setWriterVersion(WriterVersion.V2))),
  'dictionary on every column': (b) => b.setDictionaryEnabled(true),
  'statistics per column chunk only (no page statistics)': (b) => b.setStatisticsEnabled(EnabledStatistics.Chunk),
  'data pages of 64 KB (default 1 MB)': (b) => b.setDataPageSizeLimit(64 * 1024),
  'data pages of 8 MB': (b) => b.setDataPageSizeLimit(8 * 1024 * 1024),
  'row groups of 4,096 rows': (b) => b.setMaxRowGroupSize(4096),
  'snappy instead of zstd': (b) => b.setCompression(Compression.SNAPPY),
  'lz4_raw instead of zstd': (b) => b.setCompression(Compression.LZ4_RAW),
}

/** The Iceberg schema each measured table was built from. */
const icebergSchemas = new WeakMap<arrow.Table, StructType>()

function arrowTable(make: (i: number) => Record<string, unknown>, n: number): arrow.Table {
  const values = Array.from({ length: n }, (_, i) => JSON.parse(JSON.stringify(make(i))) as Record<string, unknown>)
  const schema = inferSchema(values.slice(0, 1000))
  const coerce = compileCoercer(schema, { table: 'bench.settings' })
  const { table } = compileArrowBuilder(schema)(values.map((v) => coerce(v).row))
  icebergSchemas.set(table, schema)
  return table
}

function encode(ipc: Uint8Array, table: arrow.Table, tune: Tune): Uint8Array {
  const s = parquetSettings(table, { compression: 'zstd' })
  let b = new WriterPropertiesBuilder().setCompression(s.compression).setCreatedBy(s.createdBy).setDictionaryEnabled(false)
  for (const name of s.dictionary) b = b.setColumnDictionaryEnabled(name, true)
  return writeParquet(WasmTable.fromIPCStream(ipc), tune(b, table).build())
}

export function measureSettings(table: arrow.Table, runs: number): { variant: string; ms: number; bytes: number }[] {
  const ipc = arrow.tableToIPC(table, 'stream')
  const times = new Map<string, number[]>(Object.keys(VARIANTS).map((k) => [k, []]))
  const sizes = new Map<string, number>()
  for (const [k, tune] of Object.entries(VARIANTS)) sizes.set(k, encode(ipc, table, tune).byteLength) // warm-up
  // Interleaved: every variant once per round, so load drifts hit them alike.
  for (let r = 0; r < runs; r++) {
    for (const [k, tune] of Object.entries(VARIANTS)) {
      const t = performance.now()
      encode(ipc, table, tune)
      times.get(k)!.push(performance.now() - t)
    }
  }
  return Object.keys(VARIANTS).map((k) => ({ variant: k, ms: round(median(times.get(k)!), 1), bytes: sizes.get(k)! }))
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { narrow: { type: 'string', default: '13830' }, wide: { type: 'string', default: '1415' }, runs: { type: 'string', default: '7' } } })
  console.log('| data | rows | variant | encode ms (median) | vs today | bytes | vs today |\n|---|---|---|---|---|---|---|')
  for (const [name, make, n] of [['narrow', narrowRecord, Number(values.narrow)], ['wide', (i: number) => wideRecord(i), Number(values.wide)]] as const) {
    const rows = measureSettings(arrowTable(make, n), Number(values.runs))
    const base = rows[0]!
    for (const r of rows) console.log(`| ${name} | ${n} | ${r.variant} | ${r.ms} | ${round(r.ms / base.ms, 2)} | ${r.bytes} | ${round(r.bytes / base.bytes, 2)} |`)
  }
}
