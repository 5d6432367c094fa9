/** Classifies DynamoDB failures into Floe's error hierarchy. */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb'
import { FloeError, ThrottledError } from '../errors.js'

const THROTTLE_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TransactionInProgressException',
  'InternalServerError',
  'ServiceUnavailable',
])

/** Cancellation reason codes of a TransactionCanceledException, in request item order. */
export function cancellationCodes(err: unknown): string[] | undefined {
  if (err instanceof TransactionCanceledException || (err as { name?: string })?.name === 'TransactionCanceledException') {
    const reasons = (err as TransactionCanceledException).CancellationReasons ?? []
    return reasons.map((r) => r.Code ?? 'None')
  }
  return undefined
}

export function isThrottle(err: unknown): boolean {
  const name = (err as { name?: string })?.name ?? ''
  return THROTTLE_NAMES.has(name) || (err as { $retryable?: unknown })?.$retryable !== undefined
}

/** Wrap an unexpected DynamoDB error: throttling/5xx → ThrottledError (retryable), anything else → FloeError. */
export function wrapDynamoError(what: string, err: unknown): FloeError {
  if (err instanceof FloeError) return err
  const name = (err as { name?: string })?.name ?? 'Error'
  const message = `${what}: ${name}: ${(err as Error)?.message ?? String(err)}`
  return isThrottle(err) ? new ThrottledError(message, { cause: err }) : new FloeError(message, { cause: err })
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
