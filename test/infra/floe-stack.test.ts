import { Match } from 'aws-cdk-lib/assertions'
import { AwsSolutionsChecks } from 'cdk-nag'
import { describe, expect, it } from 'vitest'
import { VPC_ACCESS_ACTIONS } from '../../infra/constructs/kafka-source.js'
import { CATALOG_TABLE } from '../../lib/catalog/table-def.js'
import { loadConfig } from '../../lib/config.js'
import { CONTROL_TABLE } from '../../lib/control/table-def.js'
import { MINIMAL, MSK_ARN, cdkJsonContext, resolveIntrinsics, synth, type Synthesized } from './stack-fixture.js'

const minimal = synth()
// oxlint-disable-next-line typescript/no-explicit-any -- CloudFormation properties are untyped JSON
type Props = Record<string, any>
const resources = (s: Synthesized, type: string) => Object.entries(s.template.findResources(type)) as [string, { Properties: Props }][]
/** `Template.hasResourceProperties` as an expectation (it throws with a diff when nothing matches). */
const has = (s: Synthesized, type: string, props: unknown) => () => s.template.hasResourceProperties(type, props)
const fnEnv = (s: Synthesized, logicalPrefix: string) => {
  const found = resources(s, 'AWS::Lambda::Function').find(([id]) => id.startsWith(logicalPrefix))
  if (!found) throw new Error(`no function ${logicalPrefix}`)
  return found[1].Properties.Environment.Variables as Record<string, unknown>
}

/** Every IAM policy statement in the template, with where it came from. */
function statements(s: Synthesized): { where: string; Action: string | string[]; Resource: unknown; Effect: string }[] {
  const out: { where: string; Action: string | string[]; Resource: unknown; Effect: string }[] = []
  for (const [id, r] of resources(s, 'AWS::IAM::Policy')) for (const st of r.Properties.PolicyDocument.Statement) out.push({ where: id, ...st })
  for (const [id, r] of resources(s, 'AWS::IAM::Role')) {
    for (const p of r.Properties.Policies ?? []) for (const st of p.PolicyDocument.Statement) out.push({ where: `${id}/${p.PolicyName}`, ...st })
  }
  for (const [id, r] of resources(s, 'AWS::IAM::ManagedPolicy')) for (const st of r.Properties.PolicyDocument.Statement) out.push({ where: id, ...st })
  return out
}
const list = <T>(v: T | T[]) => (Array.isArray(v) ? v : [v])

describe('FloeStack', () => {
  it('one Kafka event source mapping per topic with the configured batch size, window, position and group', () => {
    const s = synth({ ...MINIMAL, batchSize: 2_500, maxBatchingWindowSeconds: 120, startingPosition: 'LATEST', consumerGroupId: 'ingest' })
    expect(resources(s, 'AWS::Lambda::EventSourceMapping')).toHaveLength(2)
    for (const topic of ['orders', 'clicks']) {
      expect(has(s, 'AWS::Lambda::EventSourceMapping', {
        EventSourceArn: MSK_ARN,
        Topics: [topic],
        BatchSize: 2_500,
        MaximumBatchingWindowInSeconds: 120,
        StartingPosition: 'LATEST',
        AmazonManagedKafkaEventSourceConfig: { ConsumerGroupId: `ingest.${topic}` },
        FunctionName: { Ref: Match.stringLikeRegexp('^Writer') },
        DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [Match.stringLikeRegexp('^FailedBatches'), 'Arn'] } } },
      })).not.toThrow()
    }
  })

  it('defaults: 10,000 records and a 30 s batching window', () => {
    expect(has(minimal, 'AWS::Lambda::EventSourceMapping', { BatchSize: 10_000, MaximumBatchingWindowInSeconds: 30, StartingPosition: 'TRIM_HORIZON' })).not.toThrow()
  })

  it('self-managed Kafka: bootstrap servers, SASL secret, subnets and security groups', () => {
    const secret = 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:kafka-AbCdEf'
    const s = synth({ bootstrapServers: ['b1.example.com:9096', 'b2.example.com:9096'], kafkaSecretArn: secret, topics: ['t1'], subnetIds: ['subnet-0a1', 'subnet-0b2'], securityGroupIds: ['sg-0c3'] })
    expect(has(s, 'AWS::Lambda::EventSourceMapping', {
      SelfManagedEventSource: { Endpoints: { KafkaBootstrapServers: ['b1.example.com:9096', 'b2.example.com:9096'] } },
      SelfManagedKafkaEventSourceConfig: { ConsumerGroupId: 'floe-floe' },
      Topics: ['t1'],
      SourceAccessConfigurations: [
        { Type: 'SASL_SCRAM_512_AUTH', URI: secret },
        { Type: 'VPC_SUBNET', URI: 'subnet:subnet-0a1' },
        { Type: 'VPC_SUBNET', URI: 'subnet:subnet-0b2' },
        { Type: 'VPC_SECURITY_GROUP', URI: 'security_group:sg-0c3' },
      ],
    })).not.toThrow()
    const secretReads = statements(s).filter((st) => list(st.Action).includes('secretsmanager:GetSecretValue'))
    expect(secretReads.map((st) => st.Resource)).toEqual([secret])
  })

  it('onFailure none: no destination, no failed-batches bucket or alarm (records wait in Kafka)', () => {
    const s = synth({ ...MINIMAL, onFailure: 'none' })
    const mappings = resources(s, 'AWS::Lambda::EventSourceMapping').map(([, r]) => r.Properties)
    expect(mappings.map((m) => m.DestinationConfig)).toEqual([undefined, undefined])
    expect(resources(s, 'AWS::S3::Bucket')).toHaveLength(3) // warehouse, dead letters, access logs
    expect(resources(s, 'AWS::CloudWatch::Alarm').map(([, r]) => r.Properties.MetricName)).not.toContain('PutRequests')
    expect(statements(s).filter((st) => JSON.stringify(st.Resource).includes('FailedBatches'))).toEqual([])
  })

  it('MSK with SASL/SCRAM: the secret and its customer managed key, decrypt only through Secrets Manager', () => {
    const secret = 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:AmazonMSK_floe-AbCdEf'
    const key = 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab'
    const s = synth({ ...MINIMAL, kafkaAuth: 'sasl-scram-512', kafkaSecretArn: secret, kafkaSecretKeyArn: key })
    expect(has(s, 'AWS::Lambda::EventSourceMapping', { SourceAccessConfigurations: [{ Type: 'SASL_SCRAM_512_AUTH', URI: secret }] })).not.toThrow()
    const kms = statements(s).filter((st) => list(st.Action).some((a) => a.startsWith('kms:')) && JSON.stringify(st.Resource).includes(key))
    expect(kms).toMatchObject([{ Action: 'kms:Decrypt', Resource: key, Condition: { StringEquals: { 'kms:ViaService': 'secretsmanager.eu-west-1.amazonaws.com' } } }])
    expect(statements(s).filter((st) => list(st.Action).some((a) => a.startsWith('kafka-cluster:')))).toEqual([])
  })

  it('the committer runs on an EventBridge Scheduler schedule, every minute by default', () => {
    expect(has(minimal, 'AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(1 minute)',
      State: 'ENABLED',
      Target: { Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^Committer'), 'Arn'] }, RetryPolicy: { MaximumRetryAttempts: 0 } },
    })).not.toThrow()
    expect(has(synth({ ...MINIMAL, commitSchedule: 'rate(5 minutes)' }), 'AWS::Scheduler::Schedule', { ScheduleExpression: 'rate(5 minutes)' })).not.toThrow()
  })

  it('the maintenance function runs compaction, expiry and orphan cleanup on its own schedule, hourly by default (context key maintenanceSchedule)', () => {
    expect(has(minimal, 'AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(1 hour)',
      State: 'ENABLED',
      Target: { Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^Maintenance'), 'Arn'] } },
    })).not.toThrow()
    expect(has(minimal, 'AWS::Lambda::Function', { Handler: 'index.handler', Timeout: 900, Description: Match.stringLikeRegexp('orphan') })).not.toThrow()
    expect(has(synth({ ...MINIMAL }, { maintenanceSchedule: 'cron(0 3 * * ? *)' }), 'AWS::Scheduler::Schedule', { ScheduleExpression: 'cron(0 3 * * ? *)' })).not.toThrow()
    expect(() => synth({ ...MINIMAL, maintenanceSchedule: 'daily' })).toThrow(/maintenanceSchedule/)
  })

  it('alarms on writer errors, consumer lag, pending backlog, commit failures, committer errors, dead letters, failed batches and maintenance', () => {
    const alarms = resources(minimal, 'AWS::CloudWatch::Alarm').map(([, r]) => r.Properties)
    const byMetric = new Map(alarms.map((a) => [`${a.Namespace}/${a.MetricName}`, a]))
    expect([...byMetric.keys()].sort()).toEqual(['AWS/Lambda/Errors', 'AWS/Lambda/OffsetLag', 'AWS/S3/PutRequests', 'Floe/CommitFailures', 'Floe/DeadLetters', 'Floe/MaintenanceFailures', 'Floe/PendingBatches'].sort())
    expect(alarms).toHaveLength(9) // Errors three times: writer, committer and maintenance
    expect(byMetric.get('Floe/MaintenanceFailures')).toMatchObject({ Threshold: 1, Period: 3600, Dimensions: [{ Name: 'service', Value: 'floe' }] })
    // A batch the mapping gave up on lands in the failed-batches bucket, whose request metrics are on.
    expect(byMetric.get('AWS/S3/PutRequests')).toMatchObject({ Threshold: 1, Dimensions: expect.arrayContaining([{ Name: 'FilterId', Value: 'EntireBucket' }, { Name: 'BucketName', Value: { Ref: expect.stringMatching(/^FailedBatches/) } }]) })
    expect(has(minimal, 'AWS::S3::Bucket', { MetricsConfigurations: [{ Id: 'EntireBucket' }] })).not.toThrow()
    expect(byMetric.get('AWS/Lambda/OffsetLag')).toMatchObject({ Statistic: 'Maximum', Threshold: 100_000, Dimensions: [{ Name: 'FunctionName', Value: { Ref: expect.stringMatching(/^Writer/) } }] })
    // Powertools EMF metrics carry the `service` dimension = POWERTOOLS_SERVICE_NAME = pipeline.
    expect(byMetric.get('Floe/PendingBatches')).toMatchObject({ Threshold: 800, Dimensions: [{ Name: 'service', Value: 'floe' }] })
    expect(fnEnv(minimal, 'Committer').POWERTOOLS_SERVICE_NAME).toBe('floe')
    expect(resources(minimal, 'AWS::CloudWatch::Dashboard')).toHaveLength(1)
  })

  it('the pending-backlog alarm follows FLOE_MAX_PENDING_BATCHES', () => {
    const s = synth({ ...MINIMAL, settings: { FLOE_MAX_PENDING_BATCHES: 100 } })
    expect(has(s, 'AWS::CloudWatch::Alarm', { MetricName: 'PendingBatches', Threshold: 80 })).not.toThrow()
    expect(fnEnv(s, 'Writer').FLOE_MAX_PENDING_BATCHES).toBe('100')
  })

  it('every bucket denies requests without TLS, blocks public access and encrypts', () => {
    const buckets = resources(minimal, 'AWS::S3::Bucket')
    expect(buckets.length).toBe(4) // warehouse, dead letters, failed batches, access logs
    for (const [id, b] of buckets) {
      expect({ id, block: b.Properties.PublicAccessBlockConfiguration }).toEqual({ id, block: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true } })
      // Raw records (dead letters, failed batches) under the stack's KMS key; the rest SSE-S3.
      const raw = id.startsWith('RawRecords') || id.startsWith('FailedBatches')
      expect({ id, sse: b.Properties.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.SSEAlgorithm }).toEqual({ id, sse: raw ? 'aws:kms' : 'AES256' })
      expect({ id, versioning: b.Properties.VersioningConfiguration }).toEqual({ id, versioning: undefined })
      expect(
        has(minimal, 'AWS::S3::BucketPolicy', {
          Bucket: { Ref: id },
          PolicyDocument: {
            Statement: Match.arrayWith([
              Match.objectLike({ Effect: 'Deny', Action: 's3:*', Principal: { AWS: '*' }, Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
            ]),
          },
        }),
      ).not.toThrow()
    }
  })

  it('dead letters expire under their prefix; table files do not', () => {
    expect(has(minimal, 'AWS::S3::Bucket', {
      LifecycleConfiguration: { Rules: Match.arrayWith([Match.objectLike({ Id: 'expire-dead-letters', Prefix: 'dead-letters/', ExpirationInDays: 30, Status: 'Enabled' })]) },
    })).not.toThrow()
    const rules = resources(minimal, 'AWS::S3::Bucket').flatMap(([, b]) => b.Properties.LifecycleConfiguration?.Rules ?? [])
    expect(rules.filter((r: { ExpirationInDays?: number; Prefix?: string }) => r.ExpirationInDays !== undefined && (r.Prefix ?? '').startsWith('warehouse'))).toEqual([])
  })

  it('an existing warehouse bucket: not created, grants scoped to its prefixes', () => {
    const s = synth({ ...MINIMAL, warehouseBucketName: 'corp-lake' })
    expect(resources(s, 'AWS::S3::Bucket')).toHaveLength(3) // dead letters, failed batches, access logs
    const s3 = statements(s).filter((st) => JSON.stringify(st.Resource).includes('corp-lake'))
    const scoped = s3.flatMap((st) => list(st.Resource).map((r) => JSON.stringify(r).replace(/.*:::corp-lake/, 'corp-lake').replace(/"\]\]\}$/, '')))
    expect(new Set(scoped)).toEqual(
      // Maintenance now compacts and expires (the committer's access); dead letters have their own bucket.
      new Set(['corp-lake/warehouse/*', 'corp-lake']),
    )
    expect(resolveIntrinsics(fnEnv(s, 'Writer').FLOE_WAREHOUSE)).toBe('s3://corp-lake/warehouse')
    expect(new AwsSolutionsChecks().validateScope(s.stack).violations).toEqual([])
  })

  it('the control table has the CONTROL_TABLE keys, index and TTL, on demand with PITR', () => {
    expect(has(minimal, 'AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: CONTROL_TABLE.partitionKey.name, KeyType: 'HASH' },
        { AttributeName: CONTROL_TABLE.sortKey.name, KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: CONTROL_TABLE.ttlAttribute, Enabled: true },
      GlobalSecondaryIndexes: [
        Match.objectLike({
          IndexName: CONTROL_TABLE.indexes[0].name,
          KeySchema: [
            { AttributeName: CONTROL_TABLE.indexes[0].partitionKey.name, KeyType: 'HASH' },
            { AttributeName: CONTROL_TABLE.indexes[0].sortKey.name, KeyType: 'RANGE' },
          ],
        }),
      ],
    })).not.toThrow()
  })

  it('the catalog table is in Iceberg Java DynamoDbCatalog layout (CATALOG_TABLE)', () => {
    expect(has(synth({ ...MINIMAL, catalogTableName: 'iceberg' }), 'AWS::DynamoDB::Table', {
      TableName: 'iceberg',
      KeySchema: [
        { AttributeName: CATALOG_TABLE.partitionKey.name, KeyType: 'HASH' },
        { AttributeName: CATALOG_TABLE.sortKey.name, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [Match.objectLike({ IndexName: CATALOG_TABLE.indexes[0].name })],
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    })).not.toThrow()
  })

  it('catalog glue: a Glue database, Glue actions scoped to it, no catalog table', () => {
    const s = synth({ ...MINIMAL, catalog: 'glue', glueDatabase: 'lake' })
    expect(has(s, 'AWS::Glue::Database', { DatabaseInput: { Name: 'lake' } })).not.toThrow()
    expect(resources(s, 'AWS::DynamoDB::Table')).toHaveLength(1)
    const glue = statements(s).filter((st) => list(st.Action).some((a) => a.startsWith('glue:')))
    expect(glue.length).toBe(4) // writer, committer, maintenance (compaction and expiry commit), replay
    for (const st of glue) {
      expect(list(st.Action)).toEqual(expect.arrayContaining(['glue:GetTable', 'glue:CreateTable', 'glue:UpdateTable', 'glue:CreateDatabase']))
      const arns = JSON.stringify(st.Resource)
      expect(arns).toContain(':database/lake')
      expect(arns).toContain(':table/lake/*')
      expect(arns).not.toContain('"*"')
    }
    const env = fnEnv(s, 'Writer')
    expect(env.FLOE_CATALOG).toBe('glue')
    expect(JSON.parse(env.FLOE_ROUTES as string).defaultNamespace).toBe('lake')
  })

  it('each function\'s environment passes the functions\' own config parser (lib/config.ts loadConfig)', () => {
    for (const fn of ['Writer', 'Committer', 'Maintenance', 'Replay']) {
      const env = resolveIntrinsics(fnEnv(minimal, fn)) as Record<string, string>
      const config = loadConfig(env)
      expect(config.pipeline).toBe('floe')
      expect(config.warehouse).toMatch(/^s3:\/\/ref-warehousebucket[0-9a-f]+\/warehouse$/)
      expect(config.catalog).toBe('dynamodb')
    }
    const writer = loadConfig(resolveIntrinsics(fnEnv(minimal, 'Writer')) as Record<string, string>)
    expect(writer.dlq).toMatch(/^s3:\/\/ref-rawrecordsdeadletters[0-9a-f]+\/dead-letters$/)
    const replay = loadConfig(resolveIntrinsics(fnEnv(minimal, 'Replay')) as Record<string, string>)
    expect(replay.dlq).toBe(writer.dlq)
    expect(replay.failedBatches).toMatch(/^s3:\/\/ref-failedbatches[0-9a-f]+$/)
    expect(writer.memoryBudgetBytes).toBe(256 * 1024 * 1024)
  })

  it('NODE_OPTIONS names V8\'s heap sizes (FLOE_V8_*), so Lambda\'s runtime does not size the young generation from the memory', () => {
    // Default writer: 1,024 MB; the old space stays the runtime's 90 %.
    expect(fnEnv(minimal, 'Writer').NODE_OPTIONS).toBe('--enable-source-maps --max-semi-space-size=8 --max-old-space-size=922')
    const tuned = synth({ ...MINIMAL, writerMemoryMb: 1_769, settings: { FLOE_V8_SEMI_SPACE_MB: '16' } })
    expect(fnEnv(tuned, 'Writer').NODE_OPTIONS).toBe('--enable-source-maps --max-semi-space-size=16 --max-old-space-size=1593')
  })

  it("sets glibc's mmap threshold (FLOE_MALLOC_MMAP_THRESHOLD_KB) in every function's environment, or leaves glibc's when 0", () => {
    const MMAP = 'MALLOC_MMAP_THRESHOLD_'
    const floe = resources(minimal, 'AWS::Lambda::Function').filter(([, f]) => (f.Properties.Environment?.Variables as Record<string, unknown> | undefined)?.POWERTOOLS_SERVICE_NAME)
    expect(floe.length).toBeGreaterThanOrEqual(4)
    for (const [id, f] of floe) expect({ id, v: (f.Properties.Environment.Variables as Record<string, unknown>)[MMAP] }).toEqual({ id, v: '65536' })
    const off = synth({ ...MINIMAL, settings: { FLOE_MALLOC_MMAP_THRESHOLD_KB: '0' } })
    expect(fnEnv(off, 'Writer')[MMAP]).toBeUndefined()
    const tuned = synth({ ...MINIMAL, settings: { FLOE_MALLOC_MMAP_THRESHOLD_KB: '256' } })
    expect(fnEnv(tuned, 'Writer')[MMAP]).toBe('262144')
    // A bad value fails the synth, naming the key.
    expect(() => synth({ ...MINIMAL, settings: { FLOE_MALLOC_MMAP_THRESHOLD_KB: 'lots' } })).toThrow(/FLOE_MALLOC_MMAP_THRESHOLD_KB/)
  })

  it('functions: arm64, nodejs22.x, ESM bundle handler, log groups with retention', () => {
    for (const [, f] of resources(minimal, 'AWS::Lambda::Function')) {
      expect(f.Properties).toMatchObject({ Architectures: ['arm64'], Runtime: 'nodejs22.x', Handler: 'index.handler' })
    }
    for (const [, g] of resources(minimal, 'AWS::Logs::LogGroup')) expect(g.Properties.RetentionInDays).toBe(30)
  })

  describe('IAM least privilege', () => {
    const variants: [string, Synthesized][] = [
      ['MSK with IAM auth', minimal],
      ['self-managed in a VPC', synth({ bootstrapServers: ['b:9096'], kafkaSecretArn: 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:k-AbCdEf', topics: ['t1'], subnetIds: ['subnet-01'], securityGroupIds: ['sg-01'] })],
      ['glue catalog with avro-glue', synth({ ...MINIMAL, catalog: 'glue', glueDatabase: 'lake', valueFormat: 'avro-glue' })],
    ]

    it.each(variants)('%s: no statement allows a wildcard action, and `*` resources only for actions without resource-level permissions', (_name, s) => {
      const all = statements(s).filter((st) => st.Effect === 'Allow')
      expect(all.length).toBeGreaterThan(5)
      const wildcardActions = all.flatMap((st) => list(st.Action).filter((a) => a.includes('*')).map((a) => `${st.where}: ${a}`))
      expect(wildcardActions).toEqual([])
      const starResources = all.filter((st) => list(st.Resource).includes('*')).flatMap((st) => list(st.Action).filter((a) => !VPC_ACCESS_ACTIONS.includes(a)).map((a) => `${st.where}: ${a} on *`))
      expect(starResources).toEqual([])
      // No AWS managed policies (AWSLambdaBasicExecutionRole, AWSLambdaMSKExecutionRole grant on every resource).
      expect(resources(s, 'AWS::IAM::Role').filter(([, r]) => r.Properties.ManagedPolicyArns !== undefined).map(([id]) => id)).toEqual([])
    })

    it('MSK IAM auth: kafka-cluster actions scoped to the cluster, each topic and each group', () => {
      const kc = statements(minimal).filter((st) => list(st.Action).some((a) => a.startsWith('kafka-cluster:')))
      const byAction = Object.fromEntries(kc.flatMap((st) => list(st.Action).map((a) => [a, list(st.Resource)])))
      const base = MSK_ARN.replace(':cluster/', ':')
      expect(byAction['kafka-cluster:Connect']).toEqual([MSK_ARN])
      expect(byAction['kafka-cluster:DescribeClusterDynamicConfiguration']).toEqual([MSK_ARN])
      const topic = (t: string) => base.replace(':events/', ':topic/events/') + `/${t}`
      const group = (g: string) => base.replace(':events/', ':group/events/') + `/${g}`
      expect(byAction['kafka-cluster:ReadData']).toEqual([topic('orders'), topic('clicks')])
      expect(byAction['kafka-cluster:DescribeTopic']).toEqual([topic('orders'), topic('clicks')])
      expect(byAction['kafka-cluster:AlterGroup']).toEqual([group('floe-floe.orders'), group('floe-floe.clicks')])
      expect(byAction['kafka-cluster:DescribeGroup']).toEqual([group('floe-floe.orders'), group('floe-floe.clicks')])
    })

    it('maintenance: the committer\'s table-file, control-table and catalog access (compaction and expiry commit under its lease), nothing more', () => {
      const actionsOf = (role: string) => [...new Set(statements(minimal).filter((st) => st.where.startsWith(role)).flatMap((st) => list(st.Action)).filter((a) => /^(s3|dynamodb):/.test(a)))].sort()
      expect(actionsOf('MaintenanceRole')).toEqual(actionsOf('CommitterRole'))
      expect(actionsOf('MaintenanceRole')).not.toContain('dynamodb:DeleteTable')
    })

    it('S3: the writer may only put dead letters, the committer none; neither gets the whole bucket', () => {
      const s3 = statements(minimal).filter((st) => list(st.Action).some((a) => a.startsWith('s3:')))
      const text = (st: { Resource: unknown }) => JSON.stringify(st.Resource)
      const deadLetter = s3.filter((st) => text(st).includes('/dead-letters/*'))
      expect(deadLetter.map((st) => [st.where.replace(/[0-9A-F]{8}$/, ''), st.Action])).toEqual([['WriterRoleDefaultPolicy', ['s3:PutObject', 's3:AbortMultipartUpload']]])
      const wholeBucket = s3.filter((st) => /Bucket[0-9A-F]+","Arn"\]\},"\/\*"/.test(text(st)) && !text(st).includes('FailedBatches')).map((st) => st.where)
      expect(wholeBucket).toEqual([])
    })
  })

  it('cdk-nag AwsSolutions: no unacknowledged findings', () => {
    const scram = { kafkaAuth: 'sasl-scram-512', kafkaSecretArn: 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:AmazonMSK_x-AbCdEf', kafkaSecretKeyArn: 'arn:aws:kms:eu-west-1:111122223333:key/k1' } as const
    const variants = [
      minimal,
      synth({ ...MINIMAL, ...scram, onFailure: 'none' }),
      synth({ ...MINIMAL, catalog: 'glue', glueDatabase: 'lake' }),
      synth({ bootstrapServers: ['b:9096'], kafkaAuth: 'none', topics: ['t1'], subnetIds: ['subnet-01'], securityGroupIds: ['sg-01'] }),
    ]
    for (const s of variants) {
      const report = new AwsSolutionsChecks().validateScope(s.stack)
      const findings = report.violations.map((v) => `${v.severity} ${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`)
      expect(findings).toEqual([])
    }
  })

  it('the example context in cdk.json synthesizes (what `npm run synth` deploys)', () => {
    const s = synth({}, cdkJsonContext())
    expect(resources(s, 'AWS::Lambda::EventSourceMapping')).toHaveLength((cdkJsonContext().topics as string[]).length)
  })
})
