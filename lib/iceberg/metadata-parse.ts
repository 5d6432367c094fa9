/**
 * Validation and normalisation of parsed table metadata JSON, with Iceberg-Java's messages
 * (TableMetadataParser): required fields per format version, v1's singular `schema` and
 * `partition-spec` turned into lists, 64-bit ids coerced to bigint. Unknown keys are untouched.
 */
import { IcebergError } from '../errors.js'
import type { Schema } from '../schema/index.js'
import { describe, isObject, toBigInt } from './json.js'
import type { PartitionSpec, TableMetadata } from './types.js'

export const SUPPORTED_FORMAT_VERSION = 3

type Json = Record<string, unknown>

export function fail(message: string): never {
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

/** Validates `node` (a parsed metadata object) in place and returns it typed. Throws IcebergError. */
export function normaliseMetadata(node: Json): TableMetadata {
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
