/**
 * The writer's Kafka event source mappings (one per topic: a Kafka mapping takes exactly one)
 * with their IAM. Built on `lambda.EventSourceMapping` rather than `ManagedKafkaEventSource`:
 * that class attaches the AWSLambdaMSKExecutionRole managed policy (kafka:Describe* and EC2
 * network-interface actions on every resource), where Floe grants kafka-cluster:* on the one
 * cluster, its topics and its consumer groups, and only the EC2 actions that cannot be scoped.
 */
import { Duration } from 'aws-cdk-lib'
import * as iam from 'aws-cdk-lib/aws-iam'
import * as lambda from 'aws-cdk-lib/aws-lambda'
import type * as s3 from 'aws-cdk-lib/aws-s3'
import { Construct } from 'constructs'
import type { FloeStackConfig } from '../config.js'
import { acknowledgeWildcardResources, policyScope } from '../nag.js'

/** Failed batches (retries exhausted) go to an S3 bucket: the whole batch is kept, so it can be replayed. */
export class S3FailedBatches implements lambda.IEventSourceDlq {
  constructor(readonly bucket: s3.IBucket) {}

  bind(_target: lambda.IEventSourceMapping, targetHandler: lambda.IFunction): lambda.DlqDestinationConfig {
    // What Lambda needs to write the failed-invocation record, and not GetObject/DeleteObject
    // that S3OnFailureDestination grants.
    targetHandler.addToRolePolicy(new iam.PolicyStatement({ sid: 'FailedBatchesWrite', actions: ['s3:PutObject'], resources: [this.bucket.arnForObjects('*')] }))
    targetHandler.addToRolePolicy(new iam.PolicyStatement({ sid: 'FailedBatchesList', actions: ['s3:ListBucket'], resources: [this.bucket.bucketArn] }))
    acknowledgeWildcardResources(policyScope(targetHandler), [this.bucket.arnForObjects('*')], 'Lambda names failed-batch objects itself; the bucket holds nothing else and the role may only put objects into it.')
    return { destination: this.bucket.bucketArn }
  }
}

export interface KafkaSourceProps {
  config: FloeStackConfig
  target: lambda.IFunction
  /** On-failure destination; none: retry until the records expire in the topic. */
  failedBatches?: lambda.IEventSourceDlq
}

/** EC2 actions the mapping uses to reach brokers from inside their VPC; none supports resource-level scoping that Lambda uses. */
export const VPC_ACCESS_ACTIONS = [
  'ec2:CreateNetworkInterface',
  'ec2:DescribeNetworkInterfaces',
  'ec2:DescribeVpcs',
  'ec2:DeleteNetworkInterface',
  'ec2:DescribeSubnets',
  'ec2:DescribeSecurityGroups',
]

export class KafkaSource extends Construct {
  readonly mappings: lambda.EventSourceMapping[] = []
  private readonly config: FloeStackConfig

  constructor(scope: Construct, id: string, props: KafkaSourceProps) {
    super(scope, id)
    this.config = props.config
    const { config: c, target } = props
    const kafka = c.kafka
    const access: lambda.SourceAccessConfiguration[] = []
    if (kafka.kind === 'msk') {
      if (kafka.auth === 'sasl-scram-512') access.push({ type: lambda.SourceAccessConfigurationType.SASL_SCRAM_512_AUTH, uri: kafka.secretArn! })
    } else {
      const type = {
        'sasl-scram-512': lambda.SourceAccessConfigurationType.SASL_SCRAM_512_AUTH,
        'sasl-scram-256': lambda.SourceAccessConfigurationType.SASL_SCRAM_256_AUTH,
        basic: lambda.SourceAccessConfigurationType.BASIC_AUTH,
        mtls: lambda.SourceAccessConfigurationType.CLIENT_CERTIFICATE_TLS_AUTH,
        none: undefined,
      }[kafka.auth]
      if (type) access.push({ type, uri: kafka.secretArn! })
      for (const subnet of kafka.vpc?.subnetIds ?? []) access.push({ type: lambda.SourceAccessConfigurationType.VPC_SUBNET, uri: `subnet:${subnet}` })
      for (const sg of kafka.vpc?.securityGroupIds ?? []) access.push({ type: lambda.SourceAccessConfigurationType.VPC_SECURITY_GROUP, uri: `security_group:${sg}` })
    }

    for (const topic of c.topics) {
      this.mappings.push(
        new lambda.EventSourceMapping(this, `Topic-${topic}`, {
          target,
          eventSourceArn: kafka.kind === 'msk' ? kafka.clusterArn : undefined,
          kafkaBootstrapServers: kafka.kind === 'self-managed' ? kafka.bootstrapServers : undefined,
          kafkaTopic: topic,
          kafkaConsumerGroupId: c.consumerGroups.get(topic),
          startingPosition: lambda.StartingPosition[c.startingPosition],
          startingPositionTimestamp: c.startingPositionTimestamp,
          batchSize: c.batchSize,
          maxBatchingWindow: Duration.seconds(c.maxBatchingWindowSeconds),
          provisionedPollerConfig:
            c.minimumPollers !== undefined || c.maximumPollers !== undefined
              ? { minimumPollers: c.minimumPollers, maximumPollers: c.maximumPollers, ...(c.pollerGroupName ? { pollerGroupName: c.pollerGroupName } : {}) }
              : undefined,
          sourceAccessConfigurations: access.length ? access : undefined,
          onFailure: props.failedBatches,
          supportS3OnFailureDestination: props.failedBatches !== undefined,
        }),
      )
    }
    this.grantPollerAccess(target)
  }

  /** What the mapping's pollers do with the writer's role. */
  private grantPollerAccess(target: lambda.IFunction): void {
    const c = this.config
    const kafka = c.kafka
    if (kafka.kind === 'msk') {
      target.addToRolePolicy(
        new iam.PolicyStatement({
          sid: 'MskCluster',
          actions: ['kafka:DescribeCluster', 'kafka:DescribeClusterV2', 'kafka:GetBootstrapBrokers', ...(kafka.auth === 'sasl-scram-512' ? ['kafka:ListScramSecrets'] : [])],
          resources: [kafka.clusterArn],
        }),
      )
      if (kafka.auth === 'iam') {
        // arn:aws:kafka:<region>:<account>:cluster/<name>/<uuid> → topic/<name>/<uuid>/<topic>, group/<name>/<uuid>/<group>
        const [prefix, rest] = kafka.clusterArn.split(':cluster/') as [string, string]
        target.addToRolePolicy(
          new iam.PolicyStatement({ sid: 'MskConnect', actions: ['kafka-cluster:Connect', 'kafka-cluster:DescribeClusterDynamicConfiguration'], resources: [kafka.clusterArn] }),
        )
        target.addToRolePolicy(
          new iam.PolicyStatement({
            sid: 'MskTopics',
            actions: ['kafka-cluster:DescribeTopic', 'kafka-cluster:ReadData'],
            resources: c.topics.map((t) => `${prefix}:topic/${rest}/${t}`),
          }),
        )
        target.addToRolePolicy(
          new iam.PolicyStatement({
            sid: 'MskGroups',
            actions: ['kafka-cluster:DescribeGroup', 'kafka-cluster:AlterGroup'],
            resources: [...c.consumerGroups.values()].map((g) => `${prefix}:group/${rest}/${g}`),
          }),
        )
      }
    }
    if (kafka.secretArn) {
      target.addToRolePolicy(new iam.PolicyStatement({ sid: 'KafkaSecret', actions: ['secretsmanager:GetSecretValue'], resources: [kafka.secretArn] }))
      if (c.kafkaSecretKeyArn) {
        target.addToRolePolicy(
          new iam.PolicyStatement({
            sid: 'KafkaSecretKey',
            actions: ['kms:Decrypt'],
            resources: [c.kafkaSecretKeyArn],
            conditions: { StringEquals: { 'kms:ViaService': `secretsmanager.${kafka.secretArn.split(':')[3]}.amazonaws.com` } },
          }),
        )
      }
    }
    // MSK: the pollers reach the brokers through ENIs in the cluster's subnets; self-managed:
    // in the configured subnets. Either way the role creates and describes them.
    if (kafka.kind === 'msk' || kafka.vpc) {
      target.addToRolePolicy(new iam.PolicyStatement({ sid: 'KafkaVpcAccess', actions: VPC_ACCESS_ACTIONS, resources: ['*'] }))
      acknowledgeWildcardResources(policyScope(target), ['*'], 'The EC2 Describe* actions have no resource-level permissions, and the mapping creates its network interfaces in subnets it discovers from the cluster; these are the actions of AWSLambdaMSKExecutionRole minus its logs:* and kafka:* on every resource.')
    }
  }
}
