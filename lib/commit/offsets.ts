/**
 * Committed offsets in snapshot summaries (DESIGN.md invariant 3): `floe.offsets.<pipeline>` is
 * a JSON map `"topic-partition" → next offset`, cumulative (every Floe snapshot carries the full
 * map forward) and never moving backwards. Snapshots of other engines lack the key, so readers
 * walk back through the ancestors to the newest snapshot that has it.
 */
import { parse, stringify } from 'lossless-json'
import { IcebergError } from '../errors.js'
import type { OffsetRange } from '../control/index.js'
import type { Snapshot, TableMetadata } from '../iceberg/index.js'
import { partitionKey } from '../kafka/index.js'

export const offsetsSummaryKey = (pipeline: string) => `floe.offsets.${pipeline}`
export const COMMIT_ID_KEY = 'floe.commit-id'
export const VALID_THROUGH_KEY = 'floe.valid-through-ts'
/**
 * Replayed batches (lib/replay) in a snapshot: their replay ids, comma-separated. Their offsets
 * are below `floe.offsets.*`, so offsets cannot tell whether they are in; this key can.
 */
export const REPLAY_ID_KEY = 'floe.replay-id'

/** Every replay id the table's history (current snapshot and its ancestors) holds. */
export function replayedIds(md: TableMetadata): Set<string> {
  const out = new Set<string>()
  for (const snap of ancestors(md)) {
    const text = snap.summary?.[REPLAY_ID_KEY]
    if (text) for (const id of text.split(',')) if (id) out.add(id)
  }
  return out
}

export interface CommittedOffsets {
  offsets: Map<string, bigint>
  /** The snapshot whose summary holds them (undefined: no Floe commit of this pipeline in the history). */
  snapshot?: Snapshot
}

/** Current snapshot first, then its parents, as far as the metadata still has them. */
export function* ancestors(md: TableMetadata): Generator<Snapshot> {
  const byId = new Map(md.snapshots.map((s) => [s['snapshot-id'], s]))
  let id: bigint | undefined = md['current-snapshot-id'] ?? md.refs?.main?.['snapshot-id'] ?? undefined
  const seen = new Set<bigint>()
  while (id !== undefined && id !== null && !seen.has(id)) {
    seen.add(id)
    const snap = byId.get(id)
    if (snap === undefined) return
    yield snap
    id = snap['parent-snapshot-id'] ?? undefined
  }
}

/** The offsets the table's history already holds for this pipeline. */
export function committedOffsets(md: TableMetadata, pipeline: string): CommittedOffsets {
  const key = offsetsSummaryKey(pipeline)
  for (const snap of ancestors(md)) {
    const text = snap.summary?.[key]
    if (text !== undefined) return { offsets: parseOffsets(text, snap), snapshot: snap }
  }
  return { offsets: new Map() }
}

export function parseOffsets(text: string, snap?: Snapshot): Map<string, bigint> {
  const where = snap ? `snapshot ${snap['snapshot-id']}` : 'summary'
  let json: unknown
  try {
    json = parse(text, null, (s) => BigInt(s))
  } catch (err) {
    throw new IcebergError(`${where}: floe offsets are not JSON: ${JSON.stringify(text.slice(0, 200))}`, { cause: err })
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new IcebergError(`${where}: floe offsets are not a JSON object`)
  const out = new Map<string, bigint>()
  for (const [k, v] of Object.entries(json)) {
    if (typeof v === 'bigint') out.set(k, v)
    else if (typeof v === 'string' && /^\d+$/.test(v)) out.set(k, BigInt(v))
    else throw new IcebergError(`${where}: floe offset of ${k} is not an integer: ${JSON.stringify(String(v))}`)
  }
  return out
}

export function formatOffsets(offsets: Map<string, bigint>): string {
  const sorted = [...offsets].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return stringify(Object.fromEntries(sorted)) as string
}

export type Coverage = 'covered' | 'uncovered' | 'partial'

/** A batch is covered when every one of its ranges ends at or below the committed offset. */
export function coverage(ranges: OffsetRange[], offsets: Map<string, bigint>): Coverage {
  let covered = 0
  for (const r of ranges) {
    const committed = offsets.get(partitionKey(r.topic, r.partition))
    if (committed !== undefined && r.nextOffset <= committed) covered++
  }
  return covered === 0 ? 'uncovered' : covered === ranges.length ? 'covered' : 'partial'
}

/** Previous offsets advanced by the batches' ranges; never moves an offset backwards. Replayed batches never move them. */
export function mergeOffsets(previous: Map<string, bigint>, batches: { ranges: OffsetRange[]; replayId?: string }[]): Map<string, bigint> {
  const out = new Map(previous)
  for (const b of batches) {
    if (b.replayId !== undefined) continue
    for (const r of b.ranges) {
      const k = partitionKey(r.topic, r.partition)
      const cur = out.get(k)
      if (cur === undefined || r.nextOffset > cur) out.set(k, r.nextOffset)
    }
  }
  return out
}

/** Minimum over the commit's partitions of each partition's latest record timestamp (epoch ms). */
export function validThroughTs(batches: { ranges: OffsetRange[]; replayId?: string }[]): number | undefined {
  const latest = new Map<string, number>()
  for (const b of batches) {
    if (b.replayId !== undefined) continue
    for (const r of b.ranges) {
      const k = partitionKey(r.topic, r.partition)
      latest.set(k, Math.max(latest.get(k) ?? -Infinity, r.maxTimestamp))
    }
  }
  return latest.size === 0 ? undefined : Math.min(...latest.values())
}
