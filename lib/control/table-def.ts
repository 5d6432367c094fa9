/**
 * Key schema of the control table: shared by `floe init` (local) and the CDK stack (AWS) so
 * both create the same table. Items are distinguished by key prefixes (see lib/control/keys.ts).
 */
export const CONTROL_TABLE = {
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'S' },
  /** DynamoDB TTL attribute (epoch seconds): committed batches and released leases expire. */
  ttlAttribute: 'ttl',
  /** Sparse index of pending batches per pipeline, so a committer finds tables with work. */
  indexes: [{ name: 'pending', partitionKey: { name: 'gsi1pk', type: 'S' }, sortKey: { name: 'gsi1sk', type: 'S' } }],
} as const
