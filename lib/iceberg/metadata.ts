/**
 * Table metadata JSON (https://iceberg.apache.org/spec/#table-metadata-fields): parse v1/v2/v3
 * losslessly, validate like Iceberg-Java's TableMetadataParser, normalise v1's singular
 * `schema`/`partition-spec` into lists, and serialise back (v1 tables stay v1-valid).
 */
import { randomUUID } from 'node:crypto'
import { IcebergError } from '../errors.js'
import type { IcebergType, Schema } from '../schema/types.js'
import { describe, isObject, parseJson, stringifyJson, toBigInt } from './json.js'
import type { PartitionSpec, Snapshot, SortOrder, TableMetadata } from './types.js'

export const SUPPORTED_FORMAT_VERSION = 3

type Json = Record<string, unknown>

function fail(message: string): never {
  throw new IcebergError(message)
}

function getInt(node: Json, key: string): number {
  const v = node[key]
  if (v === undefined || v === null) fail(`Cannot parse missing int: ${key}`)
  if (typeof v !== 'number' || !Number.isInteger(v)) fail(`Cannot parse to an integer value: ${key}: ${describe(v)}`)
  return v
}

function getLong(node: Json, key: string): bigint {
  const v = node[key]
  if (v === undefined || v === null) fail(`Cannot parse missing long: ${key}`)
  try {
    return toBigInt(v, key)
  } catch {
    fail(`Cannot parse to a long value: ${key}: ${describe(v)}`)
  }
}

function getString(node: Json, key: string): string {
  const v = node[key]
  if (v === undefined || v === null) fail(`Cannot parse missing string: ${key}`)
  if (typeof v !== 'string') fail(`Cannot parse to a string value: ${key}: ${describe(v)}`)
  return v
}

function checkType(t: unknown): void {
  if (typeof t === 'string') return
  if (!isObject(t)) fail(`Cannot parse type from json: ${describe(t)}`)
  switch (t.type) {
    case 'struct':
      if (!Array.isArray(t.fields)) fail(`Cannot parse struct fields from non-array: ${describe(t.fields)}`)
      for (const f of t.fields) {
        if (!isObject(f)) fail(`Cannot parse struct field from non-object: ${describe(f)}`)
        getInt(f, 'id')
        getString(f, 'name')
        checkType(f.type)
      }
      return
    case 'list':
      checkType(t.element)
      return
    case 'map':
      checkType(t.key)
      checkType(t.value)
      return
    default:
      fail(`Cannot parse type from json: ${describe(t)}`)
  }
}

function parseSchema(node: unknown): Schema {
  if (!isObject(node)) fail(`Cannot parse schema from non-object: ${describe(node)}`)
  checkType(node)
  if (node['schema-id'] === undefined) node['schema-id'] = 0
  return node as unknown as Schema
}

const longFields = (o: Json, keys: string[], where: string): void => {
  for (const k of keys) if (o[k] !== undefined && o[k] !== null) o[k] = toBigInt(o[k], `${where}.${k}`)
}

/** Parses metadata JSON text. Throws IcebergError with the offending key and value. */
export function parseTableMetadata(text: string): TableMetadata {
  if (text.trim() === '') fail('Cannot parse table metadata: the file is empty')
  let root: unknown
  try {
    root = parseJson(text)
  } catch (err) {
    throw new IcebergError(`Cannot parse table metadata JSON: ${(err as Error).message}`, { cause: err })
  }
  if (!isObject(root)) fail(`Cannot parse metadata from a non-object: ${describe(root)}`)
  return normalise(root)
}

function normalise(node: Json): TableMetadata {
  const formatVersion = getInt(node, 'format-version')
  if (formatVersion > SUPPORTED_FORMAT_VERSION || formatVersion < 1)
    fail(`Cannot read unsupported version ${formatVersion}`)
  if (formatVersion > 1) getString(node, 'table-uuid')
  getString(node, 'location')
  if (formatVersion > 1) node['last-sequence-number'] = getLong(node, 'last-sequence-number')
  else if (node['last-sequence-number'] !== undefined) longFields(node, ['last-sequence-number'], 'metadata')
  getInt(node, 'last-column-id')

  // schemas
  if (node.schemas !== undefined && node.schemas !== null) {
    if (!Array.isArray(node.schemas)) fail(`Cannot parse schemas from non-array: ${describe(node.schemas)}`)
    if (formatVersion === 1 && (node['current-schema-id'] === undefined || node['current-schema-id'] === null)) {
      // v1 writers that emit the list without an id (PyIceberg and Go read these): the singular schema names it.
      if (!isObject(node.schema)) fail('no valid schema configuration found in table metadata: v1 schemas without current-schema-id or schema')
      node['current-schema-id'] = node.schema['schema-id'] ?? 0
    }
    const currentId = getInt(node, 'current-schema-id')
    node.schemas.forEach(parseSchema)
    if (!node.schemas.some((s: Schema) => s['schema-id'] === currentId))
      fail(`Cannot find schema with current-schema-id=${currentId} from schemas`)
    delete node.schema
  } else {
    if (formatVersion !== 1) fail(`schemas must exist in format v${formatVersion}`)
    if (node.schema === undefined) fail('Cannot parse missing field: schema')
    const schema = parseSchema(node.schema)
    node.schemas = [schema]
    node['current-schema-id'] = schema['schema-id']
    delete node.schema
  }

  // partition specs
  if (node['partition-specs'] !== undefined && node['partition-specs'] !== null) {
    if (!Array.isArray(node['partition-specs']))
      fail(`Cannot parse partition specs from non-array: ${describe(node['partition-specs'])}`)
    if (formatVersion === 1 && (node['default-spec-id'] === undefined || node['default-spec-id'] === null))
      node['default-spec-id'] = Math.max(0, ...node['partition-specs'].map((x: PartitionSpec) => Number(x?.['spec-id'] ?? 0)))
    getInt(node, 'default-spec-id')
    for (const s of node['partition-specs']) checkSpec(s)
    delete node['partition-spec']
  } else {
    if (formatVersion !== 1) fail(`partition-specs must exist in format v${formatVersion}`)
    const fields = node['partition-spec']
    if (!Array.isArray(fields)) fail(`Cannot parse partition spec fields from non-array: ${describe(fields)}`)
    let next = 1000
    for (const f of fields) if (isObject(f) && f['field-id'] === undefined) f['field-id'] = next++
    const spec = { 'spec-id': 0, fields }
    checkSpec(spec)
    node['partition-specs'] = [spec]
    node['default-spec-id'] = 0
    delete node['partition-spec']
  }
  const specs = node['partition-specs'] as PartitionSpec[]
  if (node['last-partition-id'] === undefined || node['last-partition-id'] === null) {
    if (formatVersion !== 1) fail(`last-partition-id must exist in format v${formatVersion}`)
    node['last-partition-id'] = Math.max(999, ...specs.flatMap((s) => s.fields.map((f) => f['field-id'])))
  } else getInt(node, 'last-partition-id')

  // sort orders
  if (node['sort-orders'] !== undefined && node['sort-orders'] !== null) {
    if (!Array.isArray(node['sort-orders'])) fail(`Cannot parse sort orders from non-array: ${describe(node['sort-orders'])}`)
    getInt(node, 'default-sort-order-id')
  } else {
    if (formatVersion !== 1) fail(`sort-orders must exist in format v${formatVersion}`)
    node['sort-orders'] = [{ 'order-id': 0, fields: [] }]
    node['default-sort-order-id'] = 0
  }

  if (node.properties === undefined || node.properties === null) node.properties = {}
  else if (!isObject(node.properties)) fail(`Cannot parse properties from non-object: ${describe(node.properties)}`)
  getLong(node, 'last-updated-ms')
  node['last-updated-ms'] = Number(node['last-updated-ms'])
  if (node['current-snapshot-id'] !== undefined && node['current-snapshot-id'] !== null)
    node['current-snapshot-id'] = getLong(node, 'current-snapshot-id')
  if (node['next-row-id'] !== undefined && node['next-row-id'] !== null) node['next-row-id'] = getLong(node, 'next-row-id')

  if (node.snapshots === undefined || node.snapshots === null) node.snapshots = []
  if (!Array.isArray(node.snapshots)) fail(`Cannot parse snapshots from non-array: ${describe(node.snapshots)}`)
  for (const s of node.snapshots) {
    if (!isObject(s)) fail(`Cannot parse snapshot from non-object: ${describe(s)}`)
    s['snapshot-id'] = getLong(s, 'snapshot-id')
    longFields(s, ['parent-snapshot-id', 'sequence-number', 'first-row-id', 'added-rows'], `snapshot ${s['snapshot-id']}`)
    s['timestamp-ms'] = Number(getLong(s, 'timestamp-ms'))
    if (s['manifest-list'] === undefined && !Array.isArray(s.manifests))
      fail(`Cannot parse snapshot ${s['snapshot-id']}: it has neither manifest-list nor manifests`)
    if (s.summary === undefined) s.summary = { operation: 'append' }
    else if (!isObject(s.summary) || typeof s.summary.operation !== 'string')
      fail(`Cannot parse snapshot ${s['snapshot-id']} summary without operation: ${describe(s.summary)}`)
  }
  node['snapshot-log'] = arrayOf(node, 'snapshot-log').map((e) => {
    if (!isObject(e)) fail(`Cannot parse snapshot-log entry: ${describe(e)}`)
    return { ...e, 'timestamp-ms': Number(getLong(e, 'timestamp-ms')), 'snapshot-id': getLong(e, 'snapshot-id') }
  })
  node['metadata-log'] = arrayOf(node, 'metadata-log').map((e) => {
    if (!isObject(e)) fail(`Cannot parse metadata-log entry: ${describe(e)}`)
    getString(e, 'metadata-file')
    return { ...e, 'timestamp-ms': Number(getLong(e, 'timestamp-ms')) }
  })
  for (const key of ['statistics', 'partition-statistics']) {
    for (const e of arrayOf(node, key)) if (isObject(e)) longFields(e, ['snapshot-id'], key)
  }

  // refs: absent in old metadata; then `main` follows current-snapshot-id (as Java does).
  if (node.refs === undefined || node.refs === null) {
    node.refs = {}
    const current = node['current-snapshot-id'] as bigint | undefined
    if (current !== undefined && current !== -1n) (node.refs as Json).main = { 'snapshot-id': current, type: 'branch' }
  } else if (!isObject(node.refs)) fail(`Cannot parse refs from non-object: ${describe(node.refs)}`)
  for (const [name, ref] of Object.entries(node.refs as Json)) {
    if (!isObject(ref)) fail(`Cannot parse ref ${name}: ${describe(ref)}`)
    ref['snapshot-id'] = getLong(ref, 'snapshot-id')
    if (ref.type !== 'branch' && ref.type !== 'tag') fail(`Cannot parse ref ${name}: invalid type ${describe(ref.type)}`)
  }
  return node as unknown as TableMetadata
}

function arrayOf(node: Json, key: string): unknown[] {
  const v = node[key]
  if (v === undefined || v === null) return []
  if (!Array.isArray(v)) fail(`Cannot parse ${key} from non-array: ${describe(v)}`)
  return v
}

function checkSpec(spec: unknown): void {
  if (!isObject(spec)) fail(`Cannot parse partition spec from non-object: ${describe(spec)}`)
  getInt(spec, 'spec-id')
  if (!Array.isArray(spec.fields)) fail(`Cannot parse partition spec fields from non-array: ${describe(spec.fields)}`)
  for (const f of spec.fields) {
    if (!isObject(f)) fail(`Cannot parse partition field from non-object: ${describe(f)}`)
    getString(f, 'name')
    getString(f, 'transform')
    getInt(f, 'source-id')
    getInt(f, 'field-id')
  }
}

/** Metadata JSON text. v1 tables also get the singular `schema` and `partition-spec` older readers need. */
export function serializeTableMetadata(md: TableMetadata): string {
  let out: Record<string, unknown> = md
  if (md['format-version'] === 1) {
    out = {}
    for (const [k, v] of Object.entries(md)) {
      out[k] = v
      if (k === 'last-column-id') out.schema = currentSchema(md)
      if (k === 'partition-specs') out['partition-spec'] = defaultSpec(md).fields
    }
  }
  return stringifyJson(out, 2)
}

export interface NewTableOptions {
  location: string
  schema: Schema
  spec?: PartitionSpec
  sortOrder?: SortOrder
  properties?: Record<string, string>
  formatVersion?: 2
  tableUuid?: string
  nowMs?: number
}

const maxFieldId = (t: IcebergType): number => {
  if (typeof t === 'string') return 0
  if (t.type === 'struct') return Math.max(0, ...t.fields.map((f) => Math.max(f.id, maxFieldId(f.type))))
  if (t.type === 'list') return Math.max(t['element-id'], maxFieldId(t.element))
  return Math.max(t['key-id'], t['value-id'], maxFieldId(t.key), maxFieldId(t.value))
}

/** A fresh v2 table with no snapshots. Field ids in schema and spec are taken as given. */
export function newTableMetadata(opts: NewTableOptions): TableMetadata {
  const spec = opts.spec ?? { 'spec-id': 0, fields: [] }
  const sortOrder = opts.sortOrder ?? { 'order-id': 0, fields: [] }
  return {
    'format-version': opts.formatVersion ?? 2,
    'table-uuid': opts.tableUuid ?? randomUUID(),
    location: opts.location.replace(/\/+$/, ''),
    'last-sequence-number': 0n,
    'last-updated-ms': opts.nowMs ?? Date.now(),
    'last-column-id': maxFieldId(opts.schema),
    'current-schema-id': opts.schema['schema-id'],
    schemas: [opts.schema],
    'default-spec-id': spec['spec-id'],
    'partition-specs': [spec],
    'last-partition-id': Math.max(999, ...spec.fields.map((f) => f['field-id'])),
    'default-sort-order-id': sortOrder['order-id'],
    'sort-orders': [sortOrder],
    properties: { ...opts.properties },
    // -1, not null: what Iceberg-Java writes, and what older Java readers (getLong) require.
    'current-snapshot-id': -1n,
    refs: {},
    snapshots: [],
    statistics: [],
    'partition-statistics': [],
    'snapshot-log': [],
    'metadata-log': [],
  }
}

export function schemaById(md: TableMetadata, id: number): Schema {
  const s = md.schemas.find((x) => x['schema-id'] === id)
  if (!s) fail(`table ${md.location}: no schema with id ${id}`)
  return s
}

export const currentSchema = (md: TableMetadata): Schema => schemaById(md, md['current-schema-id'])

export function specById(md: TableMetadata, id: number): PartitionSpec {
  const s = md['partition-specs'].find((x) => x['spec-id'] === id)
  if (!s) fail(`table ${md.location}: no partition spec with id ${id}`)
  return s
}

export const defaultSpec = (md: TableMetadata): PartitionSpec => specById(md, md['default-spec-id'])

export function snapshotById(md: TableMetadata, id: bigint): Snapshot {
  const s = md.snapshots.find((x) => x['snapshot-id'] === id)
  if (!s) fail(`table ${md.location}: no snapshot with id ${id}`)
  return s
}

/** The snapshot `main` points at (or current-snapshot-id), or undefined for an empty table. */
export function currentSnapshot(md: TableMetadata): Snapshot | undefined {
  const id = md.refs?.main?.['snapshot-id'] ?? md['current-snapshot-id']
  if (id === undefined || id === null || id === -1n) return undefined
  return snapshotById(md, id)
}

/** Adds a schema (fresh id unless an identical one exists), makes it current, raises last-column-id. */
export function addSchema(md: TableMetadata, schema: Schema): TableMetadata {
  const sameFields = (a: Schema) => stringifyJson(a.fields) === stringifyJson(schema.fields)
  const existing = md.schemas.find(sameFields)
  const lastColumnId = Math.max(md['last-column-id'], maxFieldId(schema))
  if (existing) return { ...md, 'current-schema-id': existing['schema-id'], 'last-column-id': lastColumnId }
  const id = Math.max(-1, ...md.schemas.map((s) => s['schema-id'])) + 1
  return {
    ...md,
    schemas: [...md.schemas, { ...schema, 'schema-id': id }],
    'current-schema-id': id,
    'last-column-id': lastColumnId,
  }
}

/**
 * Records the metadata file being replaced in `metadata-log`, keeping at most
 * `write.metadata.previous-versions-max` (default 100) entries. `obsolete` lists the files
 * that fell off the log when `write.metadata.delete-after-commit.enabled` is true: the caller
 * deletes them only after the new metadata was swapped in.
 */
export function appendMetadataLog(
  md: TableMetadata,
  previous: { path: string; lastUpdatedMs: number },
): { metadata: TableMetadata; obsolete: string[] } {
  const raw = md.properties['write.metadata.previous-versions-max']
  const parsed = raw === undefined ? Number.NaN : Number.parseInt(raw, 10)
  const max = Number.isInteger(parsed) && parsed >= 0 ? parsed : 100
  const log = [...md['metadata-log'], { 'timestamp-ms': previous.lastUpdatedMs, 'metadata-file': previous.path }]
  const dropped = log.length > max ? log.slice(0, log.length - max) : []
  const kept = log.slice(dropped.length)
  const deleteAfter = (md.properties['write.metadata.delete-after-commit.enabled'] ?? 'false').toLowerCase() === 'true'
  return { metadata: { ...md, 'metadata-log': kept }, obsolete: deleteAfter ? dropped.map((e) => e['metadata-file']) : [] }
}
