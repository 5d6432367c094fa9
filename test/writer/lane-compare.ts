/**
 * Writing the same batches with the scanner lane (lib/writer/scan-lane.ts) on and off, and what
 * must then be the same: results, checkpoints, the tables' schemas, rows (read back from the
 * Parquet files), column metrics, offset ranges and dead letters.
 */
import { expect } from 'vitest'
import { normalizeTableId } from '../../lib/catalog/index.js'
import { BatchDeferredError } from '../../lib/errors.js'
import type { DataFile } from '../../lib/iceberg/types.js'
import { writeBatch } from '../../lib/writer/pipeline.js'
import { deadLines, fileMetrics as metrics, leafTypes, registeredRows } from './readback.js'
import { checkpoints, kafkaEvent, registered, writerSetup, type EventRecord, type WriterSetup } from './support.js'

/** A table's schemas and partition specs as its metadata has them. */
async function tableShape(s: WriterSetup, table: string): Promise<unknown> {
  const { metadata } = await s.catalog.loadTable(normalizeTableId(table, s.deps.config.routes.defaultNamespace))
  return { schemas: metadata.schemas, current: metadata['current-schema-id'], specs: metadata['partition-specs'] }
}

const sortRows = (rows: Record<string, unknown>[] = []) => rows.map((r) => JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))).sort()

export interface Run {
  s: WriterSetup
  results: Awaited<ReturnType<typeof writeBatch>>[]
  files: Map<string, DataFile[]>
}

/** The batches written in turn with the lane on or off. `before`: called before each batch after the first (a setting the seed batch must not have). */
export async function laneRun(scan: boolean, batches: EventRecord[][], settings: Record<string, string>, before?: (s: WriterSetup) => void): Promise<Run> {
  const s = await writerSetup({ FLOE_WRITER_SCAN: String(scan), ...settings })
  expect(s.deps.config.writerScan).toBe(scan)
  const results = []
  for (const [k, b] of batches.entries()) {
    if (k > 0) before?.(s)
    // A batch cut at the table limit registers what it admitted, then defers the rest: its result rides on the error.
    const r = await writeBatch(s.deps, kafkaEvent(b), { writerId: `w${k}` }).catch((err: unknown) => {
      if (err instanceof BatchDeferredError) return err.result as Awaited<ReturnType<typeof writeBatch>>
      throw err
    })
    results.push(r)
  }
  const reg = await registered(s.control)
  return { s, results, files: new Map([...reg].map(([t, r]) => [t, [...r.files.values()].flat()])) }
}

/**
 * Everything a reader or the committer sees must be the same with the lane on and off. `bounds`:
 * compare the files' bounds too (false where the budget cuts the rows into files at other places,
 * and a string bound truncated in one file is not in another).
 */
export async function expectSame(on: Run, off: Run, bounds = true): Promise<void> {
  for (const [k, r] of off.results.entries()) {
    for (const key of ['recordsIn', 'belowCheckpoint', 'deadLetters', 'dropped', 'outcome', 'transactions', 'checkpoints'] as const) expect(on.results[k]![key], key).toEqual(r[key])
    const rows = (x: typeof r) => x.tables.map((t) => [t.table, t.rows, t.schemaId]).sort()
    expect(rows(on.results[k]!)).toEqual(rows(r))
  }
  expect(await checkpoints(on.s.control)).toEqual(await checkpoints(off.s.control))
  const [rowsOn, rowsOff] = [await registeredRows(on.s), await registeredRows(off.s)]
  // The tables themselves: every schema (ids, order, types) and spec, as the catalog has them.
  for (const table of rowsOff.keys()) expect(await tableShape(on.s, table), table).toEqual(await tableShape(off.s, table))
  expect([...rowsOn.keys()].sort()).toEqual([...rowsOff.keys()].sort())
  for (const [table, rows] of rowsOff) {
    expect(sortRows(rowsOn.get(table)), table).toEqual(sortRows(rows))
    const counts = (m: ReturnType<typeof metrics>) => Object.fromEntries(Object.entries(m).map(([id, c]) => [id, bounds ? c : { values: c.values, nulls: c.nulls }]))
    const types = await leafTypes(off.s, table)
    expect(counts(metrics(on.files.get(table)!, types)), table).toEqual(counts(metrics(off.files.get(table)!, types)))
  }
  const ranges = (x: Run) =>
    [...x.files.keys()].sort().map(async (t) => (await registered(x.s.control)).get(t)!.batches.flatMap((b) => b.ranges.map((g) => `${t} ${g.topic}-${g.partition}:${g.firstOffset}..${g.nextOffset}=${g.records}@${g.maxTimestamp}`)).sort())
  expect(await Promise.all(ranges(on))).toEqual(await Promise.all(ranges(off)))
  const dead = async (x: Run) => (await deadLines(x.s)).map((d) => `${d.topic}-${d.partition}@${d.offset} ${d.stage} ${d.reason}`).sort()
  expect(await dead(on)).toEqual(await dead(off))
}
