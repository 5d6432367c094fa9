/** FileIO over S3: whole-object reads and writes, ListObjectsV2 paging, DeleteObjects in chunks of 1,000. */
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import { FileNotFoundError } from '../errors.js'
import { isNotFound } from '../retry/index.js'
import type { FileInfo } from './types.js'

/** DeleteObjects takes at most 1,000 keys per request. */
const DELETE_CHUNK = 1_000

export interface S3Location {
  scheme: string
  bucket: string
  key: string
}

export async function s3Read(s3: S3Client, loc: S3Location, path: string): Promise<Uint8Array> {
  try {
    const res = await s3.send(new GetObjectCommand({ Bucket: loc.bucket, Key: loc.key }))
    return await res.Body!.transformToByteArray()
  } catch (err) {
    if (isNotFound(err)) throw new FileNotFoundError(path, { cause: err })
    throw err
  }
}

export async function s3Write(s3: S3Client, loc: S3Location, data: Uint8Array | string, contentType?: string): Promise<void> {
  const body = typeof data === 'string' ? new TextEncoder().encode(data) : data
  await s3.send(new PutObjectCommand({ Bucket: loc.bucket, Key: loc.key, Body: body, ContentLength: body.byteLength, ContentType: contentType }))
}

export async function s3Stat(s3: S3Client, loc: S3Location, path: string): Promise<FileInfo | undefined> {
  try {
    const res = await s3.send(new HeadObjectCommand({ Bucket: loc.bucket, Key: loc.key }))
    return { path, size: res.ContentLength ?? 0, lastModified: res.LastModified ?? new Date(0) }
  } catch (err) {
    if (isNotFound(err)) return undefined
    throw err
  }
}

export async function s3Delete(s3: S3Client, loc: S3Location): Promise<void> {
  // S3 answers 204 for a missing key too.
  await s3.send(new DeleteObjectCommand({ Bucket: loc.bucket, Key: loc.key }))
}

/** Deletes keys of one bucket; fails (naming the first few keys) if S3 reports per-key errors. */
export async function s3DeleteMany(s3: S3Client, bucket: string, keys: string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += DELETE_CHUNK) {
    const chunk = keys.slice(i, i + DELETE_CHUNK)
    const res = await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: chunk.map((Key) => ({ Key })), Quiet: true } }))
    const errors = (res.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey')
    if (errors.length > 0) {
      const shown = errors.slice(0, 3).map((e) => `${e.Key}: ${e.Code} ${e.Message ?? ''}`.trim())
      throw new Error(`DeleteObjects in s3://${bucket} failed for ${errors.length} key(s): ${shown.join('; ')}`)
    }
  }
}

/** Every object under a key prefix, following continuation tokens. */
export async function* s3List(s3: S3Client, loc: S3Location, pageSize?: number): AsyncIterable<FileInfo> {
  let token: string | undefined
  do {
    const res = await s3.send(new ListObjectsV2Command({ Bucket: loc.bucket, Prefix: loc.key, ContinuationToken: token, MaxKeys: pageSize }))
    for (const obj of res.Contents ?? []) {
      if (obj.Key === undefined) continue
      yield { path: `${loc.scheme}://${loc.bucket}/${obj.Key}`, size: obj.Size ?? 0, lastModified: obj.LastModified ?? new Date(0) }
    }
    token = res.IsTruncated ? res.NextContinuationToken : undefined
  } while (token)
}

