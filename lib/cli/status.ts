/** `floe status`: per table, the backlog, the last commit, and committed offsets against writer checkpoints. */
import { parseArgs } from 'node:util'
import { createCommitterDeps, pipelineStatus, type TableStatus, type CommitDeps } from '../commit/index.js'
import { jsonText, TABLE_OPTIONS, type Command } from './command.js'
import { openTarget, TARGET_OPTIONS, TARGET_USAGE } from './target.js'
import { formatWatch, watchRows } from './status-watch.js'
import { ConfigError } from '../errors.js'

const age = (ms: number) => (ms < 120_000 ? `${Math.round(ms / 1000)}s` : ms < 7_200_000 ? `${Math.round(ms / 60_000)}m` : `${(ms / 3_600_000).toFixed(1)}h`)

const kb = (n: number) => (n < 1_048_576 ? `${Math.round(n / 1024)} KB` : `${(n / 1_048_576).toFixed(1)} MB`)

/** Snapshots, data files and their average size, last compaction: what `floe maintain` keeps healthy. */
export function formatHealth(h: NonNullable<TableStatus['health']>): string {
  const files = h.dataFiles === undefined ? '' : `, ${h.dataFiles} data files${h.avgFileBytes === undefined ? '' : ` (avg ${kb(h.avgFileBytes)})`}`
  const oldest = h.oldestSnapshotMs === undefined ? '' : `, oldest ${new Date(h.oldestSnapshotMs).toISOString()}`
  const compacted = h.lastCompactionMs === undefined ? 'never compacted' : `last compaction ${new Date(h.lastCompactionMs).toISOString()}`
  return `health: ${h.snapshots} snapshots${oldest}${files}; ${compacted}`
}

export function formatStatus(statuses: TableStatus[]): string {
  if (statuses.length === 0) return 'no tables: nothing registered or committed in this pipeline yet\n'
  const lines: string[] = []
  for (const s of statuses) {
    const pending = s.pendingBatches === 0 ? 'no pending batches' : `${s.pendingBatches} pending batches (${s.pendingRecords} records), oldest ${age(s.oldestPendingAgeMs ?? 0)} old`
    const last = s.lastCommit ? `last commit ${new Date(s.lastCommit.timestampMs).toISOString()} snapshot ${s.lastCommit.snapshotId}` : 'never committed'
    lines.push(`${s.table}: ${pending}; ${last}`)
    if (s.error) lines.push(`  error: ${s.error}`)
    if (s.health) lines.push(`  ${formatHealth(s.health)}`)
    const width = Math.max(9, ...s.partitions.map((p) => p.partition.length))
    if (s.partitions.length > 0) lines.push(`  ${'partition'.padEnd(width)}  ${'committed'.padStart(12)}  ${'checkpoint'.padStart(12)}  ${'lag'.padStart(8)}`)
    for (const p of s.partitions) {
      lines.push(`  ${p.partition.padEnd(width)}  ${String(p.committed ?? '-').padStart(12)}  ${String(p.checkpoint ?? '-').padStart(12)}  ${String(p.lag ?? '-').padStart(8)}`)
    }
  }
  return `${lines.join('\n')}\n`
}

export const statusCommand: Command = {
  name: 'status',
  summary: 'Per table: pending batches, oldest pending age, last commit, committed offsets vs writer checkpoints',
  usage: `Usage: floe status [--table ns.name]... [--json]

For pipeline FLOE_PIPELINE, per table: pending batches and the age of the oldest, the last Floe
commit (time, snapshot id), and per Kafka partition the offset committed to the table (snapshot
summary floe.offsets.<pipeline>) against the writers' checkpoint; lag = checkpoint - committed, in
offsets (Kafka offsets have gaps, and dead-lettered records advance the checkpoint without a batch,
so the lag counts offsets, not rows still to come).

  --table ns.name   only this table (repeatable; default: every table with pending batches or a commit lease)
  --json            print JSON
  --watch           a view refreshed in place: per table lag, records/s, pending batches, last
                    commit, small-file ratio (Ctrl-C to stop)
  --interval S      seconds between refreshes with --watch (default 2)
${TARGET_USAGE}`,
  async run(argv) {
    const { values } = parseArgs({
      args: argv,
      options: { ...TABLE_OPTIONS, ...TARGET_OPTIONS, watch: { type: 'boolean' }, interval: { type: 'string', default: '2' } },
      strict: true,
      allowPositionals: false,
    })
    if (values.help) {
      process.stdout.write(`${this.usage}\n`)
      return 0
    }
    const target = await openTarget(values)
    const { config, clients } = target
    try {
      const deps = await createCommitterDeps(config, clients)
      if (values.watch) return await watch(deps, values.table, Number(values.interval) * 1000, target.source)
      const statuses = await pipelineStatus(deps, { tables: values.table })
      process.stdout.write(values.json ? jsonText(statuses) : formatStatus(statuses))
      return 0
    } finally {
      await target.close()
    }
  },
}

/** `--watch`: refresh in place until Ctrl-C (or SIGTERM). */
async function watch(deps: CommitDeps, tables: string[] | undefined, everyMs: number, source: string): Promise<number> {
  if (!(everyMs >= 200)) throw new ConfigError('--interval', `expected seconds >= 0.2, got ${everyMs / 1000}`)
  const state = { stop: false }
  const onSignal = () => (state.stop = true)
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  const tty = process.stdout.isTTY === true
  let previous: { statuses: TableStatus[]; atMs: number } | undefined
  try {
    while (!state.stop) {
      const now = Date.now()
      const statuses = await pipelineStatus(deps, { tables, nowMs: now })
      const view = formatWatch(await watchRows(deps, statuses, previous, now), now, source)
      process.stdout.write(tty ? `\u001b[H\u001b[2J${view}` : `${view}\n`)
      previous = { statuses, atMs: now }
      for (let waited = 0; waited < everyMs && !state.stop; waited += 100) await new Promise((r) => setTimeout(r, 100))
    }
    return 0
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
}
