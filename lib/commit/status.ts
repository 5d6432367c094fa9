/**
 * What `floe status` shows per table: the backlog (pending batches, oldest pending age), the last
 * Floe commit (snapshot id and time), and per Kafka partition the committed offset (from the
 * snapshot summary) against the writers' checkpoint — the lag in offsets between "written" and
 * "visible in the table".
 */
import { parseTableId } from '../catalog/index.js'
import { listCheckpoints, listLeasedTables, listPendingTables, readPendingBatches } from '../control/index.js'
import { partitionKey } from '../kafka/index.js'
import { committedOffsets, COMMIT_ID_KEY } from './offsets.js'
import type { TableMetadata } from '../iceberg/index.js'
import type { CommitDeps } from './types.js'

export interface PartitionStatus {
  /** `"topic-partition"` */
  partition: string
  committed?: bigint
  checkpoint?: bigint
  /** checkpoint − committed (offsets written but not yet in the table). */
  lag?: bigint
}

export interface TableStatus {
  table: string
  pendingBatches: number
  pendingRecords: number
  oldestPendingAgeMs?: number
  lastCommit?: { snapshotId: bigint; timestampMs: number; commitId?: string }
  partitions: PartitionStatus[]
  /** Table health from the metadata (no manifest is read): what maintenance keeps bounded. */
  health?: TableHealthStatus
  /** The table could not be loaded (e.g. dropped from the catalog). */
  error?: string
}

export interface TableHealthStatus {
  snapshots: number
  dataFiles?: number
  /** total-files-size / total-data-files of the current snapshot. */
  avgFileBytes?: number
  /** Newest snapshot written by compaction (`floe.maintenance` = compaction). */
  lastCompactionMs?: number
  oldestSnapshotMs?: number
}

function healthOf(md: TableMetadata): TableHealthStatus {
  const current = md.snapshots.find((s) => s['snapshot-id'] === md['current-snapshot-id'])
  const files = Number(current?.summary['total-data-files'] ?? NaN)
  const bytes = Number(current?.summary['total-files-size'] ?? NaN)
  const compactions = md.snapshots.filter((s) => s.summary['floe.maintenance'] === 'compaction').map((s) => s['timestamp-ms'])
  return {
    snapshots: md.snapshots.length,
    ...(Number.isFinite(files) ? { dataFiles: files } : {}),
    ...(Number.isFinite(files) && Number.isFinite(bytes) && files > 0 ? { avgFileBytes: Math.round(bytes / files) } : {}),
    ...(compactions.length > 0 ? { lastCompactionMs: Math.max(...compactions) } : {}),
    ...(md.snapshots.length > 0 ? { oldestSnapshotMs: Math.min(...md.snapshots.map((s) => s['timestamp-ms'])) } : {}),
  }
}

export async function pipelineStatus(deps: Omit<CommitDeps, 'io'>, opts: { tables?: string[]; nowMs?: number } = {}): Promise<TableStatus[]> {
  const { control, config } = deps
  const now = opts.nowMs ?? Date.now()
  const tables =
    opts.tables ?? [...new Set([...(await listPendingTables(control, config.pipeline)), ...(await listLeasedTables(control, config.pipeline))])].sort()
  const checkpoints = new Map((await listCheckpoints(control, config.pipeline)).map((c) => [partitionKey(c.topic, c.partition), c.next]))
  const out: TableStatus[] = []
  for (const table of tables) {
    const pending = await readPendingBatches(control, config.pipeline, table)
    const status: TableStatus = {
      table,
      pendingBatches: pending.length,
      pendingRecords: pending.reduce((n, b) => n + b.recordCount, 0),
      partitions: [],
    }
    if (pending.length > 0) status.oldestPendingAgeMs = Math.max(0, now - Math.min(...pending.map((b) => b.createdAt)))
    let committed = new Map<string, bigint>()
    try {
      const { metadata } = await deps.catalog.loadTable(parseTableId(table))
      const c = committedOffsets(metadata, config.pipeline)
      committed = c.offsets
      status.health = healthOf(metadata)
      if (c.snapshot) {
        status.lastCommit = { snapshotId: c.snapshot['snapshot-id'], timestampMs: c.snapshot['timestamp-ms'], commitId: c.snapshot.summary[COMMIT_ID_KEY] }
      }
    } catch (err) {
      status.error = `${(err as Error).name}: ${(err as Error).message}`
    }
    const keys = new Set([...committed.keys(), ...pending.flatMap((b) => b.ranges.map((r) => partitionKey(r.topic, r.partition)))])
    for (const key of [...keys].sort()) {
      const p: PartitionStatus = { partition: key, committed: committed.get(key), checkpoint: checkpoints.get(key) }
      if (p.checkpoint !== undefined) p.lag = p.checkpoint - (p.committed ?? earliestPending(pending, key) ?? p.checkpoint)
      status.partitions.push(p)
    }
    out.push(status)
  }
  return out
}

function earliestPending(pending: Awaited<ReturnType<typeof readPendingBatches>>, key: string): bigint | undefined {
  let min: bigint | undefined
  for (const b of pending) {
    for (const r of b.ranges) {
      if (partitionKey(r.topic, r.partition) === key && (min === undefined || r.firstOffset < min)) min = r.firstOffset
    }
  }
  return min
}
