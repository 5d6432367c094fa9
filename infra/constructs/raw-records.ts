/**
 * Raw records: dead letters and failed batches hold records as producers sent them (keys,
 * values, headers), so they get their own buckets, encrypted with a KMS key the stack creates
 * (context key `rawRecordsKeyArn`: bring your own), and only named roles may read them:
 * the replay function and a reader role for people (`rawRecordsReaderRoleName`). Every other
 * principal is denied GetObject by the bucket policies, whatever its IAM policies say; the
 * writer and the mapping may only put.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib'
import * as iam from 'aws-cdk-lib/aws-iam'
import * as kms from 'aws-cdk-lib/aws-kms'
import type * as s3 from 'aws-cdk-lib/aws-s3'
import { Construct } from 'constructs'
import { acknowledgeWildcardResources, policyScope } from '../nag.js'
import { secureBucket } from './secure-bucket.js'

export interface RawRecordsProps {
  pipeline: string
  accessLogs: s3.IBucket
  deadLetterPrefix: string
  retentionDays: number
  /** Create the failed-batches bucket (onFailure s3). */
  failedBatches: boolean
  /** An existing key; default: a new one with yearly rotation. */
  keyArn?: string
  /** Name of the role people assume to read raw records. */
  readerRoleName: string
}

export class RawRecords extends Construct {
  readonly key: kms.IKey
  readonly deadLetterBucket: s3.Bucket
  readonly failedBatchesBucket?: s3.Bucket
  readonly deadLetterPrefix: string
  /** The role people assume to read dead letters and failed batches. */
  readonly readerRole: iam.Role
  private readonly readers: iam.IRole[] = []

  constructor(scope: Construct, constructId: string, props: RawRecordsProps) {
    super(scope, constructId)
    this.deadLetterPrefix = props.deadLetterPrefix
    this.key = props.keyArn
      ? kms.Key.fromKeyArn(this, 'Key', props.keyArn)
      : new kms.Key(this, 'Key', {
          description: `Floe ${props.pipeline}: dead letters and failed batches (raw Kafka records)`,
          enableKeyRotation: true,
          removalPolicy: RemovalPolicy.RETAIN,
        })
    const expire = (id: string, prefix?: string): s3.LifecycleRule => ({ id, prefix, expiration: Duration.days(props.retentionDays) })
    this.deadLetterBucket = secureBucket(this, 'DeadLetters', {
      accessLogs: { bucket: props.accessLogs, prefix: 'dead-letters/' },
      lifecycleRules: [expire('expire-dead-letters', `${props.deadLetterPrefix}/`)],
      encryptionKey: this.key,
    })
    if (props.failedBatches) {
      this.failedBatchesBucket = secureBucket(scope, 'FailedBatches', {
        accessLogs: { bucket: props.accessLogs, prefix: 'failed-batches/' },
        lifecycleRules: [expire('expire-failed-batches')],
        requestMetrics: true,
        encryptionKey: this.key,
      })
    }
    this.readerRole = new iam.Role(this, 'Reader', {
      roleName: props.readerRoleName,
      assumedBy: new iam.AccountRootPrincipal(),
      description: `Floe ${props.pipeline}: read dead letters and failed batches (raw Kafka records)`,
    })
    this.grantRead(this.readerRole)
  }

  /** `s3://bucket/prefix` for FLOE_DLQ. */
  get deadLetterUrl(): string {
    return `s3://${this.deadLetterBucket.bucketName}/${this.deadLetterPrefix}`
  }

  get failedBatchesUrl(): string | undefined {
    return this.failedBatchesBucket && `s3://${this.failedBatchesBucket.bucketName}`
  }

  /** The writer: put dead letters (deterministic keys: a retry overwrites), encrypting with the key. */
  grantDeadLetterWrite(grantee: iam.IGrantable): void {
    const objects = this.deadLetterBucket.arnForObjects(`${this.deadLetterPrefix}/*`)
    grantee.grantPrincipal.addToPrincipalPolicy(new iam.PolicyStatement({ sid: 'DeadLetterWrite', actions: ['s3:PutObject', 's3:AbortMultipartUpload'], resources: [objects] }))
    acknowledgeWildcardResources(policyScope(grantee), [objects], 'Dead-letter keys are derived from topic, partition and offset at run time; write-only under the dead-letter prefix.')
    // SSE-KMS puts (ours and, for the on-failure destination, the mapping's on the writer's role).
    this.key.grant(grantee, 'kms:GenerateDataKey')
  }

  /** Read (and for replay: rewrite and delete) raw records; only roles granted here may read. */
  grantRead(role: iam.IRole, opts: { replay?: boolean } = {}): void {
    this.readers.push(role)
    const buckets = [this.deadLetterBucket, ...(this.failedBatchesBucket ? [this.failedBatchesBucket] : [])]
    const objects = buckets.map((b) => b.arnForObjects('*'))
    role.addToPrincipalPolicy(new iam.PolicyStatement({ sid: opts.replay ? 'RawRecordsReplay' : 'RawRecordsRead', actions: ['s3:GetObject', ...(opts.replay ? ['s3:PutObject', 's3:DeleteObject'] : [])], resources: objects }))
    role.addToPrincipalPolicy(new iam.PolicyStatement({ sid: opts.replay ? 'RawRecordsReplayList' : 'RawRecordsList', actions: ['s3:ListBucket'], resources: buckets.map((b) => b.bucketArn) }))
    acknowledgeWildcardResources(policyScope(role), objects, 'Dead letters and failed batches are named at run time (by offset; by the mapping); these buckets hold nothing else.')
    this.key.grant(role, 'kms:Decrypt', ...(opts.replay ? ['kms:GenerateDataKey'] : []))
  }

  /** Deny GetObject to every principal but the readers (call once, after the last grantRead). */
  restrictReads(): void {
    const arns = this.readers.map((r) => r.roleArn)
    for (const bucket of [this.deadLetterBucket, ...(this.failedBatchesBucket ? [this.failedBatchesBucket] : [])]) {
      bucket.addToResourcePolicy(
        new iam.PolicyStatement({
          sid: 'OnlyNamedRolesRead',
          effect: iam.Effect.DENY,
          principals: [new iam.AnyPrincipal()],
          actions: ['s3:GetObject', 's3:GetObjectVersion'],
          resources: [bucket.arnForObjects('*')],
          conditions: { ArnNotEquals: { 'aws:PrincipalArn': arns } },
        }),
      )
    }
  }
}
