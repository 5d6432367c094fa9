/** `floe commit`: run the committer once, as the scheduled Lambda would, and say what it did. */
import { parseArgs } from 'node:util'
import { createCommitterDeps, runCommitter, type CommitRunResult } from '../commit/index.js'
import { jsonText, TABLE_OPTIONS, type Command } from './command.js'
import { openTarget, TARGET_OPTIONS, TARGET_USAGE } from './target.js'

export function formatCommitRun(run: CommitRunResult): string {
  const lines = run.results.map((r) => {
    const what =
      r.status === 'committed'
        ? `committed ${r.batches} batches, ${r.files} files, ${r.records} records as snapshot ${r.snapshotId}`
        : r.status === 'marked'
          ? `${r.alreadyCommitted} batches were already in the table; marked committed`
          : r.status === 'failed'
            ? `FAILED: ${r.error?.name}: ${r.error?.message}`
            : r.status === 'busy'
              ? 'skipped: another committer holds the lease'
              : r.status === 'deferred'
                ? 'deferred: out of time'
                : 'nothing pending'
    const extra = [r.alreadyCommitted > 0 && r.status === 'committed' ? `${r.alreadyCommitted} already committed` : '', r.conflicts ? `${r.conflicts} conflicts` : '']
      .filter(Boolean)
      .join(', ')
    return `${r.table}: ${what}${extra ? ` (${extra})` : ''}`
  })
  lines.push(`${run.tables} tables, ${run.committed} committed, ${run.failures} failed, ${run.busy} busy`)
  return `${lines.join('\n')}\n`
}

export const commitCommand: Command = {
  name: 'commit',
  summary: 'Commit pending batches into their Iceberg tables once (what the committer Lambda does)',
  usage: `Usage: floe commit [--table ns.name]... [--json]

Runs the committer once for pipeline FLOE_PIPELINE: every table with pending batches (or only the
given ones) gets one snapshot, under the table's commit lease. Exit code 1 if any table failed.

  --table ns.name   only this table (repeatable)
  --json            print the run's result as JSON
${TARGET_USAGE}`,
  async run(argv) {
    const { values } = parseArgs({
      args: argv,
      options: { ...TABLE_OPTIONS, ...TARGET_OPTIONS },
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
      const run = await runCommitter(deps, { tables: values.table })
      if (values.json) {
        const json = { ...run, results: run.results.map((r) => ({ ...r, error: r.error ? `${r.error.name}: ${r.error.message}` : undefined })) }
        process.stdout.write(jsonText(json))
      } else {
        process.stdout.write(formatCommitRun(run))
      }
      return run.failures > 0 ? 1 : 0
    } finally {
      await target.close()
    }
  },
}
