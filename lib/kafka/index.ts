/** Kafka event decoding at the Lambda boundary. */
export { parseKafkaEvent, parseRecord, isKafkaEvent, isTombstone, parseOffset, decodeBase64, KAFKA_EVENT_SOURCES } from './event.js'
export type { KafkaRecord, KafkaHeader, RawKafkaEvent } from './event.js'
export { partitionKey, parsePartitionKey } from './partition-key.js'
export { describeEventPartitions, eventPartitions, groupByPartition } from './partitions.js'
export type { EventPartition } from './partitions.js'
export { recordBytes, batchBytes, rawRecordBytes } from './size.js'
