/** `floe maintain --orphans`: run orphan cleanup once, as the maintenance Lambda would, and say what it did. */
import { parseArgs } from 'node:util'
import { createCatalog } from '../catalog/index.js'
import { createClients, destroyClients } from '../clients.js'
import { loadConfig } from '../config.js'
import { createControlContext } from '../control/context.js'
import { ConfigError } from '../errors.js'
import { createFileIO } from '../io/index.js'
import { runMaintenance, type MaintenanceRunResult } from '../maintenance/run.js'
import type { MaintenanceDeps } from '../maintenance/types.js'
import type { Command } from './command.js'

const SHOWN_PATHS = 20

export function formatMaintenanceRun(run: MaintenanceRunResult, dryRun: boolean): string {
  const lines: string[] = []
  const rows = [...run.results, ...(run.spills || run.spillError ? [{ table: '_spill (file lists)', status: run.spillError ? 'failed' : 'cleaned', orphans: run.spills, error: run.spillError }] : [])]
  for (const r of rows) {
    if (r.status === 'failed') lines.push(`${r.table}: FAILED: ${r.error?.name}: ${r.error?.message}`)
    else if (r.status === 'missing') lines.push(`${r.table}: not in the catalog (dropped?), skipped`)
    else if (r.orphans) {
      const o = r.orphans
      const verb = dryRun ? 'would delete' : 'deleted'
      lines.push(`${r.table}: ${o.scanned} files scanned, ${o.referenced} referenced, ${o.young} unreferenced but younger than the horizon, ${verb} ${dryRun ? o.orphans.length : o.deleted}`)
      for (const p of o.orphans.slice(0, SHOWN_PATHS)) lines.push(`  ${p}`)
      if (o.orphans.length > SHOWN_PATHS) lines.push(`  … and ${o.orphans.length - SHOWN_PATHS} more (--json lists all)`)
    }
  }
  lines.push(`${run.tables} tables, ${run.failures} failed, ${dryRun ? `${run.orphans} orphan files found (dry run: nothing deleted)` : `${run.deleted} orphan files deleted`}`)
  return `${lines.join('\n')}\n`
}

export function maintenanceRunJson(run: MaintenanceRunResult, dryRun: boolean): unknown {
  const err = (e?: Error) => (e ? `${e.name}: ${e.message}` : undefined)
  return { ...run, dryRun, results: run.results.map((r) => ({ ...r, error: err(r.error) })), spillError: err(run.spillError) }
}

/** Parse and run against `deps` (tests pass theirs); `out` receives the printed text. */
export async function maintain(argv: string[], deps: () => MaintenanceDeps, out: (text: string) => void, usage: string): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      orphans: { type: 'boolean' },
      table: { type: 'string', multiple: true },
      'older-than-hours': { type: 'string' },
      'dry-run': { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  })
  if (values.help) {
    out(`${usage}\n`)
    return 0
  }
  if (!values.orphans) {
    out(`nothing to do: say which task (--orphans)\n\n${usage}\n`)
    return 2
  }
  let olderThanMs: number | undefined
  if (values['older-than-hours'] !== undefined) {
    const hours = Number(values['older-than-hours'])
    if (!Number.isFinite(hours) || hours < 0) throw new ConfigError('--older-than-hours', `expected a number of hours >= 0; got ${JSON.stringify(values['older-than-hours'])}`)
    olderThanMs = hours * 3_600_000
  }
  const dryRun = values['dry-run'] === true
  const run = await runMaintenance(deps(), { tables: values.table, olderThanMs, dryRun })
  out(values.json ? `${JSON.stringify(maintenanceRunJson(run, dryRun), null, 2)}\n` : formatMaintenanceRun(run, dryRun))
  return run.failures > 0 ? 1 : 0
}

export const maintainCommand: Command = {
  name: 'maintain',
  summary: 'Table maintenance once (what the maintenance Lambda does): --orphans deletes unreferenced old files',
  usage: `Usage: floe maintain --orphans [--table ns.name]... [--older-than-hours H] [--dry-run] [--json]

Orphan cleanup for pipeline FLOE_PIPELINE: under each table's data/ and metadata/ folders, deletes
files that no snapshot of the table, no metadata-log file and no pending batch references, and
that are older than the horizon; then the spilled file lists no pending batch names. Tables: every
table this pipeline has committed to or has pending batches for (or only the given ones; spilled
lists are then left alone). Files outside a table's location are never touched. Exit code 1 if any
table failed (nothing is deleted from a table whose manifests cannot all be read).

  --orphans              remove orphan files (the only task so far)
  --table ns.name        only this table (repeatable)
  --older-than-hours H   horizon (default FLOE_ORPHAN_HORIZON_HOURS, 24). Below a writer's or
                         committer's longest run (15 minutes) it can delete files still being
                         registered or committed: keep it generous on a live pipeline
  --dry-run              list what would be deleted, delete nothing
  --json                 print the run's result as JSON (every path)`,
  async run(argv) {
    let clients: ReturnType<typeof createClients> | undefined
    const deps = (): MaintenanceDeps => {
      const config = loadConfig(process.env)
      clients = createClients({ region: config.region, maxAttempts: config.awsMaxAttempts })
      const io = createFileIO(clients)
      return { config, io, catalog: createCatalog(config, clients, io), control: createControlContext(config, clients.doc, io) }
    }
    try {
      return await maintain(argv, deps, (t) => process.stdout.write(t), this.usage)
    } finally {
      if (clients) destroyClients(clients)
    }
  },
}
