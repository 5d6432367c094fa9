/**
 * `floe replay failed-batches`: the batches the event source mapping gave up on, from its
 * on-failure destination (FLOE_FAILED_BATCHES). Each S3 object is one invocation record — the
 * failure metadata (`requestContext`, `responseContext`, `KafkaBatchInfo`, `timestamp`) and, for
 * S3 destinations, the whole invocation event under `payload` (AWS Lambda developer guide,
 * "Capturing discarded batches for Amazon MSK and self-managed Apache Kafka event sources").
 *
 * Per object, exactly once: a marker per object (lib/control/replay.ts) is put in the same
 * transaction that registers the batches made from it, so a replay killed at any point and run
 * again either finds the marker (done) or starts the object afresh (its files of the killed run
 * are orphans, removed by orphan cleanup). Records of the object that a live writer already
 * registered (a split registration, a zombie that landed) are left out: see registered.ts.
 */
import { parse as parseLossless, isSafeNumber, LosslessNumber } from 'lossless-json'
import { FloeError } from '../errors.js'
import { readCheckpoints, readReplayMarkers, replaySourceId } from '../control/index.js'
import type { FileInfo } from '../io/index.js'
import { parseKafkaEvent, parseRecord, partitionKey, type RawKafkaEvent, isKafkaEvent } from '../kafka/index.js'
import { logger } from '../log.js'
import { deadLetterPath, writeBatch } from '../writer/index.js'
import { isRegistered, registeredRanges } from './registered.js'
import { summarize, type ReplayDeps, type ReplayHooks, type ReplayRunResult, type SourceResult } from './types.js'

export interface FailedBatchOptions {
  /** Only objects written at or after this time. */
  since?: Date
  dryRun?: boolean
  hooks?: ReplayHooks
}

/** The invocation event inside an on-failure destination object. */
export function parseInvocationRecord(text: string, path: string): { event: RawKafkaEvent; condition?: string } {
  let doc: unknown
  try {
    // Offsets beyond 2^53 must survive: keep unsafe numbers lossless (parseRecord reads them digit for digit).
    doc = parseLossless(text, null, (v) => (isSafeNumber(v) ? Number(v) : new LosslessNumber(v)))
  } catch (err) {
    throw new FloeError(`failed batch ${path}: not JSON (${(err as Error).message})`)
  }
  const record = doc as { payload?: unknown; requestContext?: { condition?: string } }
  let payload = record?.payload
  if (typeof payload === 'string') payload = parseLossless(payload, null, (v) => (isSafeNumber(v) ? Number(v) : new LosslessNumber(v)))
  if (!isKafkaEvent(payload)) {
    throw new FloeError(`failed batch ${path}: no Kafka invocation event under "payload" (an SNS or SQS destination record carries no records; only S3 destinations keep the batch)`)
  }
  return { event: payload, condition: record.requestContext?.condition }
}

export async function replayFailedBatches(deps: ReplayDeps, opts: FailedBatchOptions = {}): Promise<ReplayRunResult> {
  const { config, io, control } = deps
  const objects: FileInfo[] = []
  for await (const f of io.list(config.failedBatches)) if (!opts.since || f.lastModified >= opts.since) objects.push(f)
  objects.sort((a, b) => a.lastModified.getTime() - b.lastModified.getTime() || (a.path < b.path ? -1 : 1))
  const ids = objects.map((o) => replaySourceId('failed-batch', o.path))
  const markers = await readReplayMarkers(control, config.pipeline, ids)
  const results: SourceResult[] = []
  for (const [i, obj] of objects.entries()) {
    const base: SourceResult = { source: obj.path, status: 'nothing-to-do', records: 0, replayed: 0, alreadyIn: 0, rows: 0, deadLetters: 0, replayId: ids[i] }
    if (markers.has(ids[i]!)) {
      results.push({ ...base, status: 'already-replayed' })
      continue
    }
    try {
      results.push(await replayObject(deps, obj, ids[i]!, opts, base))
    } catch (err) {
      logger.error('failed batch not replayed', { source: obj.path, error: err as Error })
      results.push({ ...base, status: 'failed', error: `${(err as Error).name}: ${(err as Error).message}` })
    }
  }
  return summarize('failed-batches', opts.dryRun === true, results)
}

async function replayObject(deps: ReplayDeps, obj: FileInfo, replayId: string, opts: FailedBatchOptions, base: SourceResult): Promise<SourceResult> {
  const { config, control, io } = deps
  const { event } = parseInvocationRecord(new TextDecoder().decode(await io.read(obj.path)), obj.path)
  const records = parseKafkaEvent(event)
  const partitions = [...new Map(records.map((r) => [partitionKey(r.topic, r.partition), { topic: r.topic, partition: r.partition }])).values()]
  // Checkpoints first, then the registered ranges: a registration of these offsets after the
  // read would have to be conditioned on a checkpoint at or below them, which no longer holds.
  const checkpoints = await readCheckpoints(control, config.pipeline, partitions)
  const below = (pkey: string, offset: bigint) => offset >= 0n && (checkpoints.get(pkey) ?? -1n) > offset
  const anyBelow = records.some((r) => below(partitionKey(r.topic, r.partition), r.offset))
  const ranges = anyBelow ? await registeredRanges(control, config.pipeline, new Set(partitions.map((p) => partitionKey(p.topic, p.partition)))) : new Map()
  if (anyBelow && Date.now() - obj.lastModified.getTime() > config.batchTtlSeconds * 1000) {
    return {
      ...base,
      status: 'refused',
      records: records.length,
      error: `older than FLOE_BATCH_TTL_HOURS=${config.batchTtlSeconds / 3600}: the commit journal no longer tells which of its records below the checkpoints are already in; replay it by hand or raise the setting`,
    }
  }
  // Keep the raw records (exactly as the mapping delivered them) of the records to replay.
  const kept: Record<string, unknown[]> = {}
  let alreadyIn = 0
  for (const [groupKey, list] of Object.entries(event.records)) {
    for (const raw of list) {
      const r = parseRecord(raw, groupKey)
      const pkey = partitionKey(r.topic, r.partition)
      if (below(pkey, r.offset) && isRegistered(ranges, pkey, r.offset)) {
        alreadyIn++
        continue
      }
      ;(kept[groupKey] ??= []).push(raw)
    }
  }
  const replayed = records.length - alreadyIn
  if (opts.dryRun) return { ...base, status: 'would-replay', records: records.length, replayed, alreadyIn }
  const result = await writeBatch(deps, { ...event, records: kept }, {
    writerId: `replay-${replayId.slice(0, 12)}`,
    replay: {
      replayId,
      writeDeadLetters: true,
      markers: async () => {
        await opts.hooks?.beforeSource?.(obj.path)
        return [{ sourceId: replayId, source: obj.path }]
      },
    },
  })
  const rows = result.tables.reduce((n, t) => n + t.rows, 0)
  const status = result.outcome === 'stale' ? 'already-replayed' : 'replayed'
  if (status === 'replayed') {
    // An attempt of this batch may have written dead letters before its registration failed;
    // a record that is a row now must not stay one too (never both).
    const written = new Set(result.deadLetterPaths)
    const stale = Object.entries(kept)
      .flatMap(([groupKey, list]) => list.map((raw) => parseRecord(raw, groupKey)))
      .filter((r) => r.offset >= 0n)
      .map((r) => deadLetterPath(config.dlq, config.pipeline, r.topic, r.partition, r.offset))
      .filter((p) => !written.has(p))
    await io.deleteMany(stale)
  }
  logger.info('failed batch replayed', { source: obj.path, status, records: records.length, replayed, alreadyIn, rows, deadLetters: result.deadLetters })
  return { ...base, status, records: records.length, replayed, alreadyIn, rows: status === 'replayed' ? rows : 0, deadLetters: result.deadLetters }
}

/** Failed-batch objects not replayed yet (dead-letter replay waits for them: see dead-letters.ts). */
export async function unreplayedFailedBatches(deps: ReplayDeps): Promise<string[]> {
  const paths: string[] = []
  for await (const f of deps.io.list(deps.config.failedBatches)) paths.push(f.path)
  const markers = await readReplayMarkers(deps.control, deps.config.pipeline, paths.map((p) => replaySourceId('failed-batch', p)))
  return paths.filter((p) => !markers.has(replaySourceId('failed-batch', p)))
}
