/** `floe maintain [--compact] [--manifests] [--expire] [--orphans] [--all]`: run table maintenance once, as the maintenance Lambda would, and say what it did. */
import { parseArgs } from 'node:util'
import { createCatalog } from '../catalog/index.js'
import { createControlContext } from '../control/index.js'
import { ConfigError } from '../errors.js'
import { createFileIO } from '../io/index.js'
import { ALL_TASKS, runMaintenance, type MaintenanceRunResult, type MaintenanceTask, type MaintenanceDeps } from '../maintenance/index.js'
import type { Command } from './command.js'
import { openTarget, TARGET_OPTIONS, TARGET_USAGE, type Target } from './target.js'

const SHOWN_PATHS = 20

export function formatMaintenanceRun(run: MaintenanceRunResult, dryRun: boolean): string {
  const lines: string[] = []
  const rows = [...run.results, ...(run.spills || run.spillError ? [{ table: '_spill (file lists)', status: run.spillError ? 'failed' : 'cleaned', orphans: run.spills, error: run.spillError }] : [])]
  for (const r of rows) {
    if (r.status === 'failed') lines.push(`${r.table}: FAILED: ${r.error?.name}: ${r.error?.message}`)
    else if (r.status === 'missing') lines.push(`${r.table}: not in the catalog (dropped?), skipped`)
    if (r.status === 'busy') lines.push(`${r.table}: busy (the committer holds its lease): compaction and expiry wait for the next run`)
    const c = 'compaction' in r ? r.compaction : undefined
    if (c) {
      const h = c.health
      const what = c.skipped ? `skipped: ${c.skipped}` : `${dryRun ? 'would rewrite' : 'rewrote'} ${c.filesRewritten} small files (${c.bytesRewritten} bytes) into ${dryRun ? c.groupsPlanned : c.filesWritten}${c.groupsDropped ? `, ${c.groupsDropped} groups dropped (changed by another writer)` : ''}`
      lines.push(`${r.table}: compaction: ${h.dataFiles} data files, ${Math.round(h.smallFileRatio * 100)}% small (< 75% of ${c.targetBytes} bytes); ${what}`)
    }
    const mf = 'manifests' in r ? r.manifests : undefined
    if (mf) lines.push(`${r.table}: manifests: ${mf.manifestsBefore} in the current snapshot; ${mf.skipped ? `skipped: ${mf.skipped}` : `${dryRun ? 'would replace' : 'replaced'} ${mf.manifestsReplaced} small ones with ${mf.manifestsCreated}`}`)
    const x = 'expiry' in r ? r.expiry : undefined
    if (x) lines.push(`${r.table}: expiry: ${x.snapshotsBefore} snapshots, ${dryRun ? 'would expire' : 'expired'} ${x.snapshotsExpired}, ${x.filesDeleted} files (${x.bytesReclaimed} bytes) ${dryRun ? 'to delete' : 'deleted'}, metadata ${x.metadataBytesBefore} → ${x.metadataBytesAfter} bytes`)
    if (r.status !== 'failed' && r.orphans) {
      const o = r.orphans
      const verb = dryRun ? 'would delete' : 'deleted'
      lines.push(`${r.table}: ${o.scanned} files scanned, ${o.referenced} referenced, ${o.young} unreferenced but younger than the horizon, ${verb} ${dryRun ? o.orphans.length : o.deleted}`)
      for (const p of o.orphans.slice(0, SHOWN_PATHS)) lines.push(`  ${p}`)
      if (o.orphans.length > SHOWN_PATHS) lines.push(`  … and ${o.orphans.length - SHOWN_PATHS} more (--json lists all)`)
    }
  }
  lines.push(`${run.tables} tables, ${run.failures} failed, ${run.busy} busy, ${run.filesCompacted} small files compacted, ${run.snapshotsExpired} snapshots expired, ${dryRun ? `${run.orphans} orphan files found (dry run: nothing deleted)` : `${run.deleted} orphan files deleted`}`)
  return `${lines.join('\n')}\n`
}

export function maintenanceRunJson(run: MaintenanceRunResult, dryRun: boolean): unknown {
  const err = (e?: Error) => (e ? `${e.name}: ${e.message}` : undefined)
  const compaction = (c: MaintenanceRunResult['results'][number]['compaction']) => (c ? { ...c, snapshotId: c.snapshotId?.toString() } : undefined)
  const manifests = (m: MaintenanceRunResult['results'][number]['manifests']) => (m ? { ...m, snapshotId: m.snapshotId?.toString() } : undefined)
  return { ...run, dryRun, results: run.results.map((r) => ({ ...r, compaction: compaction(r.compaction), manifests: manifests(r.manifests), error: err(r.error) })), spillError: err(run.spillError) }
}

/** Parse and run against `deps` (tests pass theirs); `out` receives the printed text. */
export async function maintain(argv: string[], deps: (target: { dir?: string; stack?: string }) => MaintenanceDeps | Promise<MaintenanceDeps>, out: (text: string) => void, usage: string): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      compact: { type: 'boolean' },
      manifests: { type: 'boolean' },
      expire: { type: 'boolean' },
      orphans: { type: 'boolean' },
      all: { type: 'boolean' },
      table: { type: 'string', multiple: true },
      'older-than-hours': { type: 'string' },
      'dry-run': { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      ...TARGET_OPTIONS,
    },
    strict: true,
    allowPositionals: false,
  })
  if (values.help) {
    out(`${usage}\n`)
    return 0
  }
  const tasks: MaintenanceTask[] = values.all ? ALL_TASKS : ALL_TASKS.filter((t) => values[t] === true)
  if (tasks.length === 0) {
    out(`nothing to do: say which task (--compact, --manifests, --expire, --orphans or --all)\n\n${usage}\n`)
    return 2
  }
  let olderThanMs: number | undefined
  if (values['older-than-hours'] !== undefined) {
    const hours = Number(values['older-than-hours'])
    if (!Number.isFinite(hours) || hours < 0) throw new ConfigError('--older-than-hours', `expected a number of hours >= 0; got ${JSON.stringify(values['older-than-hours'])}`)
    olderThanMs = hours * 3_600_000
  }
  const dryRun = values['dry-run'] === true
  const run = await runMaintenance(await deps({ dir: values.dir, stack: values.stack }), { tables: values.table, olderThanMs, dryRun, tasks })
  out(values.json ? `${JSON.stringify(maintenanceRunJson(run, dryRun), null, 2)}\n` : formatMaintenanceRun(run, dryRun))
  return run.failures > 0 ? 1 : 0
}

export const maintainCommand: Command = {
  name: 'maintain',
  summary: 'Table maintenance once (what the maintenance Lambda does): compaction, manifest rewrite, snapshot expiry, orphan cleanup',
  usage: `Usage: floe maintain [--compact] [--manifests] [--expire] [--orphans] [--all] [--table ns.name]... [--older-than-hours H] [--dry-run] [--json]

Table maintenance for pipeline FLOE_PIPELINE, per table, in this order:
  --compact   rewrite small data files of each partition into files near the target size
              (write.target-file-size-bytes, else FLOE_TARGET_FILE_MB) as one replace snapshot;
              at most FLOE_COMPACT_MAX_MB of input per table per run (run again to continue)
  --manifests rewrite the current snapshot's small data manifests into fewer (a replace
              snapshot, same files) once a spec has commit.manifest.min-count-to-merge (100) of
              them below commit.manifest.target-size-bytes (8 MB)
  --expire    expire snapshots older than history.expire.max-snapshot-age-ms (5 days) beyond
              history.expire.min-snapshots-to-keep (1), keeping refs — without that table property,
              at most FLOE_EXPIRE_MAX_SNAPSHOTS (2,000) per branch; delete the files only they
              reached, never one a kept snapshot or a pending batch names
  --orphans   delete files under each table's data/ and metadata/ folders that nothing references
              and that are older than the horizon; then the spilled file lists no pending batch names
  --all       the four, in that order
Compaction, manifest rewrite and expiry hold the committer's lease for the table (a busy table waits for the next
run). Tables: every table this pipeline has committed to or has pending batches for (or only the
given ones; spilled lists are then left alone). Exit code 1 if any table failed.

  --table ns.name        only this table (repeatable)
  --older-than-hours H   horizon (default FLOE_ORPHAN_HORIZON_HOURS, 24). Below a writer's or
                         committer's longest run (15 minutes) it can delete files still being
                         registered or committed: keep it generous on a live pipeline
  --dry-run              list what would be deleted, delete nothing
  --json                 print the run's result as JSON (every path)
${TARGET_USAGE}`,
  async run(argv) {
    let target: Target | undefined
    const deps = async (where: { dir?: string; stack?: string }): Promise<MaintenanceDeps> => {
      target = await openTarget(where)
      const { config, clients } = target
      const io = createFileIO(clients)
      return { config, io, catalog: createCatalog(config, clients, io), control: createControlContext(config, clients.doc, io) }
    }
    try {
      return await maintain(argv, deps, (t) => process.stdout.write(t), this.usage)
    } finally {
      await target?.close()
    }
  },
}
