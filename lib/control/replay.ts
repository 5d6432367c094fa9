/**
 * Replay markers (DESIGN.md invariant 11): a replayed record's offset is below its partition's
 * checkpoint, so replay cannot be fenced by checkpoints. Instead every replayed source — one
 * failed-batch object, or one dead-letter object in one version of its content — gets a marker
 * item, put with `attribute_not_exists` in the SAME transaction that registers the batches made
 * from it (registerBatches' `markers`). A replay killed anywhere and run again finds the marker
 * (its batches are registered: nothing to do but the follow-up) or does not (nothing was
 * registered: it replays from scratch). Markers never expire by TTL: a source replayed once
 * must never be replayed again, however late someone re-runs the command.
 *
 * | item | pk | sk |
 * |---|---|---|
 * | replay marker | `replay#<pipeline>#<source id>` | `replay` |
 */
import { createHash } from 'node:crypto'
import { batchGetAll } from './batch-get.js'
import type { Key } from './keys.js'
import type { ControlContext } from './types.js'

export interface ReplayMarker {
  /** Stable id of the replayed source (see replaySourceId). */
  sourceId: string
  /** Human-readable source: the object's path. */
  source: string
  /** What the replay run must still do once the marker exists: `delete` or `rewrite:<staged path>` the source. */
  followUp?: string
}

export interface MarkerItem extends ReplayMarker {
  replayId: string
  createdAt: number
}

/** Deterministic, short id of a source (its path and, for dead letters, a hash of the content replayed). */
export function replaySourceId(kind: 'failed-batch' | 'dead-letter', path: string, contentHash = ''): string {
  return createHash('sha256').update(`${kind}\n${path}\n${contentHash}`).digest('hex').slice(0, 40)
}

export function replayMarkerKey(pipeline: string, sourceId: string): Key {
  return { pk: `replay#${pipeline}#${sourceId}`, sk: 'replay' }
}

/** The transaction item that fences one source: fails when the source was already replayed. */
export function markerPut(ctx: ControlContext, pipeline: string, replayId: string, m: ReplayMarker, now: number, attemptId: string): Record<string, unknown> {
  return {
    Put: {
      TableName: ctx.table,
      Item: {
        ...replayMarkerKey(pipeline, m.sourceId),
        kind: 'replay',
        pipeline,
        sourceId: m.sourceId,
        source: m.source,
        replayId,
        createdAt: now,
        attemptId,
        ...(m.followUp ? { followUp: m.followUp } : {}),
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  }
}

/** The markers that exist among the given source ids (consistent reads), by source id. */
export async function readReplayMarkers(ctx: ControlContext, pipeline: string, sourceIds: string[]): Promise<Map<string, MarkerItem>> {
  const out = new Map<string, MarkerItem>()
  const unique = [...new Set(sourceIds)]
  for (let i = 0; i < unique.length; i += 100) {
    const keys = unique.slice(i, i + 100).map((id) => replayMarkerKey(pipeline, id))
    await batchGetAll(ctx, keys, { what: 'replay markers', reading: 'reading replay markers' }, (item) => {
      out.set(item.sourceId as string, {
        sourceId: item.sourceId as string,
        source: item.source as string,
        replayId: item.replayId as string,
        createdAt: item.createdAt as number,
        followUp: item.followUp as string | undefined,
      })
    })
  }
  return out
}
