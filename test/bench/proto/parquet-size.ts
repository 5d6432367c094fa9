/**
 * Why Floe's Parquet is larger than DuckDB's for the same records (not a test; evidence for a
 * proposal to lib/writer/columnar/parquet.ts): per-column compressed bytes and encodings of one
 * file from encodeParquet vs DuckDB's COPY, 100k narrow records in ONE file each.
 * `npx tsx test/bench/proto/parquet-size.ts [records]`
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { parquetMetadata } from 'hyparquet'
import { inferSchema } from '../../../lib/schema/infer.js'
import { compileCoercer, encodeParquet } from '../../../lib/writer/columnar/index.js'
import { narrowRecord } from '../data.js'

const n = Number(process.argv[2] ?? 100_000)
const records = Array.from({ length: n }, (_, i) => JSON.parse(JSON.stringify(narrowRecord(i))) as Record<string, unknown>)
const schema = inferSchema(records.slice(0, 1000))
const coerce = compileCoercer(schema, { table: 'proto' })
const floe = (await encodeParquet(schema, records.map((r) => coerce(r).row), { compression: 'zstd' })).bytes
const dir = mkdtempSync(join(tmpdir(), 'pq-size-'))
writeFileSync(join(dir, 'in.ndjson'), records.map((r) => JSON.stringify(r)).join('\n') + '\n')
const inst = await DuckDBInstance.create(':memory:')
const conn = await inst.connect()
await conn.run(`COPY (SELECT * FROM read_json('${join(dir, 'in.ndjson')}')) TO '${join(dir, 'out.parquet')}' (FORMAT parquet, COMPRESSION zstd)`)
const duck = readFileSync(join(dir, 'out.parquet'))
rmSync(dir, { recursive: true, force: true })

const columns = (bytes: Uint8Array) => {
  const md = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer)
  const out = new Map<string, { bytes: number; encodings: string }>()
  for (const rg of md.row_groups) {
    for (const c of rg.columns) {
      const m = c.meta_data!
      const key = m.path_in_schema.join('.')
      const e = out.get(key) ?? { bytes: 0, encodings: [...new Set(m.encodings)].join('+') }
      e.bytes += Number(m.total_compressed_size)
      out.set(key, e)
    }
  }
  return { rowGroups: md.row_groups.length, out }
}
const f = columns(floe)
const d = columns(duck)
console.log(`total bytes: floe ${floe.length} (${f.rowGroups} row groups), duckdb ${duck.length} (${d.rowGroups} row groups)`)
for (const [k, v] of f.out) {
  const dk = [...d.out.keys()].find((x) => x === k || x.replace(/\.list\.element$/, '') === k.replace(/\.list\.(item|element)$/, '') || x.endsWith(k.split('.').at(-1)!))
  const dv = dk ? d.out.get(dk) : undefined
  console.log(`${k.padEnd(28)} floe ${String(v.bytes).padStart(8)} ${v.encodings.padEnd(40)} duckdb ${String(dv?.bytes ?? '-').padStart(8)} ${dv?.encodings ?? ''}`)
}
