/**
 * Record value (and key) decoding, chosen per topic (./select.ts): `json`, `string`, `bytes`,
 * `json-schema-envelope` (Kafka Connect JsonConverter), `avro-confluent` (Confluent wire format
 * + registry), `avro-glue` (AWS Glue Schema Registry). The Avro and envelope decoders are loaded
 * with `await import()` the first time a topic needs them.
 *
 * Choosing a format: if the event source mapping's own schema-registry integration decodes values
 * (`EventRecordFormat: JSON` in its SchemaRegistryConfig), records arrive as JSON and the topic's
 * format is `json`: no registry settings here. Use `avro-confluent` / `avro-glue` when the mapping
 * delivers the raw framed bytes (the default); Floe then fetches and caches the writer schemas.
 *
 * ## The value shape (what the writer's coercion receives)
 * `value` is always a plain object: a record/struct maps field names to values; a format or
 * schema whose values are not objects is wrapped as `{ value: … }` (`string` → `{ value: text }`,
 * `bytes` → `{ value: Uint8Array }`, an Avro `"string"` schema → `{ value: text }`, with the
 * matching one-field schema). Leaves are:
 * - boolean, int, float, double → `boolean` / `number` (float and double may be NaN or ±Infinity)
 * - long → `bigint` (Avro, Connect int64); JSON integers beyond 2^53 → `bigint`, others `number`;
 *   JSON non-integers with more than 15 significant digits → lossless-json `LosslessNumber` (exact)
 * - string, enum, uuid → `string` (uuid in canonical 8-4-4-4-12 form)
 * - binary, fixed → `Uint8Array` (a plain copy, not a Buffer view)
 * - decimal(P, S) → exact decimal `string` with exactly S fractional digits ("-123.45")
 * - date → `"YYYY-MM-DD"`; time → `"HH:MM:SS.ffffff"`
 * - timestamp / timestamptz → ISO-8601 text with six fractional digits: `…T12:34:56.123456Z` for
 *   timestamptz (a UTC instant), no zone for timestamp (wall clock, Avro local-timestamp-*);
 *   timestamp_ns / timestamptz_ns the same with nine digits. Text rather than a bigint of micros
 *   because lib/writer/columnar/coerce.ts reads a bare number or bigint as epoch *millis*.
 * - list → array; map → plain object (string keys), or `Map` for non-string Connect map keys
 * - a non-null Avro union of several types → `{ tag, field0, field1, … }` (./avro-schema.ts)
 * - null → `null`
 * `schema` (Avro and envelope formats) is the Iceberg schema of `value` in lib/schema's shape,
 * with placeholder field ids (1…n depth-first): match fields by name, not by id.
 *
 * ## Failures
 * A value that cannot be decoded (invalid JSON or UTF-8, not an object, malformed frame, schema id
 * the registry does not have, bytes that do not match the schema) → `{ ok: false, reason }`:
 * the record is a dead letter. A null value (tombstone) is `{ ok: false, tombstone: true }` so the
 * caller can tell it apart. A registry that cannot be asked (network, timeout, 5xx, auth) throws
 * RegistryUnavailableError (retryable): the batch fails and the mapping retries it.
 */
import type { AwsClients } from '../clients.js'
import type { FloeConfig, ValueFormat } from '../config.js'
import { ConfigError, RecordError } from '../errors.js'
import { isTombstone, type KafkaRecord } from '../kafka/index.js'
import type { IcebergType, Schema } from '../schema/index.js'
import type { CompiledAvro } from './avro.js'
import type { EnvelopeResult } from './connect.js'
import { decodeUtf8, parseJsonObject, parseJsonValue } from './json.js'
import { configuredFormats, formatSelector } from './select.js'

export type DecodedValue =
  | { ok: true; value: Record<string, unknown>; schema?: Schema }
  | { ok: false; reason: string; tombstone?: true }

/** A decoded key: any value (keys are often bare strings or numbers), with its Iceberg type when the format has a schema. */
export type DecodedKey = { ok: true; value: unknown; type?: IcebergType } | { ok: false; reason: string }

export interface Decoders {
  /** Decode a record's value with its topic's format. Throws RegistryUnavailableError only. */
  decodeValue(record: KafkaRecord): Promise<DecodedValue>
  /** Decode a record's key with its topic's key format; raw bytes (type binary) when none is set. */
  decodeKey(record: KafkaRecord): Promise<DecodedKey>
  /** The format of a topic's values, and of its keys (undefined: not decoded). */
  valueFormat(topic: string): ValueFormat
  keyFormat(topic: string): ValueFormat | undefined
}

/** Default registry timeout when FLOE_SCHEMA_REGISTRY_URL is not set (Glue only). Same as the setting's default. */
const DEFAULT_TIMEOUT_MS = 5_000

type Generic = { ok: true; value: unknown; schema?: Schema; type?: IcebergType } | { ok: false; reason: string; tombstone?: true }

export function createDecoders(
  config: Pick<FloeConfig, 'routes' | 'valueFormat' | 'schemaRegistry'> & Partial<Pick<FloeConfig, 'registryTimeoutMs'>>,
  clients: Pick<AwsClients, 'glue' | 'secrets'>,
): Decoders {
  const select = formatSelector(config.routes, config.valueFormat)
  if (configuredFormats(config.routes, config.valueFormat).has('avro-confluent') && config.schemaRegistry === undefined)
    throw new ConfigError('FLOE_SCHEMA_REGISTRY_URL', 'not set, but FLOE_VALUE_FORMAT or FLOE_ROUTES.formats uses avro-confluent')
  const timeoutMs = config.registryTimeoutMs ?? config.schemaRegistry?.timeoutMs ?? DEFAULT_TIMEOUT_MS

  // Heavy decoders, created on first use.
  let confluent: Promise<import('./confluent.js').ConfluentRegistry> | undefined
  let glue: Promise<import('./glue.js').GlueRegistry> | undefined
  let envelope: Promise<(text: string) => EnvelopeResult> | undefined

  const confluentRegistry = () =>
    (confluent ??= import('./confluent.js').then(({ ConfluentRegistry, basicAuthFromSecret }) => {
      const reg = config.schemaRegistry!
      const secretArn = reg.secretArn
      return new ConfluentRegistry({
        url: reg.url,
        timeoutMs: reg.timeoutMs,
        authorization: secretArn ? () => basicAuthFromSecret(clients.secrets(), secretArn, reg.timeoutMs) : undefined,
      })
    }))
  const glueRegistry = () => (glue ??= import('./glue.js').then(({ GlueRegistry }) => new GlueRegistry(() => clients.glue(), timeoutMs)))
  const envelopeDecoder = () => (envelope ??= import('./connect.js').then(({ createEnvelopeDecoder }) => createEnvelopeDecoder()))

  const avro = async (bytes: Uint8Array, format: 'avro-confluent' | 'avro-glue'): Promise<Generic> => {
    let id: string
    let payload: Uint8Array
    let lookup
    if (format === 'avro-confluent') {
      const { parseConfluentFrame } = await import('./confluent.js')
      const frame = parseConfluentFrame(bytes)
      if (typeof frame === 'string') return { ok: false, reason: frame }
      ;({ payload } = frame)
      id = `schema id ${frame.schemaId}`
      lookup = await (await confluentRegistry()).schema(frame.schemaId)
    } else {
      const { parseGlueFrame } = await import('./glue.js')
      const frame = parseGlueFrame(bytes)
      if (typeof frame === 'string') return { ok: false, reason: frame }
      ;({ payload } = frame)
      id = `Glue schema version ${frame.schemaVersionId}`
      lookup = await (await glueRegistry()).schema(frame.schemaVersionId)
    }
    if (!lookup.found) return { ok: false, reason: lookup.reason }
    const compiled: CompiledAvro = lookup.compiled
    const { decodeAvro } = await import('./avro.js')
    try {
      return { ok: true, value: decodeAvro(compiled, payload), schema: compiled.schema, type: compiled.type }
    } catch (err) {
      if (err instanceof RecordError) return { ok: false, reason: `${id}: ${err.message}` }
      throw err
    }
  }

  /** Decode bytes with a format; `asObject` wraps non-object values as `{ value }` (values) or not (keys). */
  const decode = async (bytes: Uint8Array, format: ValueFormat, asObject: boolean): Promise<Generic> => {
    switch (format) {
      case 'json':
        return asObject ? parseJsonObject(bytes) : parseJsonValue(bytes)
      case 'string': {
        const text = decodeUtf8(bytes)
        return text.ok ? { ok: true, value: asObject ? { value: text.value } : text.value, type: 'string', schema: asObject ? wrapped('string') : undefined } : text
      }
      case 'bytes': {
        const copy = new Uint8Array(bytes)
        return { ok: true, value: asObject ? { value: copy } : copy, type: 'binary', schema: asObject ? wrapped('binary') : undefined }
      }
      case 'json-schema-envelope': {
        const text = decodeUtf8(bytes)
        if (!text.ok) return text
        const r = (await envelopeDecoder())(text.value as string)
        if (!r.ok) return r
        if (asObject) return { ok: true, value: r.value, schema: r.schema }
        // A key is returned bare: unwrap the one-field struct a non-struct schema was given.
        return r.wrapped ? { ok: true, value: r.value.value, type: r.schema.fields[0]!.type } : { ok: true, value: r.value, type: { type: 'struct', fields: r.schema.fields } }
      }
      case 'avro-confluent':
      case 'avro-glue': {
        const r = await avro(bytes, format)
        if (!r.ok || !asObject) return r
        const isObject = typeof r.type === 'object' && r.type.type === 'struct'
        return { ok: true, value: isObject ? r.value : { value: r.value }, schema: r.schema }
      }
    }
  }

  return {
    valueFormat: (topic) => select(topic, 'value')!,
    keyFormat: (topic) => select(topic, 'key'),

    async decodeValue(record) {
      if (record.error !== undefined) return { ok: false, reason: record.error }
      if (isTombstone(record.value)) return { ok: false, reason: 'value is null (tombstone)', tombstone: true }
      const format = select(record.topic, 'value')!
      const r = await decode(record.value, format, true)
      if (!r.ok) return { ...r, reason: `${format} value: ${r.reason}` }
      const out: DecodedValue = { ok: true, value: r.value as Record<string, unknown> }
      if (r.schema) out.schema = r.schema
      return out
    },

    async decodeKey(record) {
      if (record.key === null) return { ok: true, value: null }
      const format = select(record.topic, 'key')
      if (format === undefined) return { ok: true, value: new Uint8Array(record.key), type: 'binary' }
      const r = await decode(record.key, format, false)
      if (!r.ok) return { ok: false, reason: `${format} key: ${r.reason}` }
      const out: DecodedKey = { ok: true, value: r.value }
      if (r.type) out.type = r.type
      return out
    },
  }
}

function wrapped(type: IcebergType): Schema {
  return { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'value', required: true, type }] }
}

export { formatSelector } from './select.js'
export { needsLiterals, parseJsonLiterals, parseJsonObject, parseJsonObjectFast } from './json.js'
export type { WideObject } from './json-wide.js'
