/** `floe status`: per table, the backlog, the last commit, and committed offsets against writer checkpoints. */
import { parseArgs } from 'node:util'
import { createCommitterDeps } from '../../functions/committer.js'
import { createClients, destroyClients } from '../clients.js'
import { pipelineStatus, type TableStatus } from '../commit/status.js'
import { loadConfig } from '../config.js'
import { jsonText, TABLE_OPTIONS, type Command } from './command.js'

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
  --json            print JSON`,
  async run(argv) {
    const { values } = parseArgs({
      args: argv,
      options: TABLE_OPTIONS,
      strict: true,
      allowPositionals: false,
    })
    if (values.help) {
      process.stdout.write(`${this.usage}\n`)
      return 0
    }
    const config = loadConfig(process.env)
    const clients = createClients({ region: config.region, maxAttempts: config.awsMaxAttempts })
    try {
      const statuses = await pipelineStatus(
        await createCommitterDeps(config, clients),
        { tables: values.table },
      )
      process.stdout.write(values.json ? jsonText(statuses) : formatStatus(statuses))
      return 0
    } finally {
      destroyClients(clients)
    }
  },
}
