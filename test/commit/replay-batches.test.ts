/** Replayed batches in the commit protocol: outside the offset order, never moving the offsets, known by floe.replay-id. */
import { describe, expect, it } from 'vitest'
import { mergeOffsets, REPLAY_ID_KEY, replayedIds, validThroughTs } from '../../lib/commit/offsets.js'
import { selectBatches } from '../../lib/commit/select.js'
import type { PendingBatch } from '../../lib/control/types.js'
import type { TableMetadata } from '../../lib/iceberg/types.js'
import { range } from '../control/context.js'

const batch = (id: string, createdAt: number, ranges: ReturnType<typeof range>[], replayId?: string): PendingBatch => ({
  table: 'db.t', batchId: id, writerId: 'w', createdAt, schemaId: 0, specId: 0, ranges, recordCount: 1, bytes: 1, fileCount: 1, ...(replayId ? { replayId } : {}),
})

describe('replayed batches', () => {
  it('are selected whatever the live batches of their partitions, and never block them', () => {
    const live1 = batch('l1', 5, [range('t', 0, 100n, 110n)])
    const live2 = batch('l2', 6, [range('t', 0, 110n, 120n)])
    // Below the live batches on the same partition, and created first.
    const replay = batch('r', 1, [range('t', 0, 10n, 20n)], 'rid')
    expect(selectBatches([live2, replay, live1], { maxBatches: 10, maxBytes: 1e9 }).map((b) => b.batchId)).toEqual(['r', 'l1', 'l2'])
    expect(selectBatches([live2, live1, replay], { maxBatches: 1, maxBytes: 1e9 }).map((b) => b.batchId)).toEqual(['r'])
  })

  it('never move the summary offsets or the valid-through time', () => {
    const previous = new Map([['t-0', 100n]])
    const replay = batch('r', 1, [range('t', 0, 150n, 200n), range('t', 1, 0n, 5n)], 'rid')
    expect(mergeOffsets(previous, [replay])).toEqual(previous)
    expect(mergeOffsets(previous, [replay, batch('l', 2, [range('t', 0, 100n, 120n)])])).toEqual(new Map([['t-0', 120n]]))
    expect(validThroughTs([replay])).toBeUndefined()
  })

  it('are known to be in a table by a replay id in any ancestor snapshot', () => {
    const snap = (id: bigint, parent: bigint | undefined, summary: Record<string, string>) => ({ 'snapshot-id': id, 'parent-snapshot-id': parent, summary: { operation: 'append', ...summary } })
    const md = {
      'current-snapshot-id': 3n,
      snapshots: [snap(1n, undefined, { [REPLAY_ID_KEY]: 'a,b' }), snap(2n, 1n, {}), snap(3n, 2n, { [REPLAY_ID_KEY]: 'c' }), snap(9n, undefined, { [REPLAY_ID_KEY]: 'not-an-ancestor' })],
    } as unknown as TableMetadata
    expect([...replayedIds(md)].sort()).toEqual(['a', 'b', 'c'])
  })
})
