/**
 * `floe replay failed-batches|dead-letters`: put records that left the pipeline back through the
 * writer path, exactly once (lib/replay). The committer then commits them like any batch.
 */
import { parseArgs } from 'node:util'
import { createWriterDeps } from '../writer/index.js'
import { createClients, destroyClients } from '../clients.js'
import { loadConfig } from '../config.js'
import { ConfigError } from '../errors.js'
import { replayDeadLetters, replayFailedBatches, type ReplayDeps, type ReplayRunResult } from '../replay/index.js'
import { jsonText, type Command } from './command.js'

const SHOWN = 30

export function formatReplayRun(run: ReplayRunResult): string {
  const lines: string[] = []
  for (const r of run.results.slice(0, SHOWN)) {
    const detail =
      r.status === 'failed' || r.status === 'refused'
        ? `${r.status.toUpperCase()}: ${r.error}`
        : r.status === 'already-replayed'
          ? 'already replayed (skipped)'
          : `${r.status}: ${r.replayed} of ${r.records} records${r.alreadyIn ? `, ${r.alreadyIn} already in` : ''}${r.status === 'replayed' ? `, ${r.rows} rows, ${r.deadLetters} dead letters again` : ''}`
    lines.push(`${r.source}: ${detail}`)
  }
  if (run.results.length > SHOWN) lines.push(`… and ${run.results.length - SHOWN} more (--json lists all)`)
  lines.push(
    `${run.sources} ${run.kind === 'failed-batches' ? 'failed batches' : 'dead letters'}: ${run.dryRun ? `${run.results.filter((r) => r.status === 'would-replay').length} would be replayed (dry run: nothing written)` : `${run.replayed} replayed (${run.rows} rows, ${run.deadLetters} dead letters again)`}, ${run.alreadyReplayed} already replayed, ${run.failures} failed`,
  )
  if (!run.dryRun && run.replayed > 0) lines.push('The next committer run (or `floe commit`) puts the rows in their tables.')
  return `${lines.join('\n')}\n`
}

/** Parse and run against `deps` (tests pass theirs); `out` receives the printed text. */
export async function replay(argv: string[], deps: () => Promise<ReplayDeps>, out: (text: string) => void, usage: string): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      since: { type: 'string' },
      topic: { type: 'string' },
      partition: { type: 'string' },
      stage: { type: 'string' },
      'reason-match': { type: 'string' },
      'dry-run': { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: true,
  })
  if (values.help) {
    out(`${usage}\n`)
    return 0
  }
  const what = positionals[0]
  if (positionals.length !== 1 || (what !== 'failed-batches' && what !== 'dead-letters')) {
    out(`say what to replay: failed-batches or dead-letters\n\n${usage}\n`)
    return 2
  }
  const dryRun = values['dry-run'] === true
  let run: ReplayRunResult
  if (what === 'failed-batches') {
    for (const k of ['topic', 'partition', 'stage', 'reason-match'] as const) if (values[k] !== undefined) throw new ConfigError(`--${k}`, 'applies to dead-letters only')
    const since = values.since === undefined ? undefined : new Date(values.since)
    if (since !== undefined && Number.isNaN(since.getTime())) throw new ConfigError('--since', `expected an ISO 8601 time; got ${JSON.stringify(values.since)}`)
    run = await replayFailedBatches(await deps(), { since, dryRun })
  } else {
    if (values.since !== undefined) throw new ConfigError('--since', 'applies to failed-batches only')
    const partition = values.partition === undefined ? undefined : Number(values.partition)
    if (partition !== undefined && !(Number.isInteger(partition) && partition >= 0)) throw new ConfigError('--partition', `expected a partition number; got ${JSON.stringify(values.partition)}`)
    if (partition !== undefined && values.topic === undefined) throw new ConfigError('--partition', 'needs --topic')
    let reasonMatch: RegExp | undefined
    try {
      reasonMatch = values['reason-match'] === undefined ? undefined : new RegExp(values['reason-match'])
    } catch (err) {
      throw new ConfigError('--reason-match', `not a regular expression: ${(err as Error).message}`)
    }
    run = await replayDeadLetters(await deps(), { topic: values.topic, partition, stage: values.stage, reasonMatch, dryRun })
  }
  out(values.json ? jsonText(run) : formatReplayRun(run))
  return run.failures > 0 ? 1 : 0
}

export const replayCommand: Command = {
  name: 'replay',
  summary: 'Replay failed batches or dead letters into their tables, exactly once',
  usage: `Usage: floe replay failed-batches [--since T] [--dry-run] [--json]
       floe replay dead-letters [--topic T [--partition P]] [--stage S] [--reason-match RE] [--dry-run] [--json]

Puts records back through the writer path (decode, route, coerce, Parquet, register) for pipeline
FLOE_PIPELINE; the committer then commits them. Each source is replayed at most once, fenced by a
replay marker in the control table in the same transaction that registers its files: a replay
killed at any point can be run again. Replayed rows keep their original _kafka topic, partition
and offset; their snapshot carries floe.replay-id.

failed-batches   the batches the event source mapping gave up on, from its on-failure destination
                 (FLOE_FAILED_BATCHES). Records a live writer had registered are left out.
dead-letters     the dead letters in FLOE_DLQ (after fixing their cause: a route, a schema, a
                 registry). A replayed dead letter is removed from the store; one that fails
                 again stays, with its new reason.

  --since T            failed batches written at or after T (ISO 8601)
  --topic T            dead letters of topic T only
  --partition P        … and of its partition P only
  --stage S            dead letters of a stage: event, decode, route, schema, coerce
  --reason-match RE    dead letters whose reason matches the regular expression RE
  --dry-run            say what would be replayed; write nothing
  --json               print the run's result as JSON
Exit code 1 if any source failed (the others are replayed regardless; run again to retry).`,
  async run(argv) {
    let clients: ReturnType<typeof createClients> | undefined
    const deps = async (): Promise<ReplayDeps> => {
      const config = loadConfig(process.env)
      clients = createClients({ region: config.region, maxAttempts: config.awsMaxAttempts })
      return createWriterDeps(config, clients)
    }
    try {
      return await replay(argv, deps, (t) => process.stdout.write(t), this.usage)
    } finally {
      if (clients) destroyClients(clients)
    }
  },
}
