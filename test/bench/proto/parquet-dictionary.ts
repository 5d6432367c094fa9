/**
 * Prototype for a proposal to lib/writer/columnar/parquet.ts (not used by Floe): the Rust writer
 * dictionary-encodes every column by default; for high-cardinality columns (ids, timestamps,
 * measures) that writes a dictionary page AND bit-packed indices that zstd cannot shrink, then
 * falls back to PLAIN — larger files and more work. Variant: keep dictionaries only for columns
 * whose sampled distinct ratio is low. Prints size and encode time per variant.
 * `npx tsx test/bench/proto/parquet-dictionary.ts [records]`
 */
import * as arrow from 'apache-arrow'
import { parquetMetadata } from 'hyparquet'
import { Table as WasmTable, writeParquet, WriterPropertiesBuilder } from 'parquet-wasm/node'
import { inferSchema } from '../../../lib/schema/infer.js'
import { compileArrowBuilder, compileCoercer, compressionOf } from '../../../lib/writer/columnar/index.js'
import { median, round } from '../common.js'
import { narrowRecord, wideRecord } from '../data.js'

const n = Number(process.argv[2] ?? 100_000)

function leafPaths(bytes: Uint8Array): string[] {
  const md = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer)
  return md.row_groups[0]!.columns.map((c) => c.meta_data!.path_in_schema.join('.'))
}

/** Distinct share of the first 2,000 values of each top-level column (nested columns keep dictionaries). */
function lowCardinality(rows: Record<string, unknown>[], name: string): boolean {
  const sample = rows.slice(0, 2000)
  const seen = new Set(sample.map((r) => { const v = r[name]; return typeof v === 'object' && v !== null ? JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? String(x) : x)) : v }))
  return seen.size / Math.max(1, sample.length) < 0.5
}

function write(table: arrow.Table, configure: (b: WriterPropertiesBuilder) => WriterPropertiesBuilder): Uint8Array {
  const props = configure(new WriterPropertiesBuilder().setCompression(compressionOf('zstd'))).build()
  return writeParquet(WasmTable.fromIPCStream(arrow.tableToIPC(table, 'stream')), props)
}

for (const [name, count, make] of [
  ['narrow', n, narrowRecord],
  ['wide', Math.round(n / 10), (i: number) => wideRecord(i)],
] as const) {
  const records = Array.from({ length: count }, (_, i) => JSON.parse(JSON.stringify(make(i))) as Record<string, unknown>)
  const schema = inferSchema(records.slice(0, 1000))
  const coerce = compileCoercer(schema, { table: 'proto' })
  const rows = records.map((r) => coerce(r).row)
  const { table } = compileArrowBuilder(schema)(rows)
  const base = write(table, (b) => b)
  const paths = leafPaths(base)
  const topLevel = (p: string) => p.split('.')[0]!
  const variants: [string, (b: WriterPropertiesBuilder) => WriterPropertiesBuilder][] = [
    ['current (dictionary on every column)', (b) => b],
    ['dictionary off', (b) => b.setDictionaryEnabled(false)],
    [
      'dictionary where sampled distinct < 50%',
      (b) => paths.reduce((acc, p) => acc.setColumnDictionaryEnabled(p, lowCardinality(rows, topLevel(p))), b),
    ],
  ]
  for (const [label, configure] of variants) {
    const times: number[] = []
    let size = 0
    for (let k = 0; k < 3; k++) {
      const t0 = performance.now()
      size = write(table, configure).length
      times.push(performance.now() - t0)
    }
    console.log(JSON.stringify({ dataset: name, records: count, variant: label, parquetBytes: size, writeMs: round(median(times)) }))
  }
}
