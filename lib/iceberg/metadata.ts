/**
 * Table metadata JSON (https://iceberg.apache.org/spec/#table-metadata-fields): parse v1/v2/v3
 * losslessly, validate like Iceberg-Java's TableMetadataParser, normalise v1's singular
 * `schema`/`partition-spec` into lists, and serialise back (v1 tables stay v1-valid).
 */
import { randomUUID } from 'node:crypto'
import { IcebergError } from '../errors.js'
import type { IcebergType, Schema } from '../schema/index.js'
import { describe, isObject, parseJson, stringifyJson } from './json.js'
import { fail, normaliseMetadata } from './metadata-parse.js'
import type { PartitionSpec, Snapshot, SortOrder, TableMetadata } from './types.js'

export { SUPPORTED_FORMAT_VERSION } from './metadata-parse.js'

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
  return normaliseMetadata(root)
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
  /** `format-version` here is Iceberg's reserved create-time property (as Iceberg Java reads it): it picks the version and is not stored. */
  properties?: Record<string, string>
  /** 2 (default) or 3 (row lineage: `next-row-id`; appends then assign row ids, append.ts). */
  formatVersion?: 2 | 3
  tableUuid?: string
  nowMs?: number
}

const maxFieldId = (t: IcebergType): number => {
  if (typeof t === 'string') return 0
  if (t.type === 'struct') return Math.max(0, ...t.fields.map((f) => Math.max(f.id, maxFieldId(f.type))))
  if (t.type === 'list') return Math.max(t['element-id'], maxFieldId(t.element))
  return Math.max(t['key-id'], t['value-id'], maxFieldId(t.key), maxFieldId(t.value))
}

/** A fresh v2 (or v3) table with no snapshots. Field ids in schema and spec are taken as given. */
export function newTableMetadata(opts: NewTableOptions): TableMetadata {
  const spec = opts.spec ?? { 'spec-id': 0, fields: [] }
  const sortOrder = opts.sortOrder ?? { 'order-id': 0, fields: [] }
  const { 'format-version': requested, ...properties } = opts.properties ?? {}
  if (requested !== undefined && requested !== '2' && requested !== '3') fail(`table ${opts.location}: format-version ${JSON.stringify(requested)} cannot be created (2 or 3)`)
  const formatVersion = opts.formatVersion ?? (requested === '3' ? 3 : 2)
  return {
    'format-version': formatVersion,
    ...(formatVersion >= 3 ? { 'next-row-id': 0n } : {}),
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
    properties,
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

/**
 * The metadata tail every new snapshot shares (append, replace, manifest rewrite): the snapshot
 * added and made current, the snapshot log, the `main` branch moved to it (its other ref fields
 * kept), last-updated-ms never going back, and last-sequence-number following a v2+ snapshot.
 */
export function withNewMainSnapshot(base: TableMetadata, snapshot: Snapshot): TableMetadata {
  const id = snapshot['snapshot-id']
  const now = snapshot['timestamp-ms']
  const md: TableMetadata = {
    ...base,
    'last-updated-ms': Math.max(now, base['last-updated-ms']),
    'current-snapshot-id': id,
    snapshots: [...base.snapshots, snapshot],
    'snapshot-log': [...base['snapshot-log'], { 'timestamp-ms': now, 'snapshot-id': id }],
    refs: { ...base.refs, main: { ...base.refs?.main, 'snapshot-id': id, type: 'branch' } },
  }
  if (snapshot['sequence-number'] !== undefined) md['last-sequence-number'] = snapshot['sequence-number']
  return md
}
