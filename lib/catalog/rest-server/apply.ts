/**
 * The server side of a REST commit (spec: CommitTableRequest): check every requirement against
 * the table's current metadata, then apply the updates in order, as Iceberg Java's
 * TableMetadata.Builder does for the updates engines send on append, schema and property changes.
 * A failed requirement is a RequirementFailed (HTTP 409, the client rebases); an update Floe
 * cannot apply is a BadUpdate (HTTP 400).
 */
import { toBigInt, type PartitionSpec, type Snapshot, type SnapshotRef, type SortOrder, type TableMetadata } from '../../iceberg/index.js'
import type { Schema } from '../../schema/index.js'

export class RequirementFailed extends Error {}
export class BadUpdate extends Error {}

type Json = Record<string, unknown>
const id64 = (v: unknown, what: string): bigint => toBigInt(v, what)
const mainId = (md: TableMetadata): bigint | null => {
  const id = md.refs?.main?.['snapshot-id'] ?? md['current-snapshot-id']
  return id === undefined || id === null || id === -1n ? null : id
}

export function checkRequirements(md: TableMetadata | undefined, requirements: Json[]): void {
  for (const r of requirements) {
    const type = r.type as string
    if (type === 'assert-create') {
      if (md) throw new RequirementFailed('Requirement failed: table already exists')
      continue
    }
    if (!md) throw new RequirementFailed(`Requirement failed: ${type} on a table that does not exist`)
    const fail = (what: string, expected: unknown, actual: unknown) => {
      throw new RequirementFailed(`Requirement failed: ${what} changed: expected ${String(expected)} != ${String(actual)}`)
    }
    switch (type) {
      case 'assert-table-uuid':
        if (r.uuid !== md['table-uuid']) fail('UUID', r.uuid, md['table-uuid'])
        break
      case 'assert-ref-snapshot-id': {
        const ref = md.refs?.[r.ref as string]
        const actual = ref ? ref['snapshot-id'] : r.ref === 'main' ? mainId(md) : null
        const expected = r['snapshot-id'] === null || r['snapshot-id'] === undefined ? null : id64(r['snapshot-id'], 'snapshot-id')
        if (actual !== expected) fail(`branch ${String(r.ref)}`, expected, actual)
        break
      }
      case 'assert-current-schema-id':
        if (Number(r['current-schema-id']) !== md['current-schema-id']) fail('current schema', r['current-schema-id'], md['current-schema-id'])
        break
      case 'assert-last-assigned-field-id':
        if (Number(r['last-assigned-field-id']) !== md['last-column-id']) fail('last assigned field id', r['last-assigned-field-id'], md['last-column-id'])
        break
      case 'assert-last-assigned-partition-id':
        if (Number(r['last-assigned-partition-id']) !== md['last-partition-id']) fail('last assigned partition id', r['last-assigned-partition-id'], md['last-partition-id'])
        break
      case 'assert-default-spec-id':
        if (Number(r['default-spec-id']) !== md['default-spec-id']) fail('default spec id', r['default-spec-id'], md['default-spec-id'])
        break
      case 'assert-default-sort-order-id':
        if (Number(r['default-sort-order-id']) !== md['default-sort-order-id']) fail('default sort order id', r['default-sort-order-id'], md['default-sort-order-id'])
        break
      default:
        throw new BadUpdate(`unsupported requirement type '${type}'`)
    }
  }
}

export function applyUpdates(base: TableMetadata, updates: Json[], nowMs = Date.now()): TableMetadata {
  let md: TableMetadata = { ...base, 'last-updated-ms': nowMs }
  let lastSchema: number | undefined
  let lastSpec: number | undefined
  let lastOrder: number | undefined
  for (const u of updates) {
    const action = u.action as string
    switch (action) {
      case 'assign-uuid':
        if (u.uuid !== md['table-uuid']) throw new BadUpdate(`cannot change the table uuid ${md['table-uuid']} to ${String(u.uuid)}`)
        break
      case 'upgrade-format-version': {
        const v = Number(u['format-version'])
        if (v < md['format-version'] || v > 3) throw new BadUpdate(`cannot change format version ${md['format-version']} to ${v}`)
        if (v === 3 && md['format-version'] < 3) md = { ...md, 'next-row-id': md['next-row-id'] ?? 0n }
        md = { ...md, 'format-version': v as 1 | 2 | 3 }
        break
      }
      case 'add-schema': {
        const schema = u.schema as Schema
        const id = md.schemas.some((s) => s['schema-id'] === schema['schema-id']) ? Math.max(...md.schemas.map((s) => s['schema-id'])) + 1 : schema['schema-id']
        md = { ...md, schemas: [...md.schemas, { ...schema, 'schema-id': id }], 'last-column-id': Math.max(md['last-column-id'], Number(u['last-column-id'] ?? 0)) }
        lastSchema = id
        break
      }
      case 'set-current-schema':
        md = { ...md, 'current-schema-id': pick(Number(u['schema-id']), lastSchema, 'schema') }
        break
      case 'add-spec': {
        const spec = u.spec as PartitionSpec
        const id = spec['spec-id'] ?? Math.max(...md['partition-specs'].map((s) => s['spec-id'])) + 1
        md = { ...md, 'partition-specs': [...md['partition-specs'], { ...spec, 'spec-id': id }], 'last-partition-id': Math.max(md['last-partition-id'], ...spec.fields.map((f) => f['field-id'])) }
        lastSpec = id
        break
      }
      case 'set-default-spec':
        md = { ...md, 'default-spec-id': pick(Number(u['spec-id']), lastSpec, 'spec') }
        break
      case 'add-sort-order': {
        const order = u['sort-order'] as SortOrder
        md = { ...md, 'sort-orders': [...md['sort-orders'], order] }
        lastOrder = order['order-id']
        break
      }
      case 'set-default-sort-order':
        md = { ...md, 'default-sort-order-id': pick(Number(u['sort-order-id']), lastOrder, 'sort order') }
        break
      case 'add-snapshot':
        md = addSnapshot(md, u.snapshot as Json)
        break
      case 'set-snapshot-ref':
        md = setRef(md, u['ref-name'] as string, u)
        break
      case 'remove-snapshot-ref': {
        const { [u['ref-name'] as string]: _gone, ...refs } = md.refs ?? {}
        md = { ...md, refs, ...(u['ref-name'] === 'main' ? { 'current-snapshot-id': -1n } : {}) }
        break
      }
      case 'remove-snapshots': {
        const gone = new Set((u['snapshot-ids'] as unknown[]).map((x) => id64(x, 'snapshot-ids')))
        md = { ...md, snapshots: md.snapshots.filter((s) => !gone.has(s['snapshot-id'])), 'snapshot-log': md['snapshot-log'].filter((e) => !gone.has(e['snapshot-id'])) }
        break
      }
      case 'set-location':
        md = { ...md, location: String(u.location) }
        break
      case 'set-properties':
        md = { ...md, properties: { ...md.properties, ...(u.updates as Record<string, string>) } }
        break
      case 'remove-properties': {
        const properties = { ...md.properties }
        for (const k of u.removals as string[]) delete properties[k]
        md = { ...md, properties }
        break
      }
      case 'set-statistics':
        md = { ...md, statistics: [...((md.statistics as Json[] | undefined) ?? []).filter((s) => s['snapshot-id'] !== (u.statistics as Json)['snapshot-id']), u.statistics] }
        break
      default:
        throw new BadUpdate(`unsupported update action '${action}'`)
    }
  }
  return md
}

/** -1 means "the one added in this commit" (spec: set-current-schema, set-default-spec, set-default-sort-order). */
function pick(id: number, last: number | undefined, what: string): number {
  if (id !== -1) return id
  if (last === undefined) throw new BadUpdate(`cannot set the last added ${what}: none was added`)
  return last
}

function addSnapshot(md: TableMetadata, raw: Json): TableMetadata {
  const snapshot: Snapshot = {
    ...(raw as unknown as Snapshot),
    'snapshot-id': id64(raw['snapshot-id'], 'snapshot-id'),
    ...(raw['parent-snapshot-id'] !== undefined && raw['parent-snapshot-id'] !== null ? { 'parent-snapshot-id': id64(raw['parent-snapshot-id'], 'parent-snapshot-id') } : {}),
    ...(raw['sequence-number'] !== undefined ? { 'sequence-number': id64(raw['sequence-number'], 'sequence-number') } : {}),
    'timestamp-ms': Number(raw['timestamp-ms']),
  }
  if (md.snapshots.some((s) => s['snapshot-id'] === snapshot['snapshot-id'])) throw new BadUpdate(`snapshot ${snapshot['snapshot-id']} already exists`)
  const seq = snapshot['sequence-number'] ?? 0n
  const last = md['last-sequence-number'] ?? 0n
  if (md['format-version'] > 1 && seq <= last && snapshot['parent-snapshot-id'] !== undefined) {
    throw new RequirementFailed(`Cannot add snapshot with sequence number ${seq} older than last sequence number ${last}`)
  }
  let next: Partial<TableMetadata> = {}
  if (md['format-version'] >= 3) {
    const nextRowId = md['next-row-id'] ?? 0n
    const first = raw['first-row-id'] === undefined || raw['first-row-id'] === null ? nextRowId : id64(raw['first-row-id'], 'first-row-id')
    if (raw['added-rows'] === undefined || raw['added-rows'] === null) throw new BadUpdate('v3 snapshot without added-rows')
    const added = id64(raw['added-rows'], 'added-rows')
    if (first < nextRowId) throw new RequirementFailed(`Cannot add a snapshot, first-row-id ${first} is behind table next-row-id ${nextRowId}`)
    snapshot['first-row-id'] = first
    snapshot['added-rows'] = added
    next = { 'next-row-id': first + added }
  }
  return { ...md, ...next, snapshots: [...md.snapshots, snapshot], 'last-sequence-number': seq > last ? seq : last }
}

function setRef(md: TableMetadata, name: string, u: Json): TableMetadata {
  const snapshotId = id64(u['snapshot-id'], 'snapshot-id')
  const snapshot = md.snapshots.find((s) => s['snapshot-id'] === snapshotId)
  if (!snapshot) throw new BadUpdate(`cannot set ref ${name} to unknown snapshot ${snapshotId}`)
  const ref: SnapshotRef = { 'snapshot-id': snapshotId, type: (u.type as 'branch' | 'tag') ?? 'branch' }
  for (const k of ['max-ref-age-ms', 'max-snapshot-age-ms', 'min-snapshots-to-keep'] as const) if (u[k] !== undefined && u[k] !== null) ref[k] = u[k]
  const refs = { ...md.refs, [name]: ref }
  if (name !== 'main') return { ...md, refs }
  return { ...md, refs, 'current-snapshot-id': snapshotId, 'snapshot-log': [...md['snapshot-log'], { 'timestamp-ms': snapshot['timestamp-ms'], 'snapshot-id': snapshotId }] }
}
