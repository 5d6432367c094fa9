/**
 * Alarms and a dashboard for one pipeline. Custom metrics are Powertools EMF metrics in the
 * `Floe` namespace with the default `service` dimension (POWERTOOLS_SERVICE_NAME = pipeline):
 * `PendingBatches` (committer, uncommitted batches), `CommitFailures` (committer), `DeadLetters`
 * (writer), `MaintenanceFailures` and `OrphanFilesDeleted` (maintenance). Consumer lag is Lambda's own `OffsetLag` metric of the Kafka mappings; batches the
 * mapping gives up on show as S3 PutRequests on the failed-batches bucket.
 */
import { Duration } from 'aws-cdk-lib'
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch'
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions'
import type * as lambda from 'aws-cdk-lib/aws-lambda'
import * as sns from 'aws-cdk-lib/aws-sns'
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions'
import { Construct } from 'constructs'

export const METRICS_NAMESPACE = 'Floe'

export interface MonitoringProps {
  pipeline: string
  writer: lambda.IFunction
  committer: lambda.IFunction
  /** The maintenance function (orphan cleanup), when the stack has one. */
  maintenance?: lambda.IFunction
  offsetLagThreshold: number
  /** FLOE_MAX_PENDING_BATCHES: writers push back at this backlog; the alarm fires at 80 % of it. */
  maxPendingBatches: number
  /** An existing topic; default: one created here, so a fresh deploy notifies someone. */
  alarmTopicArn?: string
  /** Subscribed (email) to the created topic. */
  alarmEmail?: string
  /** Bucket the event source mapping puts batches it gave up on; request metrics enabled (`EntireBucket`). */
  failedBatchesBucketName?: string
}

export class Monitoring extends Construct {
  readonly alarms: cloudwatch.Alarm[] = []
  readonly dashboard: cloudwatch.Dashboard
  /** What every alarm notifies (in ALARM and back to OK). */
  readonly topic: sns.ITopic

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id)
    const period = Duration.minutes(5)
    const floe = (metricName: string, statistic: string) =>
      new cloudwatch.Metric({ namespace: METRICS_NAMESPACE, metricName, dimensionsMap: { service: props.pipeline }, statistic, period })
    const offsetLag = new cloudwatch.Metric({
      namespace: 'AWS/Lambda',
      metricName: 'OffsetLag',
      dimensionsMap: { FunctionName: props.writer.functionName },
      statistic: 'Maximum',
      period,
    })
    const metrics = {
      writerErrors: props.writer.metricErrors({ period, statistic: 'Sum' }),
      committerErrors: props.committer.metricErrors({ period, statistic: 'Sum' }),
      offsetLag,
      pendingBatches: floe('PendingBatches', 'Maximum'),
      commitFailures: floe('CommitFailures', 'Sum'),
      deadLetters: floe('DeadLetters', 'Sum'),
    }
    const failedBatches = props.failedBatchesBucketName
      ? new cloudwatch.Metric({
          namespace: 'AWS/S3',
          metricName: 'PutRequests',
          dimensionsMap: { BucketName: props.failedBatchesBucketName, FilterId: 'EntireBucket' },
          statistic: 'Sum',
          period,
        })
      : undefined
    const topic = (this.topic = props.alarmTopicArn ? sns.Topic.fromTopicArn(this, 'AlarmTopic', props.alarmTopicArn) : this.createTopic(props))
    const alarm = (alarmId: string, metric: cloudwatch.IMetric, threshold: number, evaluationPeriods: number, description: string) => {
      const a = new cloudwatch.Alarm(this, alarmId, {
        metric,
        threshold,
        evaluationPeriods,
        datapointsToAlarm: evaluationPeriods,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: `Floe pipeline ${props.pipeline}: ${description}`,
      })
      if (topic) {
        a.addAlarmAction(new actions.SnsAction(topic))
        a.addOkAction(new actions.SnsAction(topic))
      }
      this.alarms.push(a)
      return a
    }
    // Retryable errors (back pressure, throttling) are normal in bursts; 15 minutes of them is not.
    alarm('WriterErrors', metrics.writerErrors, 1, 3, 'the writer has failed batches for 15 minutes (see its logs; records wait in Kafka)')
    alarm('ConsumerLag', metrics.offsetLag, props.offsetLagThreshold, 3, `consumer lag above ${props.offsetLagThreshold} records for 15 minutes`)
    alarm('PendingBacklog', metrics.pendingBatches, Math.max(1, Math.floor(props.maxPendingBatches * 0.8)), 2, 'uncommitted batches near the back-pressure limit: is the committer running?')
    alarm('CommitFailures', metrics.commitFailures, 1, 3, 'commits have failed for 15 minutes (pending batches are kept and retried)')
    alarm('CommitterErrors', metrics.committerErrors, 1, 3, 'the committer function has crashed for 15 minutes')
    // One dead letter is worth a look: it is a record that is not in any table.
    alarm('DeadLetters', metrics.deadLetters, 1, 1, 'records were dead-lettered (not in any table until replayed)')
    // The mapping skipped a batch after its retries: those records are in no table and no dead
    // letter, only in the failed-batches bucket. Always worth a page.
    // Maintenance runs daily: one failed run is worth a look (orphans pile up, nothing is lost).
    const maintenanceErrors = props.maintenance?.metricErrors({ period: Duration.hours(1), statistic: 'Sum' })
    const maintenanceFailures = props.maintenance && floe('MaintenanceFailures', 'Sum').with({ period: Duration.hours(1) })
    if (maintenanceErrors) alarm('MaintenanceErrors', maintenanceErrors, 1, 1, 'the maintenance function crashed or timed out (orphan files are not being cleaned)')
    if (maintenanceFailures) alarm('MaintenanceFailures', maintenanceFailures, 1, 1, 'orphan cleanup failed for some table (see the maintenance logs)')
    if (failedBatches) alarm('FailedBatches', failedBatches, 1, 1, 'the event source mapping gave up on a batch (see the failed-batches bucket; replay it)')

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `floe-${props.pipeline}`.replace(/[^A-Za-z0-9_-]/g, '-'),
      widgets: [
        [new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24, height: 3 })],
        [
          new cloudwatch.GraphWidget({ title: 'Consumer lag (records)', left: [metrics.offsetLag], width: 12 }),
          new cloudwatch.GraphWidget({ title: 'Pending batches', left: [metrics.pendingBatches], width: 12 }),
        ],
        [
          new cloudwatch.GraphWidget({
            title: 'Writer',
            left: [props.writer.metricInvocations({ period }), metrics.writerErrors],
            right: [props.writer.metricDuration({ period, statistic: 'p99' })],
            width: 12,
          }),
          new cloudwatch.GraphWidget({
            title: 'Committer',
            left: [props.committer.metricInvocations({ period }), metrics.committerErrors, metrics.commitFailures],
            right: [props.committer.metricDuration({ period, statistic: 'p99' })],
            width: 12,
          }),
        ],
        [
          new cloudwatch.GraphWidget({ title: 'Dead letters', left: [metrics.deadLetters], width: failedBatches ? 12 : 24 }),
          ...(failedBatches ? [new cloudwatch.GraphWidget({ title: 'Failed batches (mapping gave up)', left: [failedBatches], width: 12 })] : []),
        ],
        ...(props.maintenance
          ? [
              [
                new cloudwatch.GraphWidget({
                  title: 'Maintenance (orphan cleanup)',
                  left: [floe('OrphanFilesDeleted', 'Sum').with({ period: Duration.hours(1) })],
                  right: [maintenanceErrors!, maintenanceFailures!],
                  width: 24,
                }),
              ],
            ]
          : []),
      ],
    })
  }

  /** The stack's own alarm topic: TLS only; an email subscription when alarmEmail is set. */
  private createTopic(props: MonitoringProps): sns.Topic {
    const topic = new sns.Topic(this, 'Alarms', { displayName: `Floe ${props.pipeline} alarms`, enforceSSL: true })
    if (props.alarmEmail) topic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail))
    return topic
  }
}
