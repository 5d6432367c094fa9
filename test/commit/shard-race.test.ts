/**
 * The committer reads a table's pending shards one after another, not at one instant. A writer
 * that registers batch r into a shard already read and then r+1 into a shard not yet read must
 * not get r+1 committed alone: the summary offsets would then pass r, r would look covered and be
 * marked without ever being appended — a lost batch. The race is staged exactly: SDK middleware on
 * the committer's own client registers both batches right after the committer's read of r's shard.
 */
import { describe, expect, it } from 'vitest'
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb'
import { createClients } from '../../lib/clients.js'
import { commitTable } from '../../lib/commit/table.js'
import { batchIdFor, batchPartition, shardOf } from '../../lib/control/keys.js'
import { testAws } from '../helpers/aws.js'
import { testCommit } from './context.js'

const SHARDS = 4

describe('committer and writers racing over pending shards', () => {
  it('never commits a batch before an earlier one of its partition that it did not see yet', async () => {
    const t = await testCommit({ pendingShards: SHARDS, shardConcurrency: 1 })
    const { name } = await t.table()
    // A partition whose first batch (offset 0) lands in a shard read before the second one's.
    const id = (partition: number, first: bigint) => batchIdFor('p1', name, [{ topic: 'events', partition, firstOffset: first }])
    let partition = 0
    while (shardOf(id(partition, 0n), SHARDS) === SHARDS - 1) partition++
    const firstShard = shardOf(id(partition, 0n), SHARDS)
    let count = 1
    while (shardOf(id(partition, BigInt(count)), SHARDS) <= firstShard) count++

    const clients = createClients({ endpoints: testAws().endpoints, maxAttempts: 3 })
    let staged = false
    clients.ddb.middlewareStack.add(
      (next) => async (args) => {
        const out = await next(args)
        const values = (args.input as { ExpressionAttributeValues?: Record<string, unknown> }).ExpressionAttributeValues
        const pk = values?.[':pk']
        if (!staged && (pk === batchPartition('p1', name, firstShard) || (pk as { S?: string } | undefined)?.S === batchPartition('p1', name, firstShard))) {
          staged = true
          await t.register(name, { partition, count })
          await t.register(name, { partition, count: 10 })
        }
        return out
      },
      { step: 'initialize', name: 'stageRace' },
    )
    const deps = { ...t.deps, control: { ...t.deps.control, doc: DynamoDBDocumentClient.from(clients.ddb) } }
    const first = await commitTable(deps, name)
    expect(staged).toBe(true)
    const second = await commitTable(deps, name)
    expect(first.status).not.toBe('failed')
    expect(second.status).not.toBe('failed')
    expect(first.batches + second.batches).toBe(2)
    expect(first.alreadyCommitted + second.alreadyCommitted).toBe(0)
    expect(await t.livePaths(name)).toHaveLength(2)
  })
})
