/**
 * One Floe pipeline: warehouse bucket, control table, catalog, the writer on Kafka event source
 * mappings, the committer on an EventBridge Scheduler schedule, the maintenance function (orphan
 * cleanup) on a daily one, alarms and a dashboard.
 * Configured from CDK context (cdk.json / `-c`) or props; see docs/deploy.md for the keys.
 */
import { CfnOutput, Duration, Stack, Validations, type StackProps } from 'aws-cdk-lib'
import * as iam from 'aws-cdk-lib/aws-iam'
import * as lambda from 'aws-cdk-lib/aws-lambda'
import * as logs from 'aws-cdk-lib/aws-logs'
import * as scheduler from 'aws-cdk-lib/aws-scheduler'
import * as targets from 'aws-cdk-lib/aws-scheduler-targets'
import type { Construct } from 'constructs'
import { SETTINGS } from '../lib/config.js'
import { parseStackConfig, readContext, type FloeContextInput, type FloeStackConfig } from './config.js'
import { FloeFunction } from './constructs/floe-function.js'
import { KafkaSource, S3FailedBatches } from './constructs/kafka-source.js'
import { Monitoring } from './constructs/monitoring.js'
import { RawRecords } from './constructs/raw-records.js'
import { accessLogBucket } from './constructs/secure-bucket.js'
import { Catalog, ControlTable } from './constructs/tables.js'
import { Warehouse } from './constructs/warehouse.js'
import { acknowledgeWildcardResources } from './nag.js'

export interface FloeStackProps extends StackProps {
  /** Overrides of the context keys (tests, or a CDK app that embeds Floe). */
  config?: Partial<FloeContextInput>
  /** Handler sources relative to the project root; default functions/writer.ts, functions/committer.ts, functions/maintenance.ts. */
  entries?: { writer?: string; committer?: string; maintenance?: string; replay?: string; restCatalog?: string }
}

/**
 * Writer timeout. The mapping's 6 MB batch encodes in seconds; 5 minutes leaves room for S3 and
 * DynamoDB retries. A timed-out writer is a zombie the fencing transaction makes harmless.
 */
const WRITER_TIMEOUT = Duration.minutes(5)
/** Committer timeout: under the 5-minute lease (FLOE_LEASE_TTL_SECONDS) so a run ends before its lease can be taken over. */
const COMMITTER_TIMEOUT = Duration.minutes(4)
/** Maintenance timeout: Lambda's maximum. Compaction starts no new unit in the last 20 %; a run cut short is safe and the next run resumes. */
const MAINTENANCE_TIMEOUT = Duration.minutes(15)
/** Replay timeout: Lambda's maximum. A replay cut short is safe (each source is fenced by its marker); run it again. */
const REPLAY_TIMEOUT = Duration.minutes(15)

export class FloeStack extends Stack {
  readonly config: FloeStackConfig
  readonly writer: FloeFunction
  readonly committer: FloeFunction
  readonly maintenance: FloeFunction
  /** `floe replay` in AWS (functions/replay.ts), invoked by hand. */
  readonly replay: FloeFunction
  readonly rawRecords: RawRecords
  readonly warehouse: Warehouse
  readonly control: ControlTable
  readonly catalog: Catalog
  readonly kafka: KafkaSource
  readonly schedule: scheduler.Schedule
  /** Absent with catalog s3tables: S3 Tables compacts, expires snapshots and removes unreferenced files itself. */
  readonly maintenanceSchedule?: scheduler.Schedule
  /** The Iceberg REST endpoint over the DynamoDB catalog (context restEndpoint). */
  readonly restCatalog?: FloeFunction
  readonly restCatalogUrl?: lambda.FunctionUrl
  readonly monitoring: Monitoring
  readonly outputs: CfnOutput[]

  constructor(scope: Construct, id: string, props: FloeStackProps = {}) {
    super(scope, id, props)
    // Server access logs are delivered through a bucket policy, not the legacy log-delivery ACL
    // (which needs ACLs on, i.e. ObjectWriter ownership). Set here so embedding apps get it too.
    this.node.setContext('@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy', true)
    const c = (this.config = parseStackConfig(readContext(this.node, props.config)))

    const accessLogs = accessLogBucket(this, 'AccessLogs', 90)
    this.warehouse = new Warehouse(this, 'Warehouse', {
      bucketName: c.warehouseBucketName,
      accessLogs,
      warehousePrefix: c.warehousePrefix,
    })
    this.rawRecords = new RawRecords(this, 'RawRecords', {
      pipeline: c.pipeline,
      accessLogs,
      deadLetterPrefix: c.deadLetterPrefix,
      retentionDays: c.deadLetterRetentionDays,
      failedBatches: c.onFailure === 's3',
      keyArn: c.rawRecordsKeyArn,
      readerRoleName: c.rawRecordsReaderRoleName ?? `floe-${c.pipeline}-raw-records-reader`.slice(0, 64),
    })
    const failedBatches = this.rawRecords.failedBatchesBucket
    this.control = new ControlTable(this, 'Control')
    this.catalog = new Catalog(
      this,
      'Catalog',
      c.catalog === 'glue'
        ? { kind: 'glue', database: c.glueDatabase! }
        : c.catalog === 's3tables'
          ? { kind: 's3tables', bucketArn: c.tableBucketArn, bucketName: c.tableBucketName ?? `floe-${c.pipeline.toLowerCase().replace(/[^a-z0-9-]/g, '-')}`.slice(0, 63), namespace: c.tableNamespace! }
          : { kind: 'dynamodb', tableName: c.catalogTableName },
    )

    const shared = {
      FLOE_PIPELINE: c.pipeline,
      FLOE_ROUTES: c.routesJson,
      FLOE_VALUE_FORMAT: c.valueFormat,
      ...c.extraSettings,
    }
    const logRetention = c.logRetentionDays as logs.RetentionDays
    this.writer = new FloeFunction(this, 'Writer', {
      entry: props.entries?.writer ?? 'functions/writer.ts',
      description: `Floe ${c.pipeline}: Kafka batches to Parquet files, registered in the control table`,
      memorySize: c.writerMemoryMb,
      timeout: WRITER_TIMEOUT,
      logRetention,
      serviceName: c.pipeline,
      // A quarter of the function's memory for record buffers (lib/config.ts FLOE_MEMORY_BUDGET_MB).
      settings: { ...shared, FLOE_MEMORY_BUDGET_MB: String(Math.floor(c.writerMemoryMb / 4)) },
    })
      .bindWarehouse(this.warehouse)
      .bindDeadLetters(this.rawRecords)
      .bindControlTable(this.control, 'writer')
      .bindCatalog(this.catalog)
    this.grantDecoderAccess(this.writer)

    this.committer = new FloeFunction(this, 'Committer', {
      entry: props.entries?.committer ?? 'functions/committer.ts',
      description: `Floe ${c.pipeline}: appends registered files to the Iceberg tables`,
      memorySize: c.committerMemoryMb,
      timeout: COMMITTER_TIMEOUT,
      logRetention,
      serviceName: c.pipeline,
      settings: shared,
    })
      .bindWarehouse(this.warehouse)
      .bindControlTable(this.control, 'committer')
      .bindCatalog(this.catalog)

    this.maintenance = new FloeFunction(this, 'Maintenance', {
      entry: props.entries?.maintenance ?? 'functions/maintenance.ts',
      description: `Floe ${c.pipeline}: compacts small files, rewrites small manifests, expires snapshots, removes orphan files`,
      memorySize: c.committerMemoryMb,
      timeout: MAINTENANCE_TIMEOUT,
      logRetention,
      serviceName: c.pipeline,
      settings: shared,
    })
      // Compaction writes data files, manifests and metadata and commits them under the committer's
      // lease: the committer's access, not orphan cleanup's read-and-delete.
      .bindWarehouse(this.warehouse)
      .bindControlTable(this.control, 'committer')
      .bindCatalog(this.catalog)

    this.replay = new FloeFunction(this, 'Replay', {
      entry: props.entries?.replay ?? 'functions/replay.ts',
      description: `Floe ${c.pipeline}: replays failed batches and dead letters into their tables, exactly once (invoke by hand)`,
      memorySize: c.writerMemoryMb,
      timeout: REPLAY_TIMEOUT,
      logRetention,
      serviceName: c.pipeline,
      settings: { ...shared, FLOE_MEMORY_BUDGET_MB: String(Math.floor(c.writerMemoryMb / 4)) },
    })
      .bindWarehouse(this.warehouse)
      .bindRawRecords(this.rawRecords)
      .bindControlTable(this.control, 'replay')
      .bindCatalog(this.catalog)
    this.grantDecoderAccess(this.replay)
    this.rawRecords.restrictReads()

    this.kafka = new KafkaSource(this, 'Kafka', { config: c, target: this.writer, failedBatches: failedBatches && new S3FailedBatches(failedBatches) })

    this.schedule = new scheduler.Schedule(this, 'CommitSchedule', {
      description: `Floe ${c.pipeline}: run the committer`,
      schedule: scheduler.ScheduleExpression.expression(c.commitSchedule),
      target: new targets.LambdaInvoke(this.committer, {
        input: scheduler.ScheduleTargetInput.fromObject({ source: 'floe.schedule', pipeline: c.pipeline }),
        // The next tick is the retry: a late duplicate run would only queue behind the lease.
        retryAttempts: 0,
        maxEventAge: Duration.minutes(1),
      }),
    })
    acknowledgeWildcardResources(this, [`${this.committer.functionArn}:*`], 'The LambdaInvoke target grants invoke on the committer and its versions/aliases (ARN:*); it is one function.')

    if (c.catalog !== 's3tables') this.maintenanceSchedule = new scheduler.Schedule(this, 'MaintenanceSchedule', {
      description: `Floe ${c.pipeline}: run table maintenance (compaction, manifest rewrite, snapshot expiry, orphan cleanup)`,
      schedule: scheduler.ScheduleExpression.expression(c.maintenanceSchedule),
      target: new targets.LambdaInvoke(this.maintenance, {
        input: scheduler.ScheduleTargetInput.fromObject({ source: 'floe.schedule', pipeline: c.pipeline }),
        // A run that failed to start is retried within the hour; a duplicate run is harmless (it waits for the table lease).
        retryAttempts: 2,
        maxEventAge: Duration.hours(1),
      }),
    })
    if (this.maintenanceSchedule) acknowledgeWildcardResources(this, [`${this.maintenance.functionArn}:*`], 'The LambdaInvoke target grants invoke on the maintenance function and its versions/aliases (ARN:*); it is one function.')

    if (c.restEndpoint) {
      this.restCatalog = new FloeFunction(this, 'RestCatalog', {
        entry: props.entries?.restCatalog ?? 'functions/rest-catalog.ts',
        description: `Floe ${c.pipeline}: Iceberg REST catalog over the DynamoDB catalog (function URL, IAM auth)`,
        memorySize: c.committerMemoryMb,
        timeout: Duration.seconds(30),
        logRetention,
        serviceName: c.pipeline,
        settings: shared,
      })
        .bindWarehouse(this.warehouse)
        .bindCatalog(this.catalog)
      this.restCatalogUrl = this.restCatalog.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.AWS_IAM })
    }

    const maxPending = Number(c.extraSettings.FLOE_MAX_PENDING_BATCHES ?? SETTINGS.FLOE_MAX_PENDING_BATCHES.parse(undefined))
    this.monitoring = new Monitoring(this, 'Monitoring', {
      pipeline: c.pipeline,
      writer: this.writer,
      committer: this.committer,
      maintenance: this.maintenance,
      offsetLagThreshold: c.offsetLagAlarmThreshold,
      maxPendingBatches: maxPending,
      alarmTopicArn: c.alarmTopicArn,
      alarmEmail: c.alarmEmail,
      failedBatchesBucketName: failedBatches?.bucketName,
    })

    this.acknowledgeFindings()
    const outputs: [string, string, string?][] = [
      ['WarehouseUrl', this.warehouse.warehouseUrl, 'FLOE_WAREHOUSE'],
      ['DeadLetterUrl', this.rawRecords.deadLetterUrl, 'FLOE_DLQ'],
      ['ControlTableName', this.control.table.tableName, 'FLOE_CONTROL_TABLE'],
      ...(this.catalog.table ? [['CatalogTableName', this.catalog.table.tableName, 'FLOE_CATALOG_TABLE'] as [string, string, string]] : []),
      ...(this.catalog.tableBucketArn ? [['TableBucketArn', this.catalog.tableBucketArn, 'S3 Tables warehouse (FLOE_REST_WAREHOUSE); engines: uri https://s3tables.<region>.amazonaws.com/iceberg, SigV4 signing name s3tables'] as [string, string, string]] : []),
      ...(this.restCatalogUrl ? [['RestCatalogUrl', this.restCatalogUrl.url, 'Iceberg REST catalog URI (IAM auth: SigV4, signing name lambda)'] as [string, string, string]] : []),
      ['WriterFunctionName', this.writer.functionName],
      ['CommitterFunctionName', this.committer.functionName],
      ['MaintenanceFunctionName', this.maintenance.functionName],
      ['ReplayFunctionName', this.replay.functionName, 'Invoke with {"replay":"failed-batches"} or {"replay":"dead-letters"}'],
      ['RawRecordsReaderRoleArn', this.rawRecords.readerRole.roleArn, 'The only role (with the replay function) that may read dead letters and failed batches'],
      ['AlarmTopicArn', this.monitoring.topic.topicArn],
      ...(failedBatches ? [['FailedBatchesBucket', failedBatches.bucketName, 'Kafka batches the mapping gave up on (retries exhausted)'] as [string, string, string]] : []),
      ['DashboardName', this.monitoring.dashboard.dashboardName],
    ]
    this.outputs = outputs.map(([outputId, value, description]) => new CfnOutput(this, outputId, { value, description }))
  }

  /** Schema registries the writer's decoders read (only when a format needs one). */
  private grantDecoderAccess(fn: FloeFunction): void {
    const c = this.config
    const secret = c.extraSettings.FLOE_SCHEMA_REGISTRY_SECRET_ARN
    if (secret) fn.addToRolePolicy(new iam.PolicyStatement({ sid: 'SchemaRegistrySecret', actions: ['secretsmanager:GetSecretValue'], resources: [secret] }))
    const routes = JSON.parse(c.routesJson) as { formats?: { value?: string; key?: string }[] }
    const formats = [c.valueFormat, ...(routes.formats ?? []).flatMap((f) => [f.value, f.key])]
    if (formats.includes('avro-glue')) {
      fn.addToRolePolicy(
        new iam.PolicyStatement({
          sid: 'GlueSchemaRegistry',
          actions: ['glue:GetSchemaVersion'],
          resources: [this.formatArn({ service: 'glue', resource: 'registry', resourceName: '*' }), this.formatArn({ service: 'glue', resource: 'schema', resourceName: '*' })],
        }),
      )
    }
  }

  /** cdk-nag (AwsSolutions) findings that are deliberate, each with its reason. */
  private acknowledgeFindings(): void {
    for (const fn of [this.writer, this.committer, this.maintenance, this.replay, ...(this.restCatalog ? [this.restCatalog] : [])]) {
      Validations.of(fn).acknowledge({
        id: 'AwsSolutions-L1',
        reason: 'nodejs22.x is the runtime Floe is built and tested for (esbuild target node22); moving to a newer runtime is a tested change, not a default.',
      })
    }
  }
}
