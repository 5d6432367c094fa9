/**
 * The codec's output meets the writer: Confluent-framed Avro and Connect envelopes, decoded,
 * coerced to their own schema and encoded by lib/writer/columnar, read back by DuckDB's
 * read_parquet with exact decimals and timestamps in micros with the right zone semantics.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { confluentFrame } from '../../lib/codec/confluent.js'
import { createDecoders, type DecodedValue } from '../../lib/codec/index.js'
import { loadConfig } from '../../lib/config.js'
import type { Schema } from '../../lib/schema/types.js'
import { coerceRecord, encodeParquet } from '../../lib/writer/columnar/index.js'
import { startTestRegistry, type TestRegistry } from '../helpers/registry.js'
import { avroEncode, everythingDatum, everythingSchema } from './avro-fixtures.js'

let registry: TestRegistry
let dir: string
let db: DuckDBInstance
let duck: DuckDBConnection
beforeAll(async () => {
  registry = await startTestRegistry()
  dir = mkdtempSync(join(tmpdir(), 'floe-codec-parquet-'))
  db = await DuckDBInstance.create()
  duck = await db.connect()
})
afterAll(async () => {
  duck?.closeSync()
  db?.closeSync()
  rmSync(dir, { recursive: true, force: true })
  await registry.close()
})

const query = async (sql: string) => (await duck.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[]

async function toParquet(decoded: DecodedValue, name: string): Promise<string> {
  if (!decoded.ok || !decoded.schema) throw new Error(`decode failed: ${JSON.stringify(decoded)}`)
  const schema: Schema = decoded.schema
  const { row } = coerceRecord(schema, decoded.value)
  const { bytes } = await encodeParquet(schema, [row])
  const path = join(dir, `${name}.parquet`)
  writeFileSync(path, bytes)
  return path
}

describe('decoded values through the Parquet writer', () => {
  it('Avro logical types land in Parquet exactly (DuckDB read_parquet)', async () => {
    const id = await registry.register('rt-value', everythingSchema)
    const config = loadConfig({}, { FLOE_WAREHOUSE: 'file:///tmp/x', FLOE_VALUE_FORMAT: 'avro-confluent', FLOE_SCHEMA_REGISTRY_URL: registry.url })
    const d = createDecoders(config, { glue: () => { throw new Error('no') }, secrets: () => { throw new Error('no') } })
    const decoded = await d.decodeValue({ topic: 't', partition: 0, offset: 0n, timestamp: 0, key: null, value: confluentFrame(id, avroEncode(everythingSchema, everythingDatum)), headers: [] })
    const path = await toParquet(decoded, 'avro')
    const [row] = await query(`
      select l::varchar as l, dec::varchar as dec, decFixed::varchar as decFixed, "day"::varchar as "day",
             tMillis::varchar as tMillis, tMicros::varchar as tMicros,
             epoch_us(tsMillis)::varchar as tsMillis, epoch_us(tsMicros)::varchar as tsMicros,
             typeof(tsMicros) as tsType, typeof(localMicros) as localType,
             localMillis::varchar as localMillis, localMicros::varchar as localMicros,
             id::varchar as id, idFixed::varchar as idFixed, typeof(id) as idType, color, choice.tag as tag, choice.field1 as field1,
             to_json(attrs)::varchar as attrs, "inner".x as x
      from read_parquet('${path}')`)
    expect(row).toEqual({
      l: '9007199254740993',
      dec: '-1.23',
      decFixed: '1000000000.000000001',
      day: '2024-05-01',
      tMillis: '12:34:56.789',
      tMicros: '12:34:56.789012',
      tsMillis: '1714567890123000',
      tsMicros: '1714567890123456',
      tsType: 'TIMESTAMP WITH TIME ZONE',
      localType: 'TIMESTAMP',
      localMillis: '2024-05-01 12:51:30.123',
      localMicros: '1969-12-31 23:59:59.999999',
      // Parquet's UUID logical type (uuid-footer.ts): DuckDB reads a UUID
      id: '123e4567-e89b-12d3-a456-426614174000',
      idFixed: '123e4567-e89b-12d3-a456-426614174000',
      idType: 'UUID',
      color: 'GREEN',
      tag: 1,
      field1: 'two',
      attrs: '{"k1":-9223372036854775808,"k2":null}',
      x: 1,
    })
  })

  it('a Connect envelope lands in Parquet with its decimal, date and timestamp exact', async () => {
    const config = loadConfig({}, { FLOE_WAREHOUSE: 'file:///tmp/x', FLOE_VALUE_FORMAT: 'json-schema-envelope' })
    const d = createDecoders(config, { glue: () => { throw new Error('no') }, secrets: () => { throw new Error('no') } })
    const text = JSON.stringify({
      schema: {
        type: 'struct',
        fields: [
          { field: 'id', type: 'int64' },
          { field: 'amount', type: 'bytes', name: 'org.apache.kafka.connect.data.Decimal', parameters: { scale: '3', 'connect.decimal.precision': '20' } },
          { field: 'day', type: 'int32', name: 'org.apache.kafka.connect.data.Date' },
          { field: 'at', type: 'int64', name: 'org.apache.kafka.connect.data.Timestamp' },
        ],
      },
      payload: { id: 1, amount: Buffer.from('ffffffffffffff85', 'hex').toString('base64'), day: -1, at: -1 },
    })
    const path = await toParquet(await d.decodeValue({ topic: 't', partition: 0, offset: 0n, timestamp: 0, key: null, value: new TextEncoder().encode(text), headers: [] }), 'envelope')
    expect(await query(`select amount::varchar as amount, "day"::varchar as "day", epoch_us("at")::varchar as "at" from read_parquet('${path}')`)).toEqual([
      { amount: '-0.123', day: '1969-12-31', at: '-1000' },
    ])
  })
})
