/**
 * One consistent BatchGetItem of at most 100 keys, re-asking for the UnprocessedKeys DynamoDB
 * returns under throttling: FLOE_CONTROL_READ_ROUNDS rounds with the control backoff
 * (lib/retry), then a retryable FloeError naming how many keys are left after how many rounds.
 */
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb'
import { FloeError } from '../errors.js'
import { controlReadPolicy, retry } from '../retry/index.js'
import { wrapDynamoError } from './errors.js'
import type { ControlContext } from './types.js'

/** Keys a round left unprocessed (retryable: the next round asks for them again). */
class Unprocessed extends FloeError {
  constructor(readonly left: number) {
    super(`${left} keys unprocessed`, { retryable: true })
  }
}

export interface BatchGetSpec {
  /** What the keys are, for messages ("checkpoint keys"). */
  what: string
  /** What is being read, for a failed request's message ("reading checkpoints"). */
  reading: string
  projection?: string
}

/** Reads `keys` (≤ 100) and hands every item found to `each`. */
export async function batchGetAll(ctx: ControlContext, keys: Record<string, unknown>[], spec: BatchGetSpec, each: (item: Record<string, unknown>) => void): Promise<void> {
  let pending = keys
  await retry(
    async () => {
      let out
      try {
        out = await ctx.doc.send(new BatchGetCommand({ RequestItems: { [ctx.table]: { Keys: pending, ConsistentRead: true, ...(spec.projection ? { ProjectionExpression: spec.projection } : {}) } } }))
      } catch (err) {
        throw wrapDynamoError(`${spec.reading} from ${ctx.table}`, err)
      }
      for (const item of out.Responses?.[ctx.table] ?? []) each(item)
      pending = (out.UnprocessedKeys?.[ctx.table]?.Keys as Record<string, unknown>[] | undefined) ?? []
      if (pending.length > 0) throw new Unprocessed(pending.length)
    },
    controlReadPolicy(ctx.config),
    {
      // Only unprocessed keys are this loop's: a throttled request already had the SDK's retries.
      when: (err) => err instanceof Unprocessed,
      exhausted: (err, rounds) =>
        new FloeError(`control table ${ctx.table}: ${(err as Unprocessed).left} ${spec.what} still unprocessed after ${rounds} rounds`, { retryable: true }),
    },
  )
}
