/**
 * The DynamoDB control table (checkpoints, pending batches, leases) and the Iceberg catalog: a
 * DynamoDB table in Iceberg Java's DynamoDbCatalog layout, or a Glue database. Key schemas come
 * from lib/control/table-def.ts and lib/catalog/table-def.ts, shared with `floe init`, so the
 * local and the AWS tables cannot differ.
 */
import { RemovalPolicy, Stack, Validations } from 'aws-cdk-lib'
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb'
import * as s3tables from 'aws-cdk-lib/aws-s3tables'
import * as glue from 'aws-cdk-lib/aws-glue'
import * as iam from 'aws-cdk-lib/aws-iam'
import { Construct } from 'constructs'
import { CATALOG_TABLE } from '../../lib/catalog/index.js'
import { CONTROL_TABLE } from '../../lib/control/index.js'
import { acknowledgeWildcardResources, policyScope } from '../nag.js'

type KeyDef = { readonly name: string; readonly type: 'S' | 'N' | 'B' }
const attr = (k: KeyDef): dynamodb.Attribute => ({ name: k.name, type: k.type as dynamodb.AttributeType })

/** On-demand, PITR, encrypted, retained: the tables hold the only record of uncommitted offsets. */
function table(scope: Construct, id: string, def: { partitionKey: KeyDef; sortKey: KeyDef; ttlAttribute?: string; indexes: readonly { name: string; partitionKey: KeyDef; sortKey: KeyDef }[] }, tableName?: string): dynamodb.Table {
  const t = new dynamodb.Table(scope, id, {
    tableName,
    partitionKey: attr(def.partitionKey),
    sortKey: attr(def.sortKey),
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    encryption: dynamodb.TableEncryption.AWS_MANAGED,
    timeToLiveAttribute: def.ttlAttribute,
    removalPolicy: RemovalPolicy.RETAIN,
  })
  for (const index of def.indexes) {
    t.addGlobalSecondaryIndex({ indexName: index.name, partitionKey: attr(index.partitionKey), sortKey: attr(index.sortKey) })
  }
  return t
}

/** Item actions each function uses (TransactWriteItems is authorized per contained action). */
const CONTROL_ACTIONS = {
  writer: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'],
  committer: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem', 'dynamodb:DeleteItem'],
  // Read only: pending batches and their file lists (Query, BatchGetItem), the tables the
  // pipeline writes (Scan of the lease items, once a day; Query of the pending index).
  maintenance: ['dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:Scan'],
  // The writer's, plus Scan: which offsets of a failed batch live writers already registered.
  replay: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:Scan', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'],
} as const

export class ControlTable extends Construct {
  readonly table: dynamodb.Table

  constructor(scope: Construct, id: string) {
    super(scope, id)
    this.table = table(this, 'Table', CONTROL_TABLE)
  }

  grant(grantee: iam.IGrantable, access: keyof typeof CONTROL_ACTIONS): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'ControlTable',
        actions: [...CONTROL_ACTIONS[access]],
        resources: [this.table.tableArn, `${this.table.tableArn}/index/${CONTROL_TABLE.indexes[0].name}`],
      }),
    )
  }
}

export type CatalogProps =
  | { kind: 'dynamodb'; tableName?: string }
  | { kind: 'glue'; database: string }
  /** An S3 Tables table bucket (created when `bucketArn` is not given) and a namespace in it, through the S3 Tables Iceberg REST endpoint. */
  | { kind: 's3tables'; bucketArn?: string; bucketName: string; namespace: string }

/** Environment the functions need to reach the catalog. */
export type CatalogSettings = {
  FLOE_CATALOG: 'dynamodb' | 'glue' | 'rest'
  FLOE_CATALOG_TABLE?: string
  FLOE_REST_URI?: string
  FLOE_REST_WAREHOUSE?: string
  FLOE_REST_AUTH?: 'sigv4'
  FLOE_REST_SIGNING_NAME?: string
}

export class Catalog extends Construct {
  readonly kind: 'dynamodb' | 'glue' | 's3tables'
  readonly table?: dynamodb.Table
  /** catalog s3tables: the table bucket's ARN (created or given) and the namespace. */
  readonly tableBucketArn?: string
  readonly tableBucket?: s3tables.CfnTableBucket
  readonly namespace?: string
  readonly database?: glue.CfnDatabase
  readonly databaseName?: string

  constructor(scope: Construct, id: string, props: CatalogProps) {
    super(scope, id)
    this.kind = props.kind
    if (props.kind === 'dynamodb') {
      this.table = table(this, 'Table', CATALOG_TABLE, props.tableName)
    } else if (props.kind === 's3tables') {
      if (!props.bucketArn) {
        // S3 Tables compacts, expires snapshots and removes unreferenced files itself (Floe's
        // maintenance schedule is off for this catalog): turn its unreferenced-file removal on.
        this.tableBucket = new s3tables.CfnTableBucket(this, 'TableBucket', {
          tableBucketName: props.bucketName,
          unreferencedFileRemoval: { status: 'Enabled', unreferencedDays: 3, noncurrentDays: 10 },
        })
      }
      this.tableBucketArn = props.bucketArn ?? this.tableBucket!.attrTableBucketArn
      this.namespace = props.namespace
      const ns = new s3tables.CfnNamespace(this, 'Namespace', { tableBucketArn: this.tableBucketArn, namespace: props.namespace })
      if (this.tableBucket) ns.addDependency(this.tableBucket)
    } else {
      this.databaseName = props.database
      this.database = new glue.CfnDatabase(this, 'Database', {
        catalogId: Stack.of(this).account,
        databaseInput: { name: props.database, description: 'Iceberg tables written by Floe' },
      })
    }
  }

  get settings(): CatalogSettings {
    if (this.kind === 's3tables') {
      const region = Stack.of(this).region
      return { FLOE_CATALOG: 'rest', FLOE_REST_URI: `https://s3tables.${region}.amazonaws.com/iceberg`, FLOE_REST_WAREHOUSE: this.tableBucketArn!, FLOE_REST_AUTH: 'sigv4', FLOE_REST_SIGNING_NAME: 's3tables' }
    }
    return this.table ? { FLOE_CATALOG: 'dynamodb', FLOE_CATALOG_TABLE: this.table.tableName } : { FLOE_CATALOG: 'glue' }
  }

  /**
   * Both functions load tables and commit (the writer creates tables and evolves schemas; the
   * committer appends snapshots). Nobody drops tables or namespaces through Floe. `read`: load
   * tables only (the maintenance function).
   */
  grant(grantee: iam.IGrantable, access: 'readwrite' | 'read' = 'readwrite'): void {
    const read = access === 'read'
    if (this.table) {
      grantee.grantPrincipal.addToPrincipalPolicy(
        new iam.PolicyStatement({
          sid: 'CatalogTable',
          actions: read ? ['dynamodb:GetItem'] : ['dynamodb:DescribeTable', 'dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
          resources: [this.table.tableArn, `${this.table.tableArn}/index/${CATALOG_TABLE.indexes[0].name}`],
        }),
      )
      return
    }
    if (this.kind === 's3tables') {
      // The table bucket and its tables only (data access through the S3 API is authorised as
      // s3tables:GetTableData / PutTableData on the table, so s3tables:* covers it).
      const tablesOfBucket = `${this.tableBucketArn}/table/*`
      grantee.grantPrincipal.addToPrincipalPolicy(
        new iam.PolicyStatement({
          sid: 'S3TablesCatalog',
          actions: read ? ['s3tables:GetTableBucket', 's3tables:GetNamespace', 's3tables:GetTable', 's3tables:GetTableMetadataLocation', 's3tables:GetTableData'] : ['s3tables:*'],
          resources: [this.tableBucketArn!, tablesOfBucket],
        }),
      )
      const why = 'Tables are created at run time (auto-create from routes) in the one table bucket the stack names; s3tables:* is limited to that bucket and its tables.'
      acknowledgeWildcardResources(policyScope(grantee), [tablesOfBucket], why)
      if (!read) Validations.of(policyScope(grantee)).acknowledge({ id: 'AwsSolutions-IAM5[Action::s3tables:*]', reason: why })
      return
    }
    const stack = Stack.of(this)
    const tables = stack.formatArn({ service: 'glue', resource: 'table', resourceName: `${this.databaseName}/*` })
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'GlueCatalog',
        // CreateDatabase: the writer ensures a table's namespace exists before creating the table;
        // on the stack's database that answers AlreadyExists, which it expects (without the
        // permission it would get AccessDenied instead).
        actions: read ? ['glue:GetTable'] : ['glue:GetDatabase', 'glue:CreateDatabase', 'glue:GetTable', 'glue:GetTables', 'glue:CreateTable', 'glue:UpdateTable'],
        // Glue authorizes table actions on the catalog, the database and the table.
        resources: [stack.formatArn({ service: 'glue', resource: 'catalog' }), stack.formatArn({ service: 'glue', resource: 'database', resourceName: this.databaseName }), tables],
      }),
    )
    acknowledgeWildcardResources(policyScope(grantee), [tables], read ? 'Tables are created at run time (auto-create from routes); read access is limited to the one database the stack owns.' : 'Tables are created at run time (auto-create from routes); access is limited to the one database the stack owns.')
  }
}
