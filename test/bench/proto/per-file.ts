/**
 * What one small file costs to encode (issue 20, "Per-file cost"): the memory bench's event fans
 * out to 1,200 files of a row or two, so a file's fixed cost, not its rows, sets that event's
 * CPU. Encodes a one-row, 200-column file (the memory bench's record) `--files` times through
 * encodeParquet, after a warm-up, and reports CPU milliseconds per file, best of `--runs`:
 *
 *   npx tsx test/bench/proto/per-file.ts [--files 600] [--runs 3] [--codec zstd]
 */
import { parseArgs } from 'node:util'
import { inferSchema } from '../../../lib/schema/index.js'
import { compileCoercer, encodeParquet } from '../../../lib/writer/columnar/index.js'
import { memoryRecord } from '../memory-data.js'

const { values } = parseArgs({ options: { files: { type: 'string', default: '600' }, runs: { type: 'string', default: '3' }, codec: { type: 'string', default: 'zstd' } } })
const files = Number(values.files)
const runs = Number(values.runs)

const records = Array.from({ length: files }, (_, i) => memoryRecord(i, 50, 24))
const schema = inferSchema(records)
const coerce = compileCoercer(schema, { table: 'bench.per_file' })
const rows = records.map((r) => coerce(r).row)

async function encodeAll(): Promise<number> {
  let bytes = 0
  for (const row of rows) bytes += (await encodeParquet(schema, [row], { compression: values.codec })).bytes.length
  return bytes
}

await encodeAll()
let best = Infinity
let bytes = 0
for (let r = 0; r < runs; r++) {
  const before = process.cpuUsage()
  bytes = await encodeAll()
  const used = process.cpuUsage(before)
  best = Math.min(best, (used.user + used.system) / 1000)
}
console.log(JSON.stringify({ files, columns: schema.fields.length, codec: values.codec, cpuMsPerFile: Math.round((best / files) * 100) / 100, bytesPerFile: Math.round(bytes / files) }))
