/**
 * AWS SDK errors classified in one place: the error's name, the HTTP status the service
 * answered, the SDK's attempt count (`$metadata.attempts`), throttling, transient failures and
 * "definitely rejected". The catalogs (whether a failed swap may have landed), the control table
 * (throttling → ThrottledError) and FileIO (not found) all ask here.
 */

interface SdkErrorShape {
  name?: string
  $metadata?: { httpStatusCode?: number; attempts?: number }
  $retryable?: { throttling?: boolean }
}

const shape = (err: unknown): SdkErrorShape => (typeof err === 'object' && err !== null ? (err as SdkErrorShape) : {})

/** The error's `name` (the SDK's exception name, e.g. `ConditionalCheckFailedException`), '' if none. */
export const errorName = (err: unknown): string => shape(err).name ?? ''

/** HTTP status of a failed AWS request, if the service answered. */
export const statusOf = (err: unknown): number | undefined => shape(err).$metadata?.httpStatusCode

/** The SDK's attempt count for a failed request (more than one means an earlier attempt may have landed). */
export const attemptsOf = (err: unknown): number => shape(err).$metadata?.attempts ?? 1

/** Names under which AWS services (DynamoDB, Glue, S3, STS…) throttle. */
const THROTTLE_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'Throttling',
  'ThrottledException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'TooManyRequestsException',
  'SlowDown',
  'TransactionInProgressException',
])

/** The service throttled the request (by name, or as the SDK's retry strategy marked it). */
export function isThrottle(err: unknown): boolean {
  const e = shape(err)
  return THROTTLE_NAMES.has(e.name ?? '') || /Throttl|TooManyRequests/.test(e.name ?? '') || e.$retryable?.throttling === true
}

const TRANSIENT_NAMES = new Set(['InternalServerError', 'InternalFailure', 'ServiceUnavailable', 'ServiceUnavailableException', 'InternalServiceException'])

/** Throttling, a 5xx, or an error the SDK itself would retry: the same request may succeed later. */
export function isTransient(err: unknown): boolean {
  const e = shape(err)
  const status = e.$metadata?.httpStatusCode
  return isThrottle(err) || TRANSIENT_NAMES.has(e.name ?? '') || (status !== undefined && status >= 500) || e.$retryable !== undefined
}

/**
 * Whether a failed request was definitely not applied: the service answered with a 4xx
 * rejection (not a throttle) on the only attempt. Timeouts, network errors, 5xx and retried
 * requests may have been applied.
 */
export function definitelyRejected(err: unknown): boolean {
  const status = statusOf(err)
  return attemptsOf(err) <= 1 && status !== undefined && status >= 400 && status < 500 && !isThrottle(err)
}

/** A read of something that does not exist (S3 NoSuchKey / NotFound, or a 404). */
export function isNotFound(err: unknown): boolean {
  const name = errorName(err)
  return name === 'NoSuchKey' || name === 'NotFound' || statusOf(err) === 404
}

/** A DynamoDB condition expression failed (ConditionalCheckFailedException). */
export const isConditionFailed = (err: unknown): boolean => errorName(err) === 'ConditionalCheckFailedException'
