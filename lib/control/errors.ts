/** Classifies DynamoDB failures into Floe's error hierarchy (the AWS error classification itself is lib/retry's). */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb'
import { FloeError, ThrottledError } from '../errors.js'
import { errorName, isTransient } from '../retry/index.js'

/** Cancellation reason codes of a TransactionCanceledException, in request item order. */
export function cancellationCodes(err: unknown): string[] | undefined {
  if (err instanceof TransactionCanceledException || errorName(err) === 'TransactionCanceledException') {
    const reasons = (err as TransactionCanceledException).CancellationReasons ?? []
    return reasons.map((r) => r.Code ?? 'None')
  }
  return undefined
}

/** Wrap an unexpected DynamoDB error: throttling/5xx → ThrottledError (retryable), anything else → FloeError. */
export function wrapDynamoError(what: string, err: unknown): FloeError {
  if (err instanceof FloeError) return err
  const message = `${what}: ${errorName(err) || 'Error'}: ${(err as Error)?.message ?? String(err)}`
  return isTransient(err) ? new ThrottledError(message, { cause: err }) : new FloeError(message, { cause: err })
}
