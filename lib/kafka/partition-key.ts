/**
 * The topic-partition key, `"<topic>-<partition>"`: how the Lambda event groups its records, and
 * the key of every offset map (control-table checkpoints, snapshot summaries), as in Kafka
 * Connect's offsets. The partition is after the last dash (topics may contain dashes).
 */

const KEY = /^(.*)-(\d{1,10})$/
const MAX_PARTITION = 2_147_483_647

export function partitionKey(topic: string, partition: number): string {
  return `${topic}-${partition}`
}

/** Topic and partition of a key, or undefined when the text is not one (partition not a non-negative 32-bit integer). */
export function splitPartitionKey(key: string): { topic: string; partition: number } | undefined {
  const m = KEY.exec(key)
  return m && Number(m[2]) <= MAX_PARTITION ? { topic: m[1]!, partition: Number(m[2]) } : undefined
}

/** Inverse of partitionKey; throws on text that is not a key or has an empty topic. */
export function parsePartitionKey(key: string): { topic: string; partition: number } {
  const parsed = splitPartitionKey(key)
  if (parsed === undefined || parsed.topic === '') throw new Error(`not a "topic-partition" key: ${JSON.stringify(key)}`)
  return parsed
}
