/**
 * The writer on a partitioned table (FLOE_WRITER_SCAN, lib/writer/scan-partition.ts): the same
 * narrow events through the real writer path (throughput.ts `floeRun`) into a table of the given
 * spec — `day(ts)`: each event's records fall in one day, one file of it; `city, day(ts)`: each
 * event's 8 cities interleaved, a file per city — with the lane on and off (the present path:
 * JSON.parse, guard, coerced row and partition tuple per record). A fresh table per run, created
 * by its first event through the present path in both (the lane does not create partitioned tables).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AwsClients } from '../../lib/clients.js'
import { collectGarbage, median, RequestCounter, round } from './common.js'
import { emptyIoCounts } from './counting-io.js'
import { firstEvents, type Dataset } from './data.js'
import { floeRun, type Ctx } from './throughput.js'

export interface PartitionedRow {
  scan: boolean
  wallMs: number
  cpuMs: number
  recordsPerCpuSec: number
  files: number
}

export interface PartitionedResult {
  dataset: string
  records: number
  events: number
  partitionBy: string[]
  rows: PartitionedRow[]
}

export async function benchPartitioned(
  clients: AwsClients,
  tables: { control: string; catalog: string },
  ds: Dataset,
  runs: number,
  log: (s: string) => void = () => undefined,
  partitionBy = ['day(ts)'],
): Promise<PartitionedResult> {
  const dir = mkdtempSync(join(tmpdir(), `floe-bench-partitioned-${ds.name}-`))
  mkdirSync(join(dir, 'warehouse'), { recursive: true })
  const ctx: Ctx = { clients, counter: new RequestCounter(), controlTable: tables.control, catalogTable: tables.catalog, dir, stamp: `p${Date.now().toString(36)}`, partitionBy }
  try {
    const passes = new Map<boolean, { wallMs: number; cpuMs: number; files: number }[]>([[true, []], [false, []]])
    for (const scan of [true, false]) await floeRun(ctx, firstEvents(ds, 2), `warm${scan}`, emptyIoCounts(), { FLOE_WRITER_SCAN: String(scan) })
    // Interleaved, so load drifts hit both alike.
    for (let run = 0; run < runs; run++) {
      for (const scan of [true, false]) {
        collectGarbage()
        const pass = await floeRun(ctx, ds, `${run}s${scan}`, emptyIoCounts(), { FLOE_WRITER_SCAN: String(scan) })
        passes.get(scan)!.push(pass)
        log(`  ${ds.name} ${partitionBy.join(', ')} lane ${scan ? 'on' : 'off'} run ${run + 1}/${runs}: ${round(pass.wallMs)} ms wall, ${round(pass.cpuMs)} ms CPU, ${pass.files} files`)
      }
    }
    const rows = [true, false].map((scan): PartitionedRow => {
      const p = passes.get(scan)!
      const cpuMs = median(p.map((x) => x.cpuMs))
      return { scan, wallMs: round(median(p.map((x) => x.wallMs))), cpuMs: round(cpuMs), recordsPerCpuSec: round(ds.records / (cpuMs / 1000)), files: p[0]!.files }
    })
    return { dataset: ds.name, records: ds.records, events: ds.payloads.length, partitionBy, rows }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Markdown of the partitioned rows. */
export function partitionedTable(r: PartitionedResult): (string | number)[][] {
  const t: (string | number)[][] = [['input', 'records', 'partitionBy', 'FLOE_WRITER_SCAN', 'wall s', 'CPU s', 'records/CPU-s', 'files', 'vs lane off (CPU)']]
  const off = r.rows.find((x) => !x.scan)!
  for (const x of r.rows) t.push([r.dataset, r.records, r.partitionBy.join(', '), String(x.scan), round(x.wallMs / 1000, 2), round(x.cpuMs / 1000, 2), x.recordsPerCpuSec, x.files, round(off.cpuMs / x.cpuMs, 2)])
  return t
}
