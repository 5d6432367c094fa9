/**
 * AWS Glue Schema Registry wire format and schema lookup.
 *
 * Frame (the Glue serde's `AWSSchemaRegistryConstants`): header version byte 3, compression byte
 * (0 none, 5 zlib), the 16-byte schema version UUID, then the (possibly zlib-deflated) Avro
 * datum. The schema comes from `GetSchemaVersion({ SchemaVersionId })`, compiled once and cached
 * per version id for the container's life.
 *
 * EntityNotFoundException (or an id Glue rejects as invalid input) → the record is a dead letter;
 * anything else from Glue (throttling, access denied, timeout, 5xx) → RegistryUnavailableError.
 */
import { deflateSync, inflateSync } from 'node:zlib'
import type { GlueClient } from '@aws-sdk/client-glue'
import { RegistryUnavailableError, SchemaError } from '../errors.js'
import { SchemaCache, type SchemaLookup } from './cache.js'
import { uuidText } from './shape.js'

export const GLUE_HEADER_VERSION = 3
export const GLUE_COMPRESSION_NONE = 0
export const GLUE_COMPRESSION_ZLIB = 5
/**
 * Largest inflated payload accepted: Kafka's default max message size is 1 MB and an MSK event
 * is at most 6 MB; 64 MB leaves room for highly compressible records while stopping a
 * compression bomb from taking the function's memory.
 */
export const GLUE_MAX_INFLATED_BYTES = 64 * 1024 * 1024

export interface GlueFrame {
  schemaVersionId: string
  payload: Uint8Array
}

/** Split (and inflate) a Glue frame, or say why it is not one. */
export function parseGlueFrame(bytes: Uint8Array): GlueFrame | string {
  if (bytes.byteLength < 18) return `Glue schema registry frame needs at least 18 bytes (version, compression, 16-byte schema version id), got ${bytes.byteLength}`
  if (bytes[0] !== GLUE_HEADER_VERSION) return `Glue schema registry header version byte is ${bytes[0]}, expected ${GLUE_HEADER_VERSION} (is the topic's format right?)`
  const compression = bytes[1]
  const schemaVersionId = uuidText(bytes.subarray(2, 18))
  const body = bytes.subarray(18)
  if (compression === GLUE_COMPRESSION_NONE) return { schemaVersionId, payload: body }
  if (compression === GLUE_COMPRESSION_ZLIB) {
    try {
      const inflated = inflateSync(body, { maxOutputLength: GLUE_MAX_INFLATED_BYTES })
      return { schemaVersionId, payload: new Uint8Array(inflated.buffer, inflated.byteOffset, inflated.byteLength) }
    } catch (err) {
      return `Glue schema registry payload (schema version ${schemaVersionId}) does not inflate: ${(err as Error).message}`
    }
  }
  return `Glue schema registry compression byte is ${compression}, expected ${GLUE_COMPRESSION_NONE} (none) or ${GLUE_COMPRESSION_ZLIB} (zlib)`
}

/** Build a frame (tests and tools). */
export function glueFrame(schemaVersionId: string, payload: Uint8Array, compression: 'none' | 'zlib' = 'none'): Uint8Array {
  const id = Buffer.from(schemaVersionId.replace(/-/g, ''), 'hex')
  if (id.length !== 16) throw new RangeError(`schema version id ${schemaVersionId} is not a UUID`)
  const body = compression === 'zlib' ? deflateSync(payload) : payload
  return Uint8Array.from([GLUE_HEADER_VERSION, compression === 'zlib' ? GLUE_COMPRESSION_ZLIB : GLUE_COMPRESSION_NONE, ...id, ...body])
}

/**
 * Run a request with an abort signal, and give up after `ms` even if the request ignores the
 * signal (the SDK's retries with backoff can otherwise outlast the registry timeout).
 */
async function withTimeout<T>(run: (signal: AbortSignal) => Promise<T>, ms: number): Promise<T> {
  const controller = new AbortController()
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new Error(`timed out after ${ms} ms`)
      err.name = 'TimeoutError'
      controller.abort(err)
      reject(err)
    }, ms)
  })
  try {
    return await Promise.race([run(controller.signal), timeout])
  } finally {
    clearTimeout(timer)
  }
}

const NOT_FOUND = new Set(['EntityNotFoundException', 'InvalidInputException'])

export class GlueRegistry {
  private readonly cache = new SchemaCache<string>()

  constructor(private readonly glue: () => GlueClient, private readonly timeoutMs: number) {}

  /** The compiled schema of a schema version id (cached), or why there is none. Throws RegistryUnavailableError. */
  schema(schemaVersionId: string): Promise<SchemaLookup> {
    return this.cache.get(schemaVersionId, () => this.load(schemaVersionId))
  }

  private async load(schemaVersionId: string): Promise<SchemaLookup> {
    const { GetSchemaVersionCommand } = await import('@aws-sdk/client-glue')
    let out: { SchemaDefinition?: string; DataFormat?: string }
    try {
      out = await withTimeout((abortSignal) => this.glue().send(new GetSchemaVersionCommand({ SchemaVersionId: schemaVersionId }), { abortSignal }), this.timeoutMs)
    } catch (err) {
      const name = (err as Error).name
      if (NOT_FOUND.has(name)) return { found: false, reason: `Glue schema version ${schemaVersionId} not found (${name}: ${(err as Error).message})` }
      const why = name === 'TimeoutError' || name === 'AbortError' ? `timed out after ${this.timeoutMs} ms` : `${name}: ${(err as Error).message}`
      throw new RegistryUnavailableError(`Glue GetSchemaVersion ${schemaVersionId} failed: ${why}`, { cause: err })
    }
    if (out.DataFormat !== undefined && out.DataFormat !== 'AVRO')
      return { found: false, reason: `Glue schema version ${schemaVersionId} is ${out.DataFormat}, but the topic's format is avro-glue` }
    if (typeof out.SchemaDefinition !== 'string') throw new RegistryUnavailableError(`Glue GetSchemaVersion ${schemaVersionId} answered without a SchemaDefinition`)
    const { compileAvro } = await import('./avro.js')
    try {
      return { found: true, compiled: compileAvro(out.SchemaDefinition) }
    } catch (err) {
      if (err instanceof SchemaError) return { found: false, reason: `Glue schema version ${schemaVersionId}: ${err.message}` }
      throw err
    }
  }
}
