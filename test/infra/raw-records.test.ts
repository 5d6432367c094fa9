/**
 * Template tests for what reaches a person and what guards raw records: the alarm topic the
 * stack creates (and its email subscription), the KMS key of the dead-letter and failed-batch
 * buckets (or the one brought), reads of those buckets restricted to named roles, and the
 * replay function's access.
 */
import { Match } from 'aws-cdk-lib/assertions'
import { describe, expect, it } from 'vitest'
import { MINIMAL, synth, type Synthesized } from './stack-fixture.js'

// oxlint-disable-next-line typescript/no-explicit-any -- CloudFormation properties are untyped JSON
type Props = Record<string, any>
const resources = (s: Synthesized, type: string) => Object.entries(s.template.findResources(type)) as [string, { Properties: Props }][]
const only = (s: Synthesized, type: string) => {
  const all = resources(s, type)
  expect(all).toHaveLength(1)
  return all[0]!
}

describe('alarms reach a person', () => {
  const s = synth()

  it('an SNS topic by default, TLS only, and every alarm notifies it in ALARM and OK', () => {
    const [topicId] = only(s, 'AWS::SNS::Topic')
    const alarms = resources(s, 'AWS::CloudWatch::Alarm')
    expect(alarms.length).toBeGreaterThanOrEqual(8)
    for (const [id, a] of alarms) {
      expect({ id, actions: a.Properties.AlarmActions, ok: a.Properties.OKActions }).toEqual({ id, actions: [{ Ref: topicId }], ok: [{ Ref: topicId }] })
    }
    expect(() =>
      s.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
        PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
      }),
    ).not.toThrow()
    expect(resources(s, 'AWS::SNS::Subscription')).toEqual([])
  })

  it('alarmEmail subscribes an address to it', () => {
    const e = synth({ ...MINIMAL, alarmEmail: 'oncall@example.com' })
    const [topicId] = only(e, 'AWS::SNS::Topic')
    expect(only(e, 'AWS::SNS::Subscription')[1].Properties).toMatchObject({ Protocol: 'email', Endpoint: 'oncall@example.com', TopicArn: { Ref: topicId } })
  })

  it('alarmTopicArn: no topic is created, the alarms notify the given one', () => {
    const arn = 'arn:aws:sns:eu-west-1:111122223333:pager'
    const t = synth({ ...MINIMAL, alarmTopicArn: arn })
    expect(resources(t, 'AWS::SNS::Topic')).toEqual([])
    for (const [, a] of resources(t, 'AWS::CloudWatch::Alarm')) expect(a.Properties.AlarmActions).toEqual([arn])
    expect(() => synth({ ...MINIMAL, alarmTopicArn: arn, alarmEmail: 'a@example.com' })).toThrow(/alarmEmail.*only without alarmTopicArn/)
  })

  it('the FailedBatches alarm fires on any put into the failed-batches bucket', () => {
    const alarm = resources(s, 'AWS::CloudWatch::Alarm').find(([id]) => id.includes('FailedBatches'))![1].Properties
    expect(alarm).toMatchObject({ Namespace: 'AWS/S3', MetricName: 'PutRequests', Threshold: 1, EvaluationPeriods: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' })
    expect(alarm.Dimensions).toEqual(expect.arrayContaining([{ Name: 'FilterId', Value: 'EntireBucket' }, { Name: 'BucketName', Value: { Ref: expect.stringMatching(/^FailedBatches/) } }]))
  })
})

describe('raw records are encrypted and read only by named roles', () => {
  const s = synth()
  const rawBuckets = (x: Synthesized) => resources(x, 'AWS::S3::Bucket').filter(([id]) => id.startsWith('RawRecordsDeadLetters') || id.startsWith('FailedBatches'))

  it('a KMS key by default, rotated; the dead-letter and failed-batch buckets use it (with S3 Bucket Keys)', () => {
    const [keyId, key] = only(s, 'AWS::KMS::Key')
    expect(key.Properties.EnableKeyRotation).toBe(true)
    const raw = rawBuckets(s)
    expect(raw).toHaveLength(2)
    for (const [id, b] of raw) {
      const rule = b.Properties.BucketEncryption.ServerSideEncryptionConfiguration[0]
      expect({ id, rule }).toEqual({ id, rule: { ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: { 'Fn::GetAtt': [keyId, 'Arn'] } }, BucketKeyEnabled: true } })
    }
  })

  it('rawRecordsKeyArn: no key is created, the buckets use the given one', () => {
    const arn = 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab'
    const b = synth({ ...MINIMAL, rawRecordsKeyArn: arn })
    expect(resources(b, 'AWS::KMS::Key')).toEqual([])
    for (const [, bucket] of rawBuckets(b)) expect(bucket.Properties.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.KMSMasterKeyID).toBe(arn)
  })

  it('GetObject is denied to every principal but the reader role and the replay function', () => {
    const roles = resources(s, 'AWS::IAM::Role')
    const reader = roles.find(([, r]) => r.Properties.RoleName === 'floe-floe-raw-records-reader')
    expect(reader).toBeDefined()
    const replayRole = roles.find(([id]) => id.startsWith('ReplayRole'))![0]
    for (const [id] of rawBuckets(s)) {
      expect(() =>
        s.template.hasResourceProperties('AWS::S3::BucketPolicy', {
          Bucket: { Ref: id },
          PolicyDocument: {
            Statement: Match.arrayWith([
              Match.objectLike({
                Sid: 'OnlyNamedRolesRead',
                Effect: 'Deny',
                Principal: { AWS: '*' },
                Action: ['s3:GetObject', 's3:GetObjectVersion'],
                Condition: { ArnNotEquals: { 'aws:PrincipalArn': [{ 'Fn::GetAtt': [reader![0], 'Arn'] }, { 'Fn::GetAtt': [replayRole, 'Arn'] }] } },
              }),
            ]),
          },
        }),
      ).not.toThrow()
    }
    expect(synth({ ...MINIMAL, rawRecordsReaderRoleName: 'data-oncall' }).template.findResources('AWS::IAM::Role', { Properties: { RoleName: 'data-oncall' } })).not.toEqual({})
  })

  it('the writer may only put raw records (and encrypt); it never reads or decrypts them', () => {
    const writer = resources(s, 'AWS::IAM::Policy').find(([id]) => id.startsWith('WriterRoleDefaultPolicy'))![1].Properties.PolicyDocument.Statement as Props[]
    const touching = writer.filter((st) => /RawRecords|FailedBatches|RawRecordsKey/.test(JSON.stringify(st.Resource)))
    const actions = touching.flatMap((st) => [st.Action].flat())
    expect(new Set(actions)).toEqual(new Set(['s3:PutObject', 's3:AbortMultipartUpload', 's3:ListBucket', 'kms:GenerateDataKey']))
  })

  it('the replay function: raw records read/rewrite/delete, decrypt, table writes, control-table Scan, FLOE_FAILED_BATCHES', () => {
    const policy = resources(s, 'AWS::IAM::Policy').find(([id]) => id.startsWith('ReplayRoleDefaultPolicy'))![1].Properties.PolicyDocument.Statement as Props[]
    const actions = new Set(policy.flatMap((st) => [st.Action].flat()))
    for (const a of ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 'kms:Decrypt', 'dynamodb:Scan', 'dynamodb:PutItem', 'dynamodb:UpdateItem']) expect(actions).toContain(a)
    const fn = resources(s, 'AWS::Lambda::Function').find(([id]) => id.startsWith('Replay'))![1].Properties
    expect(fn.Timeout).toBe(900)
    expect(Object.keys(fn.Environment.Variables)).toEqual(expect.arrayContaining(['FLOE_FAILED_BATCHES', 'FLOE_DLQ', 'FLOE_WAREHOUSE', 'FLOE_CONTROL_TABLE']))
  })
})
