/**
 * Floe's catalog interface commits whole metadata (base → new); the REST protocol commits a list
 * of updates guarded by requirements (spec: TableUpdate, TableRequirement). This turns the
 * difference between the two metadata objects into both. The requirements pin everything the
 * new metadata was derived from — the table's identity, the main branch's snapshot and, when the
 * schema, spec or sort order changes, the ids those changes built on — so a server applies the
 * updates only on the state Floe read, and answers 409 otherwise (the commit-conflict path).
 */
import type { Schema } from '../../schema/index.js'
import type { PartitionSpec, Snapshot, SnapshotRef, SortOrder, TableMetadata } from '../../iceberg/index.js'

export type TableRequirement =
  | { type: 'assert-table-uuid'; uuid: string }
  | { type: 'assert-ref-snapshot-id'; ref: string; 'snapshot-id': bigint | null }
  | { type: 'assert-current-schema-id'; 'current-schema-id': number }
  | { type: 'assert-last-assigned-field-id'; 'last-assigned-field-id': number }
  | { type: 'assert-last-assigned-partition-id'; 'last-assigned-partition-id': number }
  | { type: 'assert-default-spec-id'; 'default-spec-id': number }
  | { type: 'assert-default-sort-order-id'; 'default-sort-order-id': number }
  | { type: 'assert-create' }

export type TableUpdate =
  | { action: 'upgrade-format-version'; 'format-version': number }
  | { action: 'add-schema'; schema: Schema; 'last-column-id': number }
  | { action: 'set-current-schema'; 'schema-id': number }
  | { action: 'add-spec'; spec: PartitionSpec }
  | { action: 'set-default-spec'; 'spec-id': number }
  | { action: 'add-sort-order'; 'sort-order': SortOrder }
  | { action: 'set-default-sort-order'; 'sort-order-id': number }
  | { action: 'add-snapshot'; snapshot: Snapshot }
  | { action: 'remove-snapshots'; 'snapshot-ids': bigint[] }
  | ({ action: 'set-snapshot-ref'; 'ref-name': string } & SnapshotRef)
  | { action: 'remove-snapshot-ref'; 'ref-name': string }
  | { action: 'set-location'; location: string }
  | { action: 'set-properties'; updates: Record<string, string> }
  | { action: 'remove-properties'; removals: string[] }

export interface TableChange {
  requirements: TableRequirement[]
  updates: TableUpdate[]
}

const MAIN = 'main'
/** The main branch's snapshot; an empty table's is null (Iceberg Java writes current-snapshot-id -1 for it). */
const mainSnapshot = (md: TableMetadata): bigint | null => {
  const id = md.refs?.[MAIN]?.['snapshot-id'] ?? md['current-snapshot-id']
  return id === undefined || id === null || id === -1n ? null : id
}

/** The requirements and updates that turn `base` into `next` on a REST catalog. */
export function diffMetadata(base: TableMetadata, next: TableMetadata): TableChange {
  const updates: TableUpdate[] = []
  const requirements: TableRequirement[] = [{ type: 'assert-table-uuid', uuid: base['table-uuid'] }]
  if (next['format-version'] > base['format-version']) updates.push({ action: 'upgrade-format-version', 'format-version': next['format-version'] })

  const schemaIds = new Set(base.schemas.map((s) => s['schema-id']))
  const newSchemas = next.schemas.filter((s) => !schemaIds.has(s['schema-id']))
  for (const schema of newSchemas) updates.push({ action: 'add-schema', schema, 'last-column-id': next['last-column-id'] })
  if (next['current-schema-id'] !== base['current-schema-id']) updates.push({ action: 'set-current-schema', 'schema-id': next['current-schema-id'] })
  if (newSchemas.length > 0 || next['current-schema-id'] !== base['current-schema-id']) {
    requirements.push({ type: 'assert-current-schema-id', 'current-schema-id': base['current-schema-id'] })
    requirements.push({ type: 'assert-last-assigned-field-id', 'last-assigned-field-id': base['last-column-id'] })
  }

  const specIds = new Set(base['partition-specs'].map((s) => s['spec-id']))
  const newSpecs = next['partition-specs'].filter((s) => !specIds.has(s['spec-id']))
  for (const spec of newSpecs) updates.push({ action: 'add-spec', spec })
  if (next['default-spec-id'] !== base['default-spec-id']) updates.push({ action: 'set-default-spec', 'spec-id': next['default-spec-id'] })
  if (newSpecs.length > 0 || next['default-spec-id'] !== base['default-spec-id']) {
    requirements.push({ type: 'assert-default-spec-id', 'default-spec-id': base['default-spec-id'] })
    requirements.push({ type: 'assert-last-assigned-partition-id', 'last-assigned-partition-id': base['last-partition-id'] })
  }

  const orderIds = new Set(base['sort-orders'].map((o) => o['order-id']))
  const newOrders = next['sort-orders'].filter((o) => !orderIds.has(o['order-id']))
  for (const order of newOrders) updates.push({ action: 'add-sort-order', 'sort-order': order })
  if (next['default-sort-order-id'] !== base['default-sort-order-id']) {
    updates.push({ action: 'set-default-sort-order', 'sort-order-id': next['default-sort-order-id'] })
    requirements.push({ type: 'assert-default-sort-order-id', 'default-sort-order-id': base['default-sort-order-id'] })
  }

  diffSnapshots(base, next, updates, requirements)
  if (next.location !== base.location) updates.push({ action: 'set-location', location: next.location })
  diffProperties(base.properties, next.properties, updates)
  return { requirements, updates }
}

function diffSnapshots(base: TableMetadata, next: TableMetadata, updates: TableUpdate[], requirements: TableRequirement[]): void {
  const baseIds = new Set(base.snapshots.map((s) => s['snapshot-id']))
  const nextIds = new Set(next.snapshots.map((s) => s['snapshot-id']))
  for (const snapshot of next.snapshots) if (!baseIds.has(snapshot['snapshot-id'])) updates.push({ action: 'add-snapshot', snapshot })
  const baseRefs = refsOf(base)
  const nextRefs = refsOf(next)
  // A ref this change moves, adds or removes is pinned at what the base had (as Iceberg Java's
  // UpdateRequirements does), so a concurrent change to that branch or tag is a 409 to rebase
  // over, not silently overwritten.
  const moved = new Set<string>()
  for (const [name, ref] of Object.entries(nextRefs)) {
    const before = baseRefs[name]
    if (before && before['snapshot-id'] === ref['snapshot-id'] && before.type === ref.type) continue
    updates.push({ ...ref, action: 'set-snapshot-ref', 'ref-name': name })
    moved.add(name)
  }
  for (const name of Object.keys(baseRefs)) {
    if (name in nextRefs) continue
    updates.push({ action: 'remove-snapshot-ref', 'ref-name': name })
    moved.add(name)
  }
  const removed = base.snapshots.map((s) => s['snapshot-id']).filter((id) => !nextIds.has(id))
  if (removed.length > 0) updates.push({ action: 'remove-snapshots', 'snapshot-ids': removed })
  // Every change Floe makes is derived from the main branch it read: pin it, even when `next` leaves main alone.
  requirements.push({ type: 'assert-ref-snapshot-id', ref: MAIN, 'snapshot-id': mainSnapshot(base) })
  for (const name of moved) {
    if (name !== MAIN) requirements.push({ type: 'assert-ref-snapshot-id', ref: name, 'snapshot-id': baseRefs[name]?.['snapshot-id'] ?? null })
  }
}

/** Refs, with v1's bare current-snapshot-id as `main`. */
function refsOf(md: TableMetadata): Record<string, SnapshotRef> {
  if (md.refs && Object.keys(md.refs).length > 0) return md.refs
  const current = md['current-snapshot-id']
  return current === undefined || current === null || current === -1n ? {} : { [MAIN]: { 'snapshot-id': current, type: 'branch' } }
}

function diffProperties(base: Record<string, string>, next: Record<string, string>, updates: TableUpdate[]): void {
  const set: Record<string, string> = {}
  for (const [k, v] of Object.entries(next)) if (base[k] !== v) set[k] = v
  const removals = Object.keys(base).filter((k) => !(k in next))
  if (Object.keys(set).length > 0) updates.push({ action: 'set-properties', updates: set })
  if (removals.length > 0) updates.push({ action: 'remove-properties', removals })
}
