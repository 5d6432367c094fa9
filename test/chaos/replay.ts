/**
 * The replay side of the chaos harness: the mapping's S3 on-failure destination (batches it gave
 * up on land in FLOE_FAILED_BATCHES in the invocation-record shape AWS documents), and an
 * independent reading of what was parked there, for the judge.
 */
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import { onFailureRecord } from '../../lib/local/esm.js'
import type { KafkaEvent } from '../../lib/local/kafka-log.js'

export const failedBatchesPrefix = (pipeline: string) => `failed-batches/${pipeline}/`

/** What the mapping's S3 destination does when it gives up on a batch. */
export async function parkFailedBatch(s3: S3Client, bucket: string, pipeline: string, event: KafkaEvent, attempts: number): Promise<void> {
  const key = `${failedBatchesPrefix(pipeline)}aws/lambda/chaos/${new Date().toISOString()}-${crypto.randomUUID()}`
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: JSON.stringify(onFailureRecord(event, attempts)), ContentType: 'application/json' }))
}

/** "topic-partition@offset" of every record parked in the failed-batches store (plain JSON, no Floe code). */
export async function parkedRecordIds(s3: S3Client, bucket: string, pipeline: string): Promise<Set<string>> {
  const ids = new Set<string>()
  let token: string | undefined
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: failedBatchesPrefix(pipeline), ContinuationToken: token }))
    for (const o of page.Contents ?? []) {
      const body = await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: o.Key! }))).Body!.transformToString()
      const doc = JSON.parse(body) as { payload: { records: Record<string, { topic: string; partition: number; offset: number | string }[]> } }
      for (const list of Object.values(doc.payload.records)) for (const r of list) ids.add(`${r.topic}-${r.partition}@${r.offset}`)
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined
  } while (token)
  return ids
}
