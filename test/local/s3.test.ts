import { describe, expect, it } from 'vitest'
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3'
import { createTestBucket, testAws } from '../helpers/aws.js'
import { ensureBucket } from '../../lib/local/init.js'

describe('s3rver', () => {
  it('stores and returns object bytes', async () => {
    const { s3 } = testAws()
    const bucket = await createTestBucket()
    const body = new Uint8Array([80, 65, 82, 49, 0, 255])
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'a/b.parquet', Body: body }))
    const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'a/b.parquet' }))
    expect([...(await res.Body!.transformToByteArray())]).toEqual([...body])
  })

  it('pages ListObjectsV2 with continuation tokens and returns every key once', async () => {
    const { s3 } = testAws()
    const bucket = await createTestBucket()
    const keys = Array.from({ length: 7 }, (_, i) => `p/k${i}`)
    await Promise.all(keys.map((Key) => s3.send(new PutObjectCommand({ Bucket: bucket, Key, Body: Key }))))
    const seen: string[] = []
    let token: string | undefined
    let pages = 0
    do {
      const res = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'p/', MaxKeys: 3, ContinuationToken: token }))
      pages++
      expect(res.Contents!.length).toBeLessThanOrEqual(3)
      seen.push(...res.Contents!.map((o) => o.Key!))
      token = res.IsTruncated ? res.NextContinuationToken : undefined
    } while (token)
    expect(pages).toBe(3)
    expect(seen).toEqual(keys)
  })

  it('ensureBucket creates a bucket once and finds it afterwards', async () => {
    const { s3 } = testAws()
    const bucket = `floe-ensure-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`
    expect(await ensureBucket(s3, bucket)).toBe('created')
    expect(await ensureBucket(s3, bucket)).toBe('exists')
  })
})
