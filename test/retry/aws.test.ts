import { ConditionalCheckFailedException, InternalServerError, PutItemCommand, ProvisionedThroughputExceededException, TransactionCanceledException } from '@aws-sdk/client-dynamodb'
import { ConcurrentModificationException, EntityNotFoundException } from '@aws-sdk/client-glue'
import { GetObjectCommand, NoSuchKey } from '@aws-sdk/client-s3'
import { describe, expect, it } from 'vitest'
import { cancellationCodes, wrapDynamoError } from '../../lib/control/errors.js'
import { FloeError, ThrottledError } from '../../lib/errors.js'
import { attemptsOf, definitelyRejected, errorName, isConditionFailed, isNotFound, isThrottle, isTransient, statusOf } from '../../lib/retry/index.js'
import { createTestBucket, createTestControlTable, testAws } from '../helpers/aws.js'

const meta = (httpStatusCode: number | undefined, attempts: number) => ({ httpStatusCode, attempts, totalRetryDelay: 0 })

describe('AWS error classification (the SDK exception classes themselves)', () => {
  it('reads the name, the HTTP status and the SDK attempt count', () => {
    const err = new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: meta(400, 2) })
    expect([errorName(err), statusOf(err), attemptsOf(err)]).toEqual(['ConditionalCheckFailedException', 400, 2])
    expect(isConditionFailed(err)).toBe(true)
    // No $metadata (a network error before any answer): one attempt, no status.
    expect([errorName(new Error('socket hang up')), statusOf(new Error('x')), attemptsOf(new Error('x'))]).toEqual(['Error', undefined, 1])
    expect([errorName(undefined), statusOf(null), attemptsOf('text')]).toEqual(['', undefined, 1])
  })

  it('a 4xx on the only attempt is definitely rejected; retried, throttled, 5xx or unanswered ones may have landed', () => {
    expect(definitelyRejected(new ConditionalCheckFailedException({ message: 'no', $metadata: meta(400, 1) }))).toBe(true)
    expect(definitelyRejected(new ConcurrentModificationException({ message: 'no', $metadata: meta(400, 1) }))).toBe(true)
    // A second attempt: the first may have been applied before its answer was lost.
    expect(definitelyRejected(new ConditionalCheckFailedException({ message: 'no', $metadata: meta(400, 2) }))).toBe(false)
    expect(definitelyRejected(new ProvisionedThroughputExceededException({ message: 'slow', $metadata: meta(400, 1) }))).toBe(false)
    expect(definitelyRejected(new InternalServerError({ message: 'oops', $metadata: meta(500, 1) }))).toBe(false)
    expect(definitelyRejected(new Error('timeout'))).toBe(false)
  })

  it('throttling and transient failures are told apart from rejections', () => {
    const throttled = new ProvisionedThroughputExceededException({ message: 'slow', $metadata: meta(400, 3) })
    expect([isThrottle(throttled), isTransient(throttled)]).toEqual([true, true])
    const ise = new InternalServerError({ message: 'oops', $metadata: meta(500, 3) })
    expect([isThrottle(ise), isTransient(ise)]).toEqual([false, true])
    const conflict = new ConcurrentModificationException({ message: 'moved', $metadata: meta(400, 1) })
    expect([isThrottle(conflict), isTransient(conflict)]).toEqual([false, false])
    expect(isThrottle(Object.assign(new Error('x'), { name: 'SlowDown' }))).toBe(true)
    expect(isThrottle(Object.assign(new Error('x'), { $retryable: { throttling: true } }))).toBe(true)
  })

  it('not found: S3 NoSuchKey, or any 404', () => {
    expect(isNotFound(new NoSuchKey({ message: 'gone', $metadata: meta(404, 1) }))).toBe(true)
    expect(isNotFound(new EntityNotFoundException({ message: 'no table', $metadata: meta(400, 1) }))).toBe(false)
  })

  it('the control table wraps throttling as ThrottledError (retryable), anything else as a plain FloeError', () => {
    const throttled = wrapDynamoError('reading checkpoints', new ProvisionedThroughputExceededException({ message: 'slow', $metadata: meta(400, 3) }))
    expect(throttled).toBeInstanceOf(ThrottledError)
    expect(throttled.message).toBe('reading checkpoints: ProvisionedThroughputExceededException: slow')
    const other = wrapDynamoError('reading checkpoints', new ConditionalCheckFailedException({ message: 'no', $metadata: meta(400, 1) }))
    expect(other.constructor).toBe(FloeError)
    expect(other.retryable).toBe(false)
    const cancelled = new TransactionCanceledException({ message: 'cancelled', $metadata: meta(400, 1), CancellationReasons: [{ Code: 'None' }, { Code: 'ConditionalCheckFailed' }] })
    expect(cancellationCodes(cancelled)).toEqual(['None', 'ConditionalCheckFailed'])
  })

  it('classifies what the local servers really answer', async () => {
    const { ddb, s3 } = testAws()
    const table = await createTestControlTable()
    const put = new PutItemCommand({ TableName: table, Item: { pk: { S: 'k' }, sk: { S: 's' } }, ConditionExpression: 'attribute_exists(pk)' })
    const failed = await ddb.send(put).catch((e: unknown) => e)
    expect(isConditionFailed(failed)).toBe(true)
    expect(definitelyRejected(failed)).toBe(true)
    expect(attemptsOf(failed)).toBe(1)
    const bucket = await createTestBucket()
    const missing = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'nope' })).catch((e: unknown) => e)
    expect(isNotFound(missing)).toBe(true)
    expect(isTransient(missing)).toBe(false)
  })
})
