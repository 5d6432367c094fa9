/** Paging of control-table Queries and Scans: one loop over LastEvaluatedKey instead of one per caller. */
import type { QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb'
import { wrapDynamoError } from './errors.js'
import type { ControlContext } from './types.js'

export interface Page {
  Items?: Record<string, unknown>[]
  Count?: number
  LastEvaluatedKey?: Record<string, unknown>
}

/**
 * Every page of the Query or Scan that `command` builds from a start key; a failed request is
 * wrapped with `what` (throttling stays retryable).
 */
export async function* pages(ctx: ControlContext, what: string, command: (start: Record<string, unknown> | undefined) => QueryCommand | ScanCommand): AsyncGenerator<Page> {
  let start: Record<string, unknown> | undefined
  do {
    let page: Page
    try {
      page = await ctx.doc.send(command(start) as QueryCommand)
    } catch (err) {
      throw wrapDynamoError(what, err)
    }
    yield page
    start = page.LastEvaluatedKey
  } while (start)
}
