/**
 * Snapshot expiry, the metadata side (Iceberg Java's RemoveSnapshots): which snapshots a table
 * keeps, and the metadata without the others. Deleting files is the caller's (lib/maintenance).
 *
 * Kept, as Java keeps them:
 * - for every branch, its head and its ancestors while fewer than `min-snapshots-to-keep` are
 *   kept or while they are younger than `max-snapshot-age-ms` (the ref's own
 *   `max-snapshot-age-ms` / `min-snapshots-to-keep` override the table's
 *   `history.expire.max-snapshot-age-ms` (default 5 days) / `history.expire.min-snapshots-to-keep`
 *   (default 1));
 * - every tag's snapshot (refs are never removed here: `max-ref-age-ms` is not applied);
 * - snapshots on no ref's ancestry younger than the table's max age.
 * Floe adds two rules. The newest ancestor of `main` that carries each `floe.offsets.*` key is
 * kept (docs/commit-protocol.md "Known limits"), so a committer that crashed after its swap still
 * finds its offsets however many other engines' snapshots followed. And `maxSnapshots`
 * (FLOE_EXPIRE_MAX_SNAPSHOTS, docs/maintenance.md): on a branch whose age comes from Iceberg's
 * default — neither the table's `history.expire.max-snapshot-age-ms` nor the ref's own
 * `max-snapshot-age-ms` is set — at most that many ancestors are kept for their age (never fewer
 * than `min-snapshots-to-keep`). Five days of a table committed several times a minute would be
 * tens of thousands of snapshots in a metadata.json rewritten by every commit; a table that
 * sets its age gets exactly Iceberg's rule.
 */
import { IcebergError } from '../errors.js'
import type { Snapshot, TableMetadata } from './types.js'

export const MAX_SNAPSHOT_AGE_MS = 'history.expire.max-snapshot-age-ms'
export const MIN_SNAPSHOTS_TO_KEEP = 'history.expire.min-snapshots-to-keep'
const DEFAULT_MAX_AGE_MS = 5 * 24 * 3_600_000
const DEFAULT_MIN_KEEP = 1
const FLOE_OFFSETS_PREFIX = 'floe.offsets.'

export interface ExpiryPlan {
  /** The metadata without expired snapshots (unchanged object when nothing expires). */
  metadata: TableMetadata
  expired: Snapshot[]
  kept: Snapshot[]
}

function intProperty(md: TableMetadata, raw: unknown, key: string, dflt: number): number {
  if (raw === undefined || raw === null) return dflt
  const n = typeof raw === 'number' ? raw : /^\s*\d+\s*$/.test(String(raw)) ? Number(raw) : NaN
  if (!Number.isSafeInteger(n) || n < 0) throw new IcebergError(`table ${md.location}: ${key} must be a non-negative integer, got '${String(raw)}'`)
  return n
}

function* ancestry(byId: Map<bigint, Snapshot>, head: bigint): Generator<Snapshot> {
  const seen = new Set<bigint>()
  for (let id: bigint | undefined = head; id !== undefined && !seen.has(id); ) {
    seen.add(id)
    const s = byId.get(id)
    if (!s) return
    yield s
    id = s['parent-snapshot-id'] ?? undefined
  }
}

export interface ExpiryOptions {
  /** Most ancestors a branch keeps for their age when that age is Iceberg's default (0 or absent: no cap). */
  maxSnapshots?: number
}

/** Plans expiry at `nowMs` under the table's properties and refs. */
export function planExpiry(md: TableMetadata, nowMs: number, opts: ExpiryOptions = {}): ExpiryPlan {
  const ageSet = md.properties[MAX_SNAPSHOT_AGE_MS] !== undefined && md.properties[MAX_SNAPSHOT_AGE_MS] !== null
  const maxAge = intProperty(md, md.properties[MAX_SNAPSHOT_AGE_MS], MAX_SNAPSHOT_AGE_MS, DEFAULT_MAX_AGE_MS)
  const minKeep = intProperty(md, md.properties[MIN_SNAPSHOTS_TO_KEEP], MIN_SNAPSHOTS_TO_KEEP, DEFAULT_MIN_KEEP)
  const byId = new Map(md.snapshots.map((s) => [s['snapshot-id'], s]))
  const keep = new Set<bigint>()
  const onRefs = new Set<bigint>()
  const refs = { ...md.refs }
  const current = md['current-snapshot-id']
  if (refs.main === undefined && current !== undefined && current !== null && current !== -1n) refs.main = { 'snapshot-id': current, type: 'branch' }
  for (const [name, ref] of Object.entries(refs)) {
    if (!byId.has(ref['snapshot-id'])) continue
    keep.add(ref['snapshot-id'])
    if (ref.type === 'tag') continue
    const refAge = intProperty(md, ref['max-snapshot-age-ms'], `ref ${name} max-snapshot-age-ms`, maxAge)
    const refMin = intProperty(md, ref['min-snapshots-to-keep'], `ref ${name} min-snapshots-to-keep`, minKeep)
    const defaultAge = !ageSet && (ref['max-snapshot-age-ms'] === undefined || ref['max-snapshot-age-ms'] === null)
    const cap = defaultAge && opts.maxSnapshots ? Math.max(opts.maxSnapshots, refMin) : Number.POSITIVE_INFINITY
    let kept = 0
    for (const s of ancestry(byId, ref['snapshot-id'])) {
      onRefs.add(s['snapshot-id'])
      if (kept < refMin || (kept < cap && s['timestamp-ms'] >= nowMs - refAge)) {
        keep.add(s['snapshot-id'])
        kept++
      }
    }
  }
  if (refs.main) {
    const needed = new Set(md.snapshots.flatMap((s) => Object.keys(s.summary ?? {}).filter((k) => k.startsWith(FLOE_OFFSETS_PREFIX))))
    for (const s of ancestry(byId, refs.main['snapshot-id'])) {
      if (needed.size === 0) break
      for (const k of Object.keys(s.summary ?? {})) {
        if (needed.delete(k)) keep.add(s['snapshot-id'])
      }
    }
  }
  for (const s of md.snapshots) if (!onRefs.has(s['snapshot-id']) && s['timestamp-ms'] >= nowMs - maxAge) keep.add(s['snapshot-id'])

  const kept = md.snapshots.filter((s) => keep.has(s['snapshot-id']))
  const expired = md.snapshots.filter((s) => !keep.has(s['snapshot-id']))
  if (expired.length === 0) return { metadata: md, expired, kept }
  const gone = new Set(expired.map((s) => s['snapshot-id']))
  const keepStats = (key: string) => (Array.isArray(md[key]) ? { [key]: (md[key] as { 'snapshot-id': bigint }[]).filter((x) => !gone.has(BigInt(x['snapshot-id']))) } : {})
  return {
    metadata: {
      ...md,
      snapshots: kept,
      'snapshot-log': md['snapshot-log'].filter((e) => !gone.has(e['snapshot-id'])),
      ...keepStats('statistics'),
      ...keepStats('partition-statistics'),
    },
    expired,
    kept,
  }
}
