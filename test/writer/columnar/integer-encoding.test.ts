/**
 * FLOE_PARQUET_INTEGER_ENCODING=delta: top-level int, long, date, time and timestamp columns are
 * written DELTA_BINARY_PACKED, everything else as before, and two independent readers (hyparquet
 * in JS, parquet-wasm's arrow-rs reader) read back exactly the values the PLAIN file holds —
 * including deltas that overflow 64 bits (long min next to long max), which DELTA_BINARY_PACKED
 * stores wrapped. Real engines read such files in test/interop/floe-encodings.interop.ts.
 */
import * as arrow from 'apache-arrow'
import { parquetMetadata, parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import { readParquet } from 'parquet-wasm/node'
import { describe, expect, it } from 'vitest'
import type { Schema } from '../../../lib/schema/types.js'
import { compileArrowBuilder, compileCoercer, encodeParquet, integerColumns, parquetSettings } from '../../../lib/writer/columnar/index.js'
import { EncodePool, poolWriter } from '../../../lib/writer/workers/index.js'

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'i', required: false, type: 'int' },
    { id: 2, name: 'l', required: false, type: 'long' },
    { id: 3, name: 'd', required: false, type: 'date' },
    { id: 4, name: 'ts', required: false, type: 'timestamptz' },
    { id: 5, name: 'lts', required: false, type: 'timestamp' },
    { id: 6, name: 't', required: false, type: 'time' },
    { id: 7, name: 's', required: false, type: 'string' },
    { id: 8, name: 'x', required: false, type: 'double' },
    { id: 9, name: 'dec', required: false, type: 'decimal(10, 2)' },
    { id: 10, name: 'inner', required: false, type: { type: 'struct', fields: [{ id: 11, name: 'n', required: false, type: 'long' }] } },
  ],
}
const DELTA = ['i', 'l', 'd', 'ts', 'lts', 't']

const LONG_MIN = -(2n ** 63n)
const LONG_MAX = 2n ** 63n - 1n
/** Values a hostile producer can send next to each other: extremes whose deltas overflow, nulls, runs, a sorted stretch. */
function records(n: number): Record<string, unknown>[] {
  const longs = [0n, LONG_MAX, LONG_MIN, LONG_MAX, -1n, LONG_MIN, 1n]
  const ints = [0, 2_147_483_647, -2_147_483_648, 2_147_483_647, -1]
  return Array.from({ length: n }, (_, k) => ({
    i: k % 11 === 5 ? null : k < 40 ? ints[k % ints.length] : k * 3,
    l: k % 13 === 7 ? null : k < 60 ? longs[k % longs.length] : BigInt(k) * 1_000_003n - 9_007_199_254_740_993n,
    d: k % 17 === 3 ? null : k < 20 ? [-719_162, 2_932_896][k % 2] : 19_000 + (k >> 4),
    ts: k % 7 === 2 ? null : 1_714_567_890_123 + k * 37,
    lts: k < 10 ? -62_135_596_800_000 + k : 1_714_567_890_000 - k,
    t: k % 5 === 0 ? null : (k * 997) % 86_400_000,
    s: `s${k % 9}`,
    x: k / 8,
    dec: k % 3 === 0 ? null : `${k}.25`,
    inner: k % 4 === 0 ? null : { n: k % 2 === 0 ? LONG_MIN + BigInt(k) : LONG_MAX - BigInt(k) },
  }))
}

function encodings(bytes: Uint8Array): Map<string, string[]> {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
  return new Map(parquetMetadata(file).row_groups[0]!.columns.map((c) => [c.meta_data!.path_in_schema.join('.'), c.meta_data!.encodings]))
}

const hyparquetRows = async (bytes: Uint8Array) =>
  parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer, compressors })
const arrowRsRows = (bytes: Uint8Array) => arrow.tableFromIPC(readParquet(bytes).intoIPCStream()).toArray().map((r) => r.toJSON())

describe('delta-encoded integer columns (FLOE_PARQUET_INTEGER_ENCODING=delta)', () => {
  const coerce = compileCoercer(schema, { table: 'db.t', longsAsNumbers: true })
  const rows = records(3_000).map((r) => coerce(r).row)

  it('are the top-level int, long, date, time and timestamp columns only', () => {
    expect(integerColumns(schema, 'delta')).toEqual(DELTA)
    expect(integerColumns(schema, 'plain')).toEqual([])
    expect(integerColumns(schema, undefined)).toEqual([])
    const { table } = compileArrowBuilder(schema)(rows)
    expect(parquetSettings(table).delta).toEqual([])
  })

  it('write DELTA_BINARY_PACKED there and nowhere else, and both readers read back what the PLAIN file holds', async () => {
    const plain = await encodeParquet(schema, rows, { compression: 'zstd' })
    const delta = await encodeParquet(schema, rows, { compression: 'zstd', integerEncoding: 'delta' })
    const enc = encodings(delta.bytes)
    for (const [path, list] of enc) expect(list.includes('DELTA_BINARY_PACKED'), path).toBe(DELTA.includes(path))
    for (const list of encodings(plain.bytes).values()) expect(list).not.toContain('DELTA_BINARY_PACKED')
    expect(await hyparquetRows(delta.bytes)).toEqual(await hyparquetRows(plain.bytes))
    expect(arrowRsRows(delta.bytes)).toEqual(arrowRsRows(plain.bytes))
    // The extremes are there as written (not only equal between the two files).
    const back = (await hyparquetRows(delta.bytes)) as { l: bigint | null; i: number | null }[]
    expect(back.slice(0, 7).map((r) => r.l)).toEqual([0n, LONG_MAX, LONG_MIN, LONG_MAX, -1n, LONG_MIN, 1n])
    expect(back.slice(0, 5).map((r) => r.i)).toEqual([0, 2_147_483_647, -2_147_483_648, 2_147_483_647, -1])
  })

  it('change only the file and column sizes in the Iceberg metrics', async () => {
    const plain = await encodeParquet(schema, rows, { compression: 'zstd' })
    const delta = await encodeParquet(schema, rows, { compression: 'zstd', integerEncoding: 'delta' })
    const { columnSizes: plainSizes = new Map(), ...plainRest } = plain.metrics
    const { columnSizes: deltaSizes = new Map(), ...deltaRest } = delta.metrics
    expect(deltaRest).toEqual(plainRest)
    expect(delta.recordCount).toBe(plain.recordCount)
    expect([...deltaSizes.keys()]).toEqual([...plainSizes.keys()])
    // The sorted stretches (rows 60+ of `l`, the timestamps) shrink; the string column does not change.
    expect(deltaSizes.get(2)!).toBeLessThan(plainSizes.get(2)!)
    expect(deltaSizes.get(4)!).toBeLessThan(plainSizes.get(4)!)
    expect(deltaSizes.get(7)).toBe(plainSizes.get(7))
  })

  it('are written alike by an encode worker thread (FLOE_WRITER_WORKERS): the settings carry the columns across', async () => {
    const pool = new EncodePool(1)
    try {
      const here = await encodeParquet(schema, rows, { compression: 'zstd', integerEncoding: 'delta' })
      const there = await encodeParquet(schema, rows, { compression: 'zstd', integerEncoding: 'delta', writer: poolWriter(pool) })
      expect(Buffer.from(there.bytes).equals(Buffer.from(here.bytes))).toBe(true)
    } finally {
      await pool.close()
    }
  })
})
