/**
 * Confluent wire format and a Confluent-compatible schema registry client.
 *
 * Frame: magic byte 0, the schema id as a 4-byte big-endian int, then the Avro binary datum.
 * The writer schema is fetched with `GET /schemas/ids/{id}` (and its references with
 * `GET /subjects/{s}/versions/{v}`), compiled once and cached per id for the container's life.
 *
 * What goes wrong where:
 * - on 401/403 the credentials secret is read again once (rotation) and the request retried;
 * - registry unreachable, timed out (FLOE_SCHEMA_REGISTRY_TIMEOUT_MS), 5xx, 401/403 again, or a 404
 *   that is not the registry's own "not found" (a wrong URL) → RegistryUnavailableError
 *   (retryable: the batch fails, the mapping retries, nothing is dead-lettered for it);
 * - the registry says the id does not exist (404 with error_code 40403), or the schema is not
 *   Avro or does not compile, or the frame is malformed → a failed decode with the reason (the
 *   record is a dead letter).
 */
import { RegistryUnavailableError, SchemaError } from '../errors.js'
import type { CompiledAvro } from './avro.js'
import { SchemaCache, type SchemaLookup } from './cache.js'

export interface ConfluentFrame {
  schemaId: number
  payload: Uint8Array
}

/** Split a Confluent frame, or say why it is not one. */
export function parseConfluentFrame(bytes: Uint8Array): ConfluentFrame | string {
  if (bytes.byteLength < 5) return `Confluent frame needs at least 5 bytes (magic byte + schema id), got ${bytes.byteLength}`
  if (bytes[0] !== 0) return `Confluent frame magic byte is 0x${bytes[0]!.toString(16).padStart(2, '0')}, expected 0x00 (is the topic's format right?)`
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return { schemaId: view.getInt32(1, false), payload: bytes.subarray(5) }
}

/** Build a frame (tests and tools). */
export function confluentFrame(schemaId: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + payload.byteLength)
  new DataView(out.buffer).setInt32(1, schemaId, false)
  out.set(payload, 5)
  return out
}

export interface ConfluentRegistryOptions {
  url: string
  timeoutMs: number
  /** Value of the Authorization header, if any (resolved once, lazily). */
  authorization?: () => Promise<string | undefined>
  fetch?: typeof fetch
}

interface SchemaResponse {
  schema?: unknown
  schemaType?: unknown
  references?: { name?: unknown; subject?: unknown; version?: unknown }[]
}

const NOT_FOUND_CODES = new Set([40401, 40402, 40403])

export class ConfluentRegistry {
  private readonly base: string
  private readonly cache = new SchemaCache<number>()
  private authHeader: Promise<string | undefined> | undefined

  /** Basic auth from credentials in the URL (`https://user:pass@host`), used when no secret is configured. */
  private readonly urlAuth: string | undefined

  constructor(private readonly opts: ConfluentRegistryOptions) {
    // fetch refuses URLs with credentials, and messages must not carry them: move them to a header.
    const url = new URL(opts.url)
    this.urlAuth = url.username ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}` : undefined
    url.username = ''
    url.password = ''
    this.base = url.toString().replace(/\/+$/, '')
  }

  /** The compiled writer schema of an id (cached), or why there is none. Throws RegistryUnavailableError. */
  schema(id: number): Promise<SchemaLookup> {
    return this.cache.get(id, () => this.load(id))
  }

  private async load(id: number): Promise<SchemaLookup> {
    const res = await this.get(`/schemas/ids/${id}`)
    if (res === undefined) return { found: false, reason: `schema id ${id} not found in registry ${this.base}` }
    const schemaType = typeof res.schemaType === 'string' ? res.schemaType : 'AVRO'
    if (schemaType !== 'AVRO') return { found: false, reason: `schema id ${id} is ${schemaType}, but the topic's format is avro-confluent` }
    if (typeof res.schema !== 'string') throw new RegistryUnavailableError(`schema registry ${this.base}: /schemas/ids/${id} answered without a schema string`)
    const references = await this.references(res.references ?? [], new Set())
    const { compileAvro } = await import('./avro.js')
    try {
      return { found: true, compiled: compileAvro(res.schema, references) }
    } catch (err) {
      if (err instanceof SchemaError) return { found: false, reason: `schema id ${id}: ${err.message}` }
      throw err
    }
  }

  /** Schema texts of references, dependencies first. */
  private async references(refs: SchemaResponse['references'] & object, seen: Set<string>): Promise<string[]> {
    const out: string[] = []
    for (const ref of refs) {
      const key = `${String(ref.subject)}@${String(ref.version)}`
      if (seen.has(key)) continue
      seen.add(key)
      const path = `/subjects/${encodeURIComponent(String(ref.subject))}/versions/${encodeURIComponent(String(ref.version))}`
      const res = await this.get(path)
      if (res === undefined || typeof res.schema !== 'string')
        throw new RegistryUnavailableError(`schema registry ${this.base}: reference ${String(ref.name)} (${key}) not found`)
      out.push(...(await this.references(res.references ?? [], seen)), res.schema)
    }
    return out
  }

  /** GET a registry path; undefined when the registry says it does not exist. */
  private async get(path: string): Promise<SchemaResponse | undefined> {
    const url = `${this.base}${path}`
    let { status, text, auth } = await this.fetchOnce(url)
    if ((status === 401 || status === 403) && this.opts.authorization) {
      // Credentials may have been rotated: re-read the secret once, then give up retryably (and
      // read it again on the retried batch).
      ;({ status, text } = await this.fetchOnce(url, auth))
      if (status === 401 || status === 403) {
        this.authHeader = undefined
        throw new RegistryUnavailableError(`schema registry GET ${url} answered ${status} even after re-reading the credentials secret: ${text.slice(0, 200)}`)
      }
    }
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      body = undefined
    }
    if (status === 404) {
      const code = (body as { error_code?: unknown } | undefined)?.error_code
      if (typeof code === 'number' && NOT_FOUND_CODES.has(code)) return undefined
      throw new RegistryUnavailableError(`schema registry GET ${url} answered 404 without a registry error code (is FLOE_SCHEMA_REGISTRY_URL right?): ${text.slice(0, 200)}`)
    }
    if (status < 200 || status >= 300) throw new RegistryUnavailableError(`schema registry GET ${url} answered ${status}: ${text.slice(0, 200)}`)
    if (typeof body !== 'object' || body === null) throw new RegistryUnavailableError(`schema registry GET ${url} answered ${status} with a body that is not a JSON object: ${text.slice(0, 200)}`)
    return body as SchemaResponse
  }

  /**
   * One request. `rejected`: the credentials a 401/403 answered — read the secret again unless a
   * concurrent request already did (so many failing requests re-read it once, not once each).
   */
  private async fetchOnce(url: string, rejected?: Promise<string | undefined>): Promise<{ status: number; text: string; auth: Promise<string | undefined> }> {
    const headers: Record<string, string> = { accept: 'application/vnd.schemaregistry.v1+json, application/json' }
    if (rejected !== undefined && this.authHeader === rejected) this.authHeader = undefined
    const pending = (this.authHeader ??= this.resolveAuth())
    const authorization = (await pending) ?? this.urlAuth
    if (authorization) headers.authorization = authorization
    const doFetch = this.opts.fetch ?? fetch
    try {
      const res = await doFetch(url, { headers, signal: AbortSignal.timeout(this.opts.timeoutMs) })
      return { status: res.status, text: await res.text(), auth: pending }
    } catch (err) {
      const why = (err as Error).name === 'TimeoutError' ? `timed out after ${this.opts.timeoutMs} ms` : (err as Error).message
      throw new RegistryUnavailableError(`schema registry GET ${url} failed: ${why}`, { cause: err })
    }
  }

  private async resolveAuth(): Promise<string | undefined> {
    try {
      return await this.opts.authorization?.()
    } catch (err) {
      this.authHeader = undefined // ask again on the retried batch
      throw err
    }
  }
}

/** Basic auth header from a Secrets Manager secret (credentials in FLOE_SCHEMA_REGISTRY_URL are used when there is no secret, and never shown) `{"username","password"}`. */
export async function basicAuthFromSecret(secrets: import('@aws-sdk/client-secrets-manager').SecretsManagerClient, secretArn: string, timeoutMs: number): Promise<string> {
  const { GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager')
  let text: string | undefined
  try {
    const out = await secrets.send(new GetSecretValueCommand({ SecretId: secretArn }), { abortSignal: AbortSignal.timeout(timeoutMs) })
    text = out.SecretString ?? (out.SecretBinary ? Buffer.from(out.SecretBinary).toString('utf8') : undefined)
  } catch (err) {
    throw new RegistryUnavailableError(`schema registry credentials: GetSecretValue ${secretArn} failed: ${(err as Error).name}: ${(err as Error).message}`, { cause: err })
  }
  let parsed: { username?: unknown; password?: unknown } | undefined
  try {
    parsed = JSON.parse(text ?? '') as typeof parsed
  } catch {
    parsed = undefined
  }
  if (typeof parsed?.username !== 'string' || typeof parsed.password !== 'string')
    throw new RegistryUnavailableError(`schema registry credentials: secret ${secretArn} must be JSON {"username": "…", "password": "…"}`)
  return `Basic ${Buffer.from(`${parsed.username}:${parsed.password}`).toString('base64')}`
}

export type { CompiledAvro }
