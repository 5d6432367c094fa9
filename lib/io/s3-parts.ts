/**
 * Ranged reads and part-wise writes on S3: GetObject with a Range header, and a multipart upload
 * whose parts are sent as soon as `partBytes` (at least S3's 5 MiB minimum) are buffered, so a
 * large file is never whole in memory. A file smaller than one part is a single PutObject.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import { FileNotFoundError } from '../errors.js'
import { isNotFound } from '../retry/index.js'
import type { S3Location } from './s3.js'
import type { FileSink } from './types.js'

/** S3's smallest part but the last. */
export const MIN_PART_BYTES = 5 * 1024 * 1024

export async function s3ReadRange(s3: S3Client, loc: S3Location, path: string, start: number, end: number): Promise<Uint8Array> {
  if (end <= start) return new Uint8Array(0)
  try {
    const res = await s3.send(new GetObjectCommand({ Bucket: loc.bucket, Key: loc.key, Range: `bytes=${start}-${end - 1}` }))
    return await res.Body!.transformToByteArray()
  } catch (err) {
    if (isNotFound(err)) throw new FileNotFoundError(path, { cause: err })
    throw err
  }
}

export function s3OpenWrite(s3: S3Client, loc: S3Location, partBytes = MIN_PART_BYTES, contentType?: string): FileSink {
  const size = Math.max(MIN_PART_BYTES, partBytes)
  let pending: Uint8Array[] = []
  let pendingBytes = 0
  let uploadId: string | undefined
  let total = 0
  const parts: { ETag: string; PartNumber: number }[] = []
  const take = (): Uint8Array => {
    const body = Buffer.concat(pending)
    pending = []
    pendingBytes = 0
    return body
  }
  const upload = async (body: Uint8Array) => {
    uploadId ??= (await s3.send(new CreateMultipartUploadCommand({ Bucket: loc.bucket, Key: loc.key, ContentType: contentType }))).UploadId!
    const PartNumber = parts.length + 1
    const res = await s3.send(new UploadPartCommand({ Bucket: loc.bucket, Key: loc.key, UploadId: uploadId, PartNumber, Body: body, ContentLength: body.byteLength }))
    parts.push({ ETag: res.ETag!, PartNumber })
  }
  return {
    get buffered() {
      return pendingBytes
    },
    async write(bytes) {
      pending.push(bytes)
      pendingBytes += bytes.byteLength
      total += bytes.byteLength
      if (pendingBytes >= size) await upload(take())
    },
    async close() {
      if (uploadId === undefined) {
        const body = take()
        await s3.send(new PutObjectCommand({ Bucket: loc.bucket, Key: loc.key, Body: body, ContentLength: body.byteLength, ContentType: contentType }))
        return total
      }
      if (pendingBytes > 0) await upload(take())
      await s3.send(new CompleteMultipartUploadCommand({ Bucket: loc.bucket, Key: loc.key, UploadId: uploadId, MultipartUpload: { Parts: parts } }))
      return total
    },
    async abort() {
      pending = []
      pendingBytes = 0
      if (uploadId !== undefined) await s3.send(new AbortMultipartUploadCommand({ Bucket: loc.bucket, Key: loc.key, UploadId: uploadId })).catch(() => undefined)
    },
  }
}
