import { describe, expect, it } from 'vitest'
import { parseKafkaEvent, parsePartitionKey, partitionKey } from '../../lib/kafka/index.js'

describe('the topic-partition key', () => {
  it('is "<topic>-<partition>", read back with the partition after the last dash', () => {
    expect(partitionKey('orders-eu', 3)).toBe('orders-eu-3')
    expect(parsePartitionKey('orders-eu-3')).toEqual({ topic: 'orders-eu', partition: 3 })
    expect(parsePartitionKey(partitionKey('a-b-c', 2_147_483_647))).toEqual({ topic: 'a-b-c', partition: 2_147_483_647 })
  })

  it('refuses text that is not a key, naming it', () => {
    for (const bad of ['orders', '-3', 'orders-', 'orders-x', 'orders-0x10', 'orders-2147483648'])
      expect(() => parsePartitionKey(bad), bad).toThrow(`not a "topic-partition" key: ${JSON.stringify(bad)}`)
  })

  it('is the rule the event parser uses for a record without its own topic and partition', () => {
    const [record] = parseKafkaEvent({ eventSource: 'aws:kafka', records: { 'orders-eu-7': [{ offset: 5, timestamp: 1, value: null }] } })
    expect({ topic: record!.topic, partition: record!.partition }).toEqual(parsePartitionKey('orders-eu-7'))
  })
})
