/**
 * The warehouse: one bucket (new, or an existing one by name) with `<warehousePrefix>/` for
 * Iceberg tables (data, metadata, Floe's spill files under `_floe/`). Dead letters hold raw
 * records and live apart, KMS-encrypted (raw-records.ts). Grants are per prefix and per action,
 * never the whole bucket.
 */
import * as iam from 'aws-cdk-lib/aws-iam'
import * as s3 from 'aws-cdk-lib/aws-s3'
import { Construct } from 'constructs'
import { acknowledgeWildcardResources, policyScope } from '../nag.js'
import { secureBucket } from './secure-bucket.js'

export interface WarehouseProps {
  /** An existing bucket; default: a new one. */
  bucketName?: string
  /** Where the new bucket's server access logs go. */
  accessLogs: s3.IBucket
  warehousePrefix: string
}

export class Warehouse extends Construct {
  readonly bucket: s3.IBucket
  readonly warehousePrefix: string

  constructor(scope: Construct, id: string, props: WarehouseProps) {
    super(scope, id)
    this.warehousePrefix = props.warehousePrefix
    if (props.bucketName !== undefined) {
      // Lifecycle and logging of an existing bucket stay its owner's business (docs/deploy.md).
      this.bucket = s3.Bucket.fromBucketName(this, 'Bucket', props.bucketName)
    } else {
      this.bucket = secureBucket(this, 'Bucket', { accessLogs: { bucket: props.accessLogs, prefix: 'warehouse/' } })
    }
  }

  /** `s3://bucket/prefix` for FLOE_WAREHOUSE. */
  get warehouseUrl(): string {
    return `s3://${this.bucket.bucketName}/${this.warehousePrefix}`
  }

  /**
   * Table files, the same for both functions: read, write and list data and metadata files;
   * delete them too — a stale writer removes its own files, a committer that lost the catalog
   * race removes its new metadata file, and both remove spilled batch file lists.
   */
  grantTableFiles(grantee: iam.IGrantable): void {
    const objects = this.bucket.arnForObjects(`${this.warehousePrefix}/*`)
    addStatement(grantee, {
      sid: 'WarehouseObjects',
      actions: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:AbortMultipartUpload'],
      resources: [objects],
    })
    addStatement(grantee, {
      sid: 'WarehouseList',
      actions: ['s3:ListBucket'],
      resources: [this.bucket.bucketArn],
      conditions: { StringLike: { 's3:prefix': [`${this.warehousePrefix}/*`, this.warehousePrefix] } },
    })
    acknowledgeWildcardResources(policyScope(grantee), [objects], 'Object keys under the warehouse prefix are table locations created at run time (one per table, partition and commit); the prefix is the narrowest fixed scope.')
  }

  /**
   * Orphan cleanup: read and list table files; delete only under tables' `data/` and `metadata/`
   * folders and Floe's spilled batch file lists. Never write, never touch dead letters.
   */
  grantTableMaintenance(grantee: iam.IGrantable): void {
    const objects = this.bucket.arnForObjects(`${this.warehousePrefix}/*`)
    const deletable = [
      this.bucket.arnForObjects(`${this.warehousePrefix}/*/data/*`),
      this.bucket.arnForObjects(`${this.warehousePrefix}/*/metadata/*`),
      this.bucket.arnForObjects(`${this.warehousePrefix}/_floe/spill/*`),
    ]
    addStatement(grantee, { sid: 'WarehouseRead', actions: ['s3:GetObject'], resources: [objects] })
    addStatement(grantee, {
      sid: 'WarehouseList',
      actions: ['s3:ListBucket'],
      resources: [this.bucket.bucketArn],
      conditions: { StringLike: { 's3:prefix': [`${this.warehousePrefix}/*`, this.warehousePrefix] } },
    })
    addStatement(grantee, { sid: 'OrphanDelete', actions: ['s3:DeleteObject'], resources: deletable })
    acknowledgeWildcardResources(policyScope(grantee), [objects], 'Orphan cleanup reads metadata, manifests and spilled file lists of tables created at run time; read only, under the warehouse prefix.')
    acknowledgeWildcardResources(
      policyScope(grantee),
      deletable,
      "Orphan cleanup deletes unreferenced files of tables created at run time: only their data/ and metadata/ folders and Floe's spilled file lists.",
    )
  }
}

function addStatement(grantee: iam.IGrantable, props: iam.PolicyStatementProps): void {
  grantee.grantPrincipal.addToPrincipalPolicy(new iam.PolicyStatement(props))
}
