/**
 * BatchGet's UnprocessedKeys rounds (lib/control/batch-get.ts) under the control read policy.
 * DynamoDB Local never throttles, so the document client is wrapped: every BatchGet really runs
 * against DynamoDB Local, and the wrapper then hands all but the first key back as unprocessed —
 * what DynamoDB does under throttling.
 */
import { BatchGetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb'
import { describe, expect, it } from 'vitest'
import { registerBatches } from '../../lib/control/batches.js'
import { readCheckpoints } from '../../lib/control/checkpoints.js'
import type { ControlContext } from '../../lib/control/types.js'
import { FloeError } from '../../lib/errors.js'
import { batchInput, fakeDataFile, range, testControl } from './context.js'

const parts = [0, 1, 2].map((partition) => ({ topic: 'orders', partition }))

/** The real client, but each BatchGet is asked for its first key only and reports the rest unprocessed. */
function oneKeyPerRound(ctx: ControlContext): { ctx: ControlContext; rounds: () => number } {
  let rounds = 0
  const doc = {
    send: async (cmd: unknown) => {
      if (!(cmd instanceof BatchGetCommand)) return await ctx.doc.send(cmd as never)
      rounds++
      const [table, req] = Object.entries(cmd.input.RequestItems!)[0]!
      const [first, ...rest] = req.Keys!
      const out = await ctx.doc.send(new BatchGetCommand({ RequestItems: { [table]: { ...req, Keys: [first!] } } }))
      return { ...out, UnprocessedKeys: rest.length ? { [table]: { ...req, Keys: rest } } : {} }
    },
  } as unknown as DynamoDBDocumentClient
  return { ctx: { ...ctx, doc }, rounds: () => rounds }
}

async function registered(overrides = {}) {
  const { ctx } = await testControl({ controlBackoffMs: 1, ...overrides })
  const expected = await readCheckpoints(ctx, 'p1', parts)
  const ranges = parts.map((p) => range('orders', p.partition, 0n, BigInt(10 + p.partition)))
  const next = new Map(parts.map((p) => [`orders-${p.partition}`, BigInt(10 + p.partition)]))
  await registerBatches(ctx, { pipeline: 'p1', writerId: 'w1', expected, next, batches: [batchInput('db.events', ranges, [fakeDataFile('s3://b/w/db/events')])] })
  return ctx
}

describe('BatchGet UnprocessedKeys', () => {
  it('are asked for again, round after round, until every key is read', async () => {
    const { ctx, rounds } = oneKeyPerRound(await registered())
    expect(await readCheckpoints(ctx, 'p1', parts)).toEqual(new Map([['orders-0', 10n], ['orders-1', 11n], ['orders-2', 12n]]))
    expect(rounds()).toBe(3)
  })

  it('past FLOE_CONTROL_READ_ROUNDS fail retryably, naming the keys left and the rounds', async () => {
    const { ctx, rounds } = oneKeyPerRound(await registered({ controlReadRounds: 2 }))
    const err = await readCheckpoints(ctx, 'p1', parts).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(FloeError)
    expect((err as FloeError).retryable).toBe(true)
    expect((err as FloeError).message).toBe(`control table ${ctx.table}: 1 checkpoint keys still unprocessed after 2 rounds`)
    expect(rounds()).toBe(2)
  })
})
