/**
 * What a local run left behind, read back from the tables themselves (catalog → metadata →
 * manifests), not from the run's counters, plus the dead-letter store.
 */
import { tableName, type Catalog } from '../catalog/index.js'
import { currentSnapshot, writeVersionHint } from '../iceberg/index.js'
import { liveDataFiles } from '../iceberg/manifests.js'
import type { FileIO } from '../io/index.js'

export interface TableSummary {
  table: string
  metadataLocation: string
  location: string
  rows: number
  files: number
  snapshots: number
  partitions: number
  deadLetters: number
  currentSnapshotId?: string
}

export interface DeadLetterCounts {
  total: number
  byTable: Map<string, number>
  byReason: Map<string, number>
}

/** Count dead letters (NDJSON lines) under the dead-letter prefix, by table and by reason kind. */
export async function countDeadLetters(io: FileIO, dlq: string, pipeline: string): Promise<DeadLetterCounts> {
  const out: DeadLetterCounts = { total: 0, byTable: new Map(), byReason: new Map() }
  for await (const f of io.list(dlq)) {
    if (!f.path.endsWith('.ndjson') && !f.path.endsWith('.json')) continue
    const text = new TextDecoder().decode(await io.read(f.path))
    for (const line of text.split('\n')) {
      if (!line.trim()) continue
      const dl = JSON.parse(line) as { pipeline?: string; table?: string; stage?: string; reason?: string }
      if (dl.pipeline !== undefined && dl.pipeline !== pipeline) continue
      out.total++
      const table = dl.table ?? '(none)'
      out.byTable.set(table, (out.byTable.get(table) ?? 0) + 1)
      const kind = dl.stage ?? 'unknown'
      out.byReason.set(kind, (out.byReason.get(kind) ?? 0) + 1)
    }
  }
  return out
}

/** Read every table in the given namespaces back from the catalog. */
export async function summarizeTables(catalog: Catalog, io: FileIO, namespaces: string[], dead?: DeadLetterCounts): Promise<TableSummary[]> {
  const out: TableSummary[] = []
  const known = new Set(await catalog.listNamespaces())
  for (const ns of namespaces) {
    if (!known.has(ns)) continue
    for (const id of await catalog.listTables(ns)) {
      const { metadata, metadataLocation } = await catalog.loadTable(id)
      const snapshot = currentSnapshot(metadata)
      const entries = snapshot ? await liveDataFiles(io, metadata) : []
      const data = entries.filter((e) => e.dataFile.content === 0)
      const partitions = new Set(data.map((e) => `${e.dataFile.specId}:${JSON.stringify(e.dataFile.partition, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}`))
      const name = tableName(id)
      out.push({
        table: name,
        metadataLocation,
        location: metadata.location,
        rows: data.reduce((n, e) => n + e.dataFile.recordCount, 0),
        files: data.length,
        snapshots: metadata.snapshots.length,
        partitions: partitions.size,
        deadLetters: dead?.byTable.get(name) ?? 0,
        ...(snapshot ? { currentSnapshotId: snapshot['snapshot-id'].toString() } : {}),
      })
    }
  }
  return out
}

/**
 * Keep `version-hint.text` beside each table's current metadata so path-based readers (DuckDB's
 * iceberg_scan on a folder, Hadoop-style catalogs) find the latest version of a file:// table.
 */
export async function refreshVersionHints(catalog: Catalog, io: FileIO, namespaces: string[]): Promise<void> {
  const known = new Set(await catalog.listNamespaces())
  for (const ns of namespaces) {
    if (!known.has(ns)) continue
    for (const id of await catalog.listTables(ns)) {
      const { metadata, metadataLocation } = await catalog.loadTable(id)
      await writeVersionHint(io, metadata, metadataLocation)
    }
  }
}
