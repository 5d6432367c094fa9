/**
 * `floe replay dead-letters`: dead letters (FLOE_DLQ, lib/writer/dead-letters.ts) whose cause is
 * fixed — a route added, a schema widened, a registry back — go through the writer path again.
 *
 * Exactly once, per dead-letter object (one record): a marker keyed by the object's path AND a
 * hash of its content is put in the transaction that registers the record's rows. The marker
 * also names the follow-up, done after the transaction: `delete` the object (every table it
 * failed for now has the row: it must not be both in a table and a dead letter) or
 * `rewrite:<staged>` it with the lines that failed again, with their NEW reasons (staged before
 * the transaction, so a run killed after it finishes the rewrite on the next run). A rewritten
 * object has a new content hash: a later replay, after the next fix, may try it again — a
 * record that fails again is a dead letter, not a loop.
 *
 * A dead letter that names a table (schema, coerce) is replayed into that table only: the
 * record's other tables already have it. One without (event, decode, route) goes wherever the
 * routes now send it.
 */
import { createHash } from 'node:crypto'
import { readReplayMarkers, replaySourceId, type MarkerItem, type ReplayMarker } from '../control/index.js'
import { FloeError } from '../errors.js'
import { deadLetterLine, writeBatch, type DeadLetter, type DeadLetterLine } from '../writer/index.js'
import { partitionKey } from '../kafka/index.js'
import { logger } from '../log.js'
import { immediately, retry } from '../retry/index.js'
import { unreplayedFailedBatches } from './failed-batches.js'
import { summarize, type ReplayDeps, type ReplayHooks, type ReplayRunResult, type SourceResult } from './types.js'

export interface DeadLetterOptions {
  topic?: string
  partition?: number
  stage?: string
  /** Only dead letters whose reason matches (JavaScript regular expression). */
  reasonMatch?: RegExp
  dryRun?: boolean
  hooks?: ReplayHooks
}

/** Sources per registration transaction: ≤ 100 items with one batch per table. */
const SOURCES_PER_CHUNK = 40

interface Source {
  path: string
  lines: DeadLetterLine[]
  hash: string
  sourceId: string
}

export const stagingPrefix = (dlq: string, pipeline: string) => `${dlq}/~replay/${encodeURIComponent(pipeline)}`

export function parseDeadLetterObject(text: string, path: string): DeadLetterLine[] {
  const lines = text.split('\n').filter((l) => l.trim() !== '')
  try {
    return lines.map((l) => JSON.parse(l) as DeadLetterLine)
  } catch (err) {
    throw new FloeError(`dead letter ${path}: not NDJSON (${(err as Error).message})`)
  }
}

export async function replayDeadLetters(deps: ReplayDeps, opts: DeadLetterOptions = {}): Promise<ReplayRunResult> {
  const { config, io } = deps
  // A record of a parked batch may also have a dead letter (written by an attempt before its
  // registration failed): replaying that dead letter first would put the record in twice.
  const parked = await unreplayedFailedBatches(deps)
  if (parked.length > 0) {
    throw new FloeError(
      `${parked.length} failed batches in ${config.failedBatches} are not replayed yet (first ${parked[0]}): run \`floe replay failed-batches\` first — their records may also be dead letters`,
    )
  }
  const prefix = [config.dlq, encodeURIComponent(config.pipeline), opts.topic && encodeURIComponent(opts.topic), opts.topic && opts.partition !== undefined ? String(opts.partition) : undefined]
    .filter(Boolean)
    .join('/')
  const results: SourceResult[] = []
  let sources: Source[] = []
  for await (const f of io.list(`${prefix}/`)) {
    if (!f.path.endsWith('.ndjson')) continue
    const bytes = await io.read(f.path)
    const lines = parseDeadLetterObject(new TextDecoder().decode(bytes), f.path)
    // Records whose offset could not be read (malformed events) cannot be fenced per offset, nor fixed by config.
    if (lines.length === 0 || lines[0]!.offset.startsWith('-') || !lines.some((l) => matches(l, opts))) continue
    const hash = createHash('sha256').update(bytes).digest('hex')
    sources.push({ path: f.path, lines, hash, sourceId: replaySourceId('dead-letter', f.path, hash) })
    // A chunk at a time: the store may hold far more dead letters than memory.
    if (sources.length >= SOURCES_PER_CHUNK) {
      results.push(...(await replayChunk(deps, sources, opts)))
      sources = []
    }
  }
  if (sources.length > 0) results.push(...(await replayChunk(deps, sources, opts)))
  return summarize('dead-letters', opts.dryRun === true, results)
}

function matches(l: DeadLetterLine, opts: DeadLetterOptions): boolean {
  if (opts.topic !== undefined && l.topic !== opts.topic) return false
  if (opts.partition !== undefined && l.partition !== opts.partition) return false
  if (opts.stage !== undefined && l.stage !== opts.stage) return false
  return opts.reasonMatch === undefined || opts.reasonMatch.test(l.reason)
}

/** Another replay registered one of these sources first (retryable: the markers are read again). */
class ReplayRaced extends FloeError {
  constructor(message: string) {
    super(message, { retryable: true })
  }
}

async function replayChunk(deps: ReplayDeps, chunk: Source[], opts: DeadLetterOptions): Promise<SourceResult[]> {
  const results = new Map<string, SourceResult>()
  await retry(() => replayAttempt(deps, chunk, opts, results), immediately(deps.config.replayRaceRetries + 1), { when: (err) => err instanceof ReplayRaced })
  return chunk.map((s) => results.get(s.path)!)
}

/** One try at a chunk: what earlier runs replayed is finished, the rest written as one batch (ReplayRaced when another replay won). */
async function replayAttempt(deps: ReplayDeps, chunk: Source[], opts: DeadLetterOptions, results: Map<string, SourceResult>): Promise<void> {
  const { config, control } = deps
  const base = (s: Source): SourceResult => ({ source: s.path, status: 'nothing-to-do', records: 1, replayed: 0, alreadyIn: 0, rows: 0, deadLetters: 0, replayId: s.sourceId })
    const markers = await readReplayMarkers(control, config.pipeline, chunk.map((s) => s.sourceId))
    // Replayed by an earlier run: finish its follow-up (the run may have been killed before it).
    for (const s of chunk.filter((c) => markers.has(c.sourceId))) {
      if (!opts.dryRun) await followUp(deps, s.path, markers.get(s.sourceId)!)
      results.set(s.path, { ...base(s), status: 'already-replayed' })
    }
    const todo = chunk.filter((s) => !results.has(s.path))
    if (todo.length === 0) return
    if (opts.dryRun) {
      for (const s of todo) results.set(s.path, { ...base(s), status: 'would-replay', replayed: 1 })
      return
    }
    const replayId = createHash('sha256').update(todo.map((s) => s.sourceId).join('\n')).digest('hex').slice(0, 40)
    const byRecord = new Map(todo.map((s) => [recordId(s.lines[0]!), s]))
    let planned: ReplayMarker[] = []
    let failedAgain = new Map<string, number>()
    const result = await writeBatch(deps, eventOf(todo), {
      writerId: `replay-${replayId.slice(0, 12)}`,
      replay: {
        replayId,
        writeDeadLetters: false,
        tablesFor: (record) => {
          const s = byRecord.get(`${partitionKey(record.topic, record.partition)}@${record.offset}`)
          return s && s.lines.every((l) => l.table) ? new Set(s.lines.map((l) => l.table!)) : undefined
        },
        markers: async (dead) => {
          ;({ planned, failedAgain } = await stageFollowUps(deps, todo, byRecord, dead, replayId))
          await opts.hooks?.beforeSource?.(todo[0]!.path)
          return planned
        },
      },
    })
    if (result.outcome === 'stale') {
      // Another replay registered one of these sources meanwhile: re-read the markers, retry the rest.
      throw new ReplayRaced(`dead-letter replay kept racing another replay over ${todo.length} sources (first ${todo[0]!.path})`)
    }
    const rows = new Map<string, number>()
    for (const t of result.tables) rows.set(t.table, t.rows)
    for (const [i, s] of todo.entries()) {
      await followUp(deps, s.path, { ...planned[i]!, replayId, createdAt: Date.now() })
      const again = failedAgain.get(s.path) ?? 0
      results.set(s.path, { ...base(s), status: 'replayed', replayed: 1, deadLetters: again > 0 ? 1 : 0, rows: again > 0 && again >= s.lines.length ? 0 : 1 })
    }
    logger.info('dead letters replayed', { sources: todo.length, replayId, deadLetters: result.deadLetters })
}

const recordId = (l: DeadLetterLine) => `${partitionKey(l.topic, l.partition)}@${l.offset}`

/** The records as the mapping delivered them (base64 key and value, headers as byte arrays). */
function eventOf(sources: Source[]): unknown {
  const records: Record<string, unknown[]> = {}
  for (const s of sources) {
    const l = s.lines[0]!
    ;(records[partitionKey(l.topic, l.partition)] ??= []).push({
      topic: l.topic,
      partition: l.partition,
      offset: l.offset,
      timestamp: l.timestamp ?? 0,
      timestampType: l.timestampType ?? 'CREATE_TIME',
      ...(l.key === null ? {} : { key: l.key }),
      value: l.value,
      headers: l.headers.map((h) => ({ [h.key]: [...Buffer.from(h.value, 'base64')] })),
    })
  }
  return { eventSource: 'aws:kafka', records }
}

/** Per source: `delete`, or the still-failing lines staged for `rewrite`. In source order. */
async function stageFollowUps(deps: ReplayDeps, todo: Source[], byRecord: Map<string, Source>, dead: DeadLetter[], replayId: string) {
  const { config, io } = deps
  const lines = new Map<string, (DeadLetterLine & { replayedBy: string })[]>()
  for (const d of dead) {
    const s = byRecord.get(`${partitionKey(d.record.topic, d.record.partition)}@${d.record.offset}`)
    if (!s) continue
    let list = lines.get(s.path)
    if (!list) lines.set(s.path, (list = []))
    // `replayedBy` makes the rewritten object differ from the one replayed even when the reason is
    // the same, so its marker never matches it: after the next fix it can be replayed again.
    list.push({ ...deadLetterLine(config.pipeline, d), replayedBy: replayId })
  }
  const failedAgain = new Map<string, number>()
  const planned: ReplayMarker[] = []
  for (const s of todo) {
    const again = lines.get(s.path)
    if (!again?.length) {
      planned.push({ sourceId: s.sourceId, source: s.path, followUp: 'delete' })
      continue
    }
    failedAgain.set(s.path, again.length)
    again.sort((a, b) => (a.table ?? '').localeCompare(b.table ?? ''))
    const staged = `${stagingPrefix(config.dlq, config.pipeline)}/${s.sourceId}.ndjson`
    await io.write(staged, `${again.map((l) => JSON.stringify(l)).join('\n')}\n`, { contentType: 'application/x-ndjson' })
    planned.push({ sourceId: s.sourceId, source: s.path, followUp: `rewrite:${staged}` })
  }
  return { planned, failedAgain }
}

/** Apply a marker's follow-up to its source; idempotent (a rewrite already done is skipped). */
async function followUp(deps: ReplayDeps, path: string, marker: MarkerItem): Promise<void> {
  const { io } = deps
  const action = marker.followUp ?? ''
  if (action === 'delete') {
    if (await io.exists(path)) {
      const current = createHash('sha256').update(await io.read(path)).digest('hex')
      if (replaySourceId('dead-letter', path, current) === marker.sourceId) await io.delete(path)
    }
    return
  }
  if (!action.startsWith('rewrite:')) return
  const staged = action.slice('rewrite:'.length)
  if (!(await io.exists(staged))) return
  if (await io.exists(path)) {
    const current = createHash('sha256').update(await io.read(path)).digest('hex')
    if (replaySourceId('dead-letter', path, current) !== marker.sourceId) {
      await io.delete(staged)
      return
    }
  }
  await io.write(path, await io.read(staged), { contentType: 'application/x-ndjson' })
  await io.delete(staged)
}
