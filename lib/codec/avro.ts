/**
 * Avro binary decoding with avsc, shared by the Confluent and Glue framings. Loaded with
 * `await import()` only when a topic uses an Avro format.
 *
 * avsc is set up so nothing is lost: longs decode to bigint (its default long type is a JS
 * number and throws or rounds past 2^53), and unions are always wrapped (`{ branch: value }`) so
 * the value converter knows which branch of a multi-type union was written.
 */
import avro from 'avsc'
import { RecordError, SchemaError } from '../errors.js'
import type { IcebergType, Schema } from '../schema/index.js'
import { avroToIcebergSchema, avroToIcebergType, resolveAvroSchema, type AvroNode } from './avro-schema.js'
import { boundedCollections } from './avro-guard.js'
import { convertAvroValue } from './avro-values.js'

/** avsc long type backed by bigint (the README's recipe): exact over the whole int64 range. */
// oxlint-disable-next-line no-underscore-dangle -- avsc's documented API for custom long types
export const bigintLong = avro.types.LongType.__with({
  fromBuffer: (buf: Buffer) => buf.readBigInt64LE(),
  toBuffer: (n: bigint | number) => {
    const buf = Buffer.alloc(8)
    buf.writeBigInt64LE(BigInt(n))
    return buf
  },
  fromJSON: (v: unknown) => BigInt(v as string | number),
  toJSON: (n: bigint) => (n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n.toString()),
  isValid: (n: unknown) => typeof n === 'bigint' && n >= -(2n ** 63n) && n < 2n ** 63n,
  compare: (a: bigint, b: bigint) => (a === b ? 0 : a < b ? -1 : 1),
})

const PRIMITIVE_NAMES = new Set(['null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string'])

/**
 * The schema as avsc should see it: primitives written as objects (`{"type": "long",
 * "logicalType": "timestamp-micros"}`) reduced to their bare name. avsc builds those with its
 * own long type, bypassing the bigint `long` of the registry, so timestamps would come out as
 * lossy numbers. Logical types are applied by ./avro-values.ts, not by avsc.
 */
export function avscSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(avscSchema)
  if (typeof schema !== 'object' || schema === null) return schema
  const o = schema as Record<string, unknown>
  if (typeof o.type === 'string' && PRIMITIVE_NAMES.has(o.type)) return o.type
  if (typeof o.type === 'object' && o.type !== null) return { ...o, type: avscSchema(o.type) }
  const out: Record<string, unknown> = { ...o }
  if (Array.isArray(o.fields)) out.fields = o.fields.map((f: Record<string, unknown>) => ({ ...f, type: avscSchema(f.type) }))
  if (o.items !== undefined) out.items = avscSchema(o.items)
  if (o.values !== undefined) out.values = avscSchema(o.values)
  return out
}

/** An avsc type with bigint longs and wrapped unions; `registry` carries named types across calls (references). */
export function avscType(schema: unknown, registry: Record<string, avro.Type> = {}): avro.Type {
  registry.long ??= bigintLong as unknown as avro.Type
  return avro.Type.forSchema(avscSchema(schema) as avro.Schema, { wrapUnions: true, registry, typeHook: boundedCollections as never })
}

/** A writer schema compiled once (per registry id) and reused for every record. */
export interface CompiledAvro {
  /** The schema text as the registry returned it. */
  text: string
  node: AvroNode
  /** Iceberg schema of the (wrapped, if not a record) value. */
  schema: Schema
  /** Iceberg type of the bare value (used for keys). */
  type: IcebergType
  avsc: avro.Type
}

/**
 * Parse and compile an Avro schema. `references` are schemas (text) that define named types it
 * uses (Confluent schema references), in dependency order. Throws SchemaError.
 */
export function compileAvro(text: string, references: string[] = []): CompiledAvro {
  const registry: Record<string, avro.Type> = {}
  const named = new Map<string, AvroNode>()
  try {
    for (const ref of references) {
      const parsed: unknown = JSON.parse(ref)
      resolveAvroSchema(parsed, named)
      avscType(parsed, registry)
    }
    const parsed: unknown = JSON.parse(text)
    const node = resolveAvroSchema(parsed, named)
    return { text, node, schema: avroToIcebergSchema(node), type: avroToIcebergType(node), avsc: avscType(parsed, registry) }
  } catch (err) {
    if (err instanceof SchemaError) throw err
    throw new SchemaError(`invalid Avro schema: ${(err as Error).message}`, { cause: err })
  }
}

/**
 * Decode one Avro binary datum written with `compiled`'s schema into the value shape of
 * ./index.ts. Throws RecordError when the bytes do not match the schema (truncated, trailing
 * bytes, bad union index or enum symbol…).
 */
export function decodeAvro(compiled: CompiledAvro, payload: Uint8Array): unknown {
  const buf = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength)
  let decoded: { value: unknown; offset: number }
  try {
    decoded = compiled.avsc.decode(buf, 0)
  } catch (err) {
    throw new RecordError(`Avro payload does not match its schema: ${(err as Error).message}`, { cause: err })
  }
  if (decoded.offset < 0) throw new RecordError(`Avro payload of ${payload.byteLength} bytes is truncated for its schema`)
  if (decoded.offset !== buf.length)
    throw new RecordError(`Avro payload has ${buf.length - decoded.offset} trailing bytes after the datum (${payload.byteLength} bytes, datum ends at ${decoded.offset}): wrong schema?`)
  try {
    return convertAvroValue(compiled.node, decoded.value)
  } catch (err) {
    if (err instanceof RecordError) throw err
    throw new RecordError(`Avro value cannot be converted: ${(err as Error).message}`, { cause: err })
  }
}
