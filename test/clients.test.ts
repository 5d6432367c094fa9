import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb'
import { describe, expect, it } from 'vitest'
import { createClients, endpointsFromEnv } from '../lib/clients.js'
import { createTestControlTable, testAws } from './helpers/aws.js'

describe('endpointsFromEnv', () => {
  it('prefers the service-specific variable over AWS_ENDPOINT_URL and ignores empty values', () => {
    expect(endpointsFromEnv({ AWS_ENDPOINT_URL: 'http://all:4566', AWS_ENDPOINT_URL_S3: 'http://s3:9000', AWS_ENDPOINT_URL_DYNAMODB: ' ' })).toEqual({
      s3: 'http://s3:9000',
      dynamodb: 'http://all:4566',
      glue: 'http://all:4566',
    })
    expect(endpointsFromEnv({})).toEqual({ s3: undefined, dynamodb: undefined, glue: undefined })
  })
})

describe('createClients', () => {
  it('uses explicit endpoints over the environment, path-style S3 for custom endpoints, and a default region', async () => {
    const c = createClients({ env: { AWS_ENDPOINT_URL: 'http://env:4566' }, endpoints: { s3: 'http://127.0.0.1:9999' } })
    expect(c.region).toBe('us-east-1')
    expect(c.endpoints).toEqual({ s3: 'http://127.0.0.1:9999', dynamodb: 'http://env:4566', glue: 'http://env:4566' })
    expect(c.s3.config.forcePathStyle).toBe(true)
    const s3Endpoint = await c.s3.config.endpoint!()
    expect(`${s3Endpoint.protocol}//${s3Endpoint.hostname}:${s3Endpoint.port}`).toBe('http://127.0.0.1:9999')
    expect(await c.s3.config.requestChecksumCalculation()).toBe('WHEN_REQUIRED')
    c.destroy()
  })

  it('talks to real AWS endpoints when nothing is configured', () => {
    const c = createClients({ env: { AWS_REGION: 'eu-west-1' } })
    expect(c.region).toBe('eu-west-1')
    expect(c.endpoints).toEqual({ s3: undefined, dynamodb: undefined, glue: undefined })
    expect(c.s3.config.forcePathStyle).toBe(false)
    c.destroy()
  })

  it('document client drops undefined attributes and keeps 64-bit ids exact as strings', async () => {
    const { doc } = testAws()
    const table = await createTestControlTable()
    await doc.send(new PutCommand({ TableName: table, Item: { pk: 'p', sk: 's', snapshotId: '9223372036854775807', note: undefined } }))
    const { Item } = await doc.send(new GetCommand({ TableName: table, Key: { pk: 'p', sk: 's' }, ConsistentRead: true }))
    expect(Item).toEqual({ pk: 'p', sk: 's', snapshotId: '9223372036854775807' })
  })
})
