/**
 * S3 buckets with the settings every Floe bucket shares: SSE-S3, TLS-only bucket policy, public
 * access blocked, object ownership enforced (no ACLs), versioning off, retained on stack delete.
 */
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib'
import type * as kms from 'aws-cdk-lib/aws-kms'
import * as s3 from 'aws-cdk-lib/aws-s3'
import type { Construct } from 'constructs'

export interface SecureBucketProps {
  /** Where server access logs go; omit only for the access-log bucket itself. */
  accessLogs?: { bucket: s3.IBucket; prefix: string }
  lifecycleRules?: s3.LifecycleRule[]
  /** CloudWatch request metrics for the whole bucket (filter id `EntireBucket`), e.g. to alarm on puts. */
  requestMetrics?: boolean
  /** SSE-KMS with this key (S3 Bucket Keys on: one KMS request per bucket key, not per object) instead of SSE-S3. */
  encryptionKey?: kms.IKey
}

/** FilterId dimension of a bucket's whole-bucket request metrics. */
export const ENTIRE_BUCKET = 'EntireBucket'

/** What every Floe bucket has: encrypted, TLS 1.2+ only, private, owner-enforced, unversioned, retained. */
const LOCKED_DOWN = {
  encryption: s3.BucketEncryption.S3_MANAGED,
  enforceSSL: true,
  minimumTLSVersion: 1.2,
  blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
  // Also what the S3 logging service needs to deliver access logs through a bucket policy.
  objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
  // Iceberg files are immutable and deleted on purpose (expire snapshots, orphan cleanup):
  // versioning would keep every deleted data file and bill for it forever.
  versioned: false,
  removalPolicy: RemovalPolicy.RETAIN,
} satisfies s3.BucketProps

export function secureBucket(scope: Construct, id: string, props: SecureBucketProps): s3.Bucket {
  const bucket = new s3.Bucket(scope, id, {
    ...LOCKED_DOWN,
    serverAccessLogsBucket: props.accessLogs?.bucket,
    serverAccessLogsPrefix: props.accessLogs?.prefix,
    lifecycleRules: [{ id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) }, ...(props.lifecycleRules ?? [])],
    metrics: props.requestMetrics ? [{ id: ENTIRE_BUCKET }] : undefined,
    ...(props.encryptionKey ? { encryption: s3.BucketEncryption.KMS, encryptionKey: props.encryptionKey, bucketKeyEnabled: true } : {}),
  })
  return bucket
}

/** The bucket that receives the other buckets' server access logs. */
export function accessLogBucket(scope: Construct, id: string, retentionDays: number): s3.Bucket {
  const bucket = new s3.Bucket(scope, id, {
    ...LOCKED_DOWN,
    lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(retentionDays) }],
  })
  Validations.of(bucket).acknowledge({
    id: 'AwsSolutions-S1',
    reason: 'This is the access-log bucket; logging its own access would log the log deliveries, recursively.',
  })
  return bucket
}
