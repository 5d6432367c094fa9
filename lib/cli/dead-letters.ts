/**
 * `floe dead-letters [--group-by reason|stage|table|topic] [--limit N] [--json]`: what is in the
 * dead-letter store of the pipeline --stack, the environment or the local state points at — each
 * letter's topic/partition/offset (or input file and line), table, stage and reason, or counts
 * grouped by one of them, so a user can see why records did not land and which to fix.
 */
import { parseArgs } from 'node:util'
import type { FileIO } from '../io/index.js'
import { jsonText, type Command } from './command.js'
import { openTarget, TARGET_OPTIONS, TARGET_USAGE } from './target.js'

export interface DeadLetterEntry {
  where: string
  table?: string
  stage: string
  reason: string
}

const GROUPS = ['reason', 'stage', 'table', 'topic'] as const
type Group = (typeof GROUPS)[number]

/** Every dead letter of the pipeline under `dlq`. */
export async function listDeadLetters(io: FileIO, dlq: string, pipeline: string): Promise<DeadLetterEntry[]> {
  const out: DeadLetterEntry[] = []
  for await (const f of io.list(dlq)) {
    if (!f.path.endsWith('.ndjson')) continue
    for (const line of new TextDecoder().decode(await io.read(f.path)).split('\n')) {
      if (!line.trim()) continue
      const d = JSON.parse(line) as { pipeline?: string; topic?: string | null; partition?: number | null; offset?: string | null; source?: string; table?: string; stage?: string; reason?: string }
      if (d.pipeline !== undefined && d.pipeline !== pipeline) continue
      out.push({ where: d.source ?? `${d.topic}/${d.partition}@${d.offset}`, ...(d.table ? { table: d.table } : {}), stage: d.stage ?? 'unknown', reason: d.reason ?? '' })
    }
  }
  return out
}

/** A reason with its values blanked (digits, quoted text), so letters failing the same way group together. */
export function reasonKind(reason: string): string {
  return reason
    .replace(/^[^:]*\.ndjson:\d+: /, '')
    .replace(/"(?:[^"\\]|\\.)*"/g, '"…"')
    .replace(/'(?:[^'\\]|\\.)*'/g, "'…'")
    .replace(/(?<![A-Za-z-])\d+(\.\d+)?\b/g, 'N')
    .slice(0, 160)
}

function keyOf(d: DeadLetterEntry, by: Group): string {
  if (by === 'reason') return `${d.stage}: ${reasonKind(d.reason)}`
  if (by === 'stage') return d.stage
  if (by === 'table') return d.table ?? '(no table)'
  return d.where.includes('@') ? d.where.slice(0, d.where.indexOf('/')) : '(input file)'
}

export const deadLettersCommand: Command = {
  name: 'dead-letters',
  summary: 'List the dead letters (records that did not land) with their reasons, or count them by reason',
  usage: `Usage: floe dead-letters [--group-by reason|stage|table|topic] [--limit N] [--json]

Reads the dead-letter store (FLOE_DLQ) of pipeline FLOE_PIPELINE: per letter its origin
(topic/partition@offset, or input file:line), table, stage (input, event, decode, route, schema,
coerce) and reason; with --group-by, counts per reason kind (values blanked), stage, table or topic.

  --group-by KEY    count by reason, stage, table or topic instead of listing
  --limit N         list at most N letters (default 50)
  --json            print JSON
${TARGET_USAGE}`,
  async run(argv) {
    const { values } = parseArgs({
      args: argv,
      options: { 'group-by': { type: 'string' }, limit: { type: 'string', default: '50' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' }, ...TARGET_OPTIONS },
      strict: true,
      allowPositionals: false,
    })
    const by = values['group-by'] as Group | undefined
    if (by !== undefined && !GROUPS.includes(by)) throw Object.assign(new Error(`--group-by expects one of ${GROUPS.join(', ')}, got '${by}'`), { code: 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' })
    const limit = Number(values.limit)
    const target = await openTarget(values)
    try {
      const { createFileIO } = await import('../io/index.js')
      const letters = await listDeadLetters(createFileIO(target.clients), target.config.dlq, target.config.pipeline)
      if (by) {
        const counts = new Map<string, number>()
        for (const d of letters) counts.set(keyOf(d, by), (counts.get(keyOf(d, by)) ?? 0) + 1)
        const rows = [...counts].sort((a, b) => b[1] - a[1])
        if (values.json) process.stdout.write(jsonText(rows.map(([key, count]) => ({ [by]: key, count }))))
        else {
          for (const [key, count] of rows) process.stdout.write(`${String(count).padStart(7)}  ${key}\n`)
          process.stdout.write(`${String(letters.length).padStart(7)}  in all (${target.config.dlq})\n`)
        }
        return 0
      }
      if (values.json) process.stdout.write(jsonText(letters.slice(0, limit)))
      else {
        if (letters.length === 0) process.stdout.write(`no dead letters in ${target.config.dlq}\n`)
        for (const d of letters.slice(0, limit)) process.stdout.write(`${d.where}  ${d.table ?? '(no table)'}  ${d.stage}: ${d.reason}\n`)
        if (letters.length > limit) process.stdout.write(`… ${letters.length - limit} more (--limit, or --group-by reason)\n`)
      }
      return 0
    } finally {
      await target.close()
    }
  },
}
