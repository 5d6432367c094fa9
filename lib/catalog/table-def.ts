/**
 * Key schema of the DynamoDB catalog table, exactly as Apache Iceberg Java's DynamoDbCatalog
 * creates it (aws/src/main/java/org/apache/iceberg/aws/dynamodb/DynamoDbCatalog.java), so Spark,
 * Flink and EMR can share the table. Shared by `floe init` and the CDK stack.
 */
export const CATALOG_TABLE = {
  defaultName: 'iceberg',
  partitionKey: { name: 'identifier', type: 'S' },
  sortKey: { name: 'namespace', type: 'S' },
  indexes: [{ name: 'namespace-identifier', partitionKey: { name: 'namespace', type: 'S' }, sortKey: { name: 'identifier', type: 'S' } }],
} as const
