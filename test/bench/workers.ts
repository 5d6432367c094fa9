/**
 * The two-worker split (FLOE_WRITER_WORKERS, lib/writer/workers): the same events through the
 * real writer path (throughput.ts `floeRun`: writeBatch, file:// warehouse, DynamoDB Local) with
 * 0 (main thread only), 1 and 2 encode threads. Reported per worker count: wall time and CPU of
 * the whole pass — CPU is `process.cpuUsage()`, which counts every thread of the process, the
 * workers included — and the median of one event (one ≤ 6 MB invocation: Lambda's real batch),
 * beside DuckDB (`SET threads=1`) over that one event's records as NDJSON, so the ratio at the
 * invocation's size is visible (DuckDB's per-file schema detection is then not amortised).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AwsClients } from '../../lib/clients.js'
import { collectGarbage, median, RequestCounter, round } from './common.js'
import { emptyIoCounts } from './counting-io.js'
import { firstEvents, writeNdjson, type Dataset } from './data.js'
import { duckdbRun, floeRun, type Ctx, type RunFigures } from './throughput.js'

export interface WorkersRow {
  dataset: string
  records: number
  events: number
  workers: number
  wallMs: number
  cpuMs: number
  recordsPerSec: number
  recordsPerCpuSec: number
  files: number
  parquetBytes: number
  /** Median of one event (one invocation). */
  perEvent: { records: number; wallMs: number; cpuMs: number }
}

export interface WorkersResult {
  rows: WorkersRow[]
  /** DuckDB over one event's records (the median event's size), median of runs. */
  duckdbEvent: { records: number; wallMs: number; cpuMs: number }
}


export async function benchWorkers(
  clients: AwsClients,
  tables: { control: string; catalog: string },
  ds: Dataset,
  runs: number,
  counts: number[] = [0, 1, 2],
  log: (s: string) => void = () => undefined,
): Promise<WorkersResult> {
  const dir = mkdtempSync(join(tmpdir(), `floe-bench-workers-${ds.name}-`))
  mkdirSync(join(dir, 'warehouse'), { recursive: true })
  const ctx: Ctx = { clients, counter: new RequestCounter(), controlTable: tables.control, catalogTable: tables.catalog, dir, stamp: `w${Date.now().toString(36)}` }
  try {
    const rows: WorkersRow[] = []
    const warm = firstEvents(ds, 1)
    const passes = new Map<number, (RunFigures & { files: number; parquetBytes: number })[]>(counts.map((w) => [w, []]))
    const events = new Map<number, RunFigures[]>(counts.map((w) => [w, []]))
    for (const w of counts) await floeRun(ctx, warm, `warm${w}`, emptyIoCounts(), { FLOE_WRITER_WORKERS: String(w) })
    // Interleaved: run r of every worker count before run r + 1, so load drifts hit them alike.
    for (let run = 0; run < runs; run++) {
      for (const w of counts) {
        collectGarbage()
        const pass = await floeRun(ctx, ds, `${run}w${w}`, emptyIoCounts(), { FLOE_WRITER_WORKERS: String(w) }, (f) => events.get(w)!.push(f))
        passes.get(w)!.push(pass)
        log(`  ${ds.name} workers ${w} run ${run + 1}/${runs}: ${round(pass.wallMs)} ms wall, ${round(pass.cpuMs)} ms CPU, ${pass.files} files`)
      }
    }
    const perEventRecords = round(median(ds.eventRecords))
    for (const w of counts) {
      const p = passes.get(w)!
      const wallMs = median(p.map((x) => x.wallMs))
      const cpuMs = median(p.map((x) => x.cpuMs))
      const ev = events.get(w)!
      rows.push({
        dataset: ds.name,
        records: ds.records,
        events: ds.payloads.length,
        workers: w,
        wallMs: round(wallMs),
        cpuMs: round(cpuMs),
        recordsPerSec: round(ds.records / (wallMs / 1000)),
        recordsPerCpuSec: round(ds.records / (cpuMs / 1000)),
        files: p[0]!.files,
        parquetBytes: p[0]!.parquetBytes,
        perEvent: { records: perEventRecords, wallMs: round(median(ev.map((x) => x.wallMs)), 1), cpuMs: round(median(ev.map((x) => x.cpuMs)), 1) },
      })
    }
    // DuckDB over the first event's records (events are consecutive records: lines 0..n-1).
    const n = ds.eventRecords[0]!
    const ndjson = join(dir, `${ds.name}-event.ndjson`)
    writeNdjson(ndjson, ds, n)
    await duckdbRun(ndjson, join(dir, 'warm.parquet'))
    const duck: RunFigures[] = []
    for (let run = 0; run < Math.max(3, runs); run++) duck.push(await duckdbRun(ndjson, join(dir, `duck-${run}.parquet`)))
    return { rows, duckdbEvent: { records: n, wallMs: round(median(duck.map((d) => d.wallMs)), 1), cpuMs: round(median(duck.map((d) => d.cpuMs)), 1) } }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Markdown rows: one per (dataset, worker count), with the per-event figures and DuckDB's per-event figure. */
export function workersTable(results: WorkersResult[]): (string | number)[][] {
  const t: (string | number)[][] = [
    ['input', 'records', 'FLOE_WRITER_WORKERS', 'wall s', 'CPU s (all threads)', 'records/s', 'records/CPU-s', 'files', 'one event: records', 'one event: wall ms', 'one event: CPU ms', 'DuckDB one event: wall / CPU ms', 'one event Floe/DuckDB (wall)', 'one event Floe/DuckDB (CPU)'],
  ]
  for (const r of results) {
    const d = r.duckdbEvent
    const scale = (x: RunFigures['wallMs'], rec: number) => (x * rec) / d.records
    for (const x of r.rows) {
      const e = x.perEvent
      t.push([x.dataset, x.records, x.workers, round(x.wallMs / 1000, 2), round(x.cpuMs / 1000, 2), x.recordsPerSec, x.recordsPerCpuSec, x.files, e.records, e.wallMs, e.cpuMs, `${d.wallMs} / ${d.cpuMs}`, round(scale(d.wallMs, e.records) / e.wallMs, 3), round(scale(d.cpuMs, e.records) / e.cpuMs, 3)])
    }
  }
  return t
}
