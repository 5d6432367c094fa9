import { describe, expect, it } from 'vitest'
import { describeEventPartitions, parseKafkaEvent, parsePartitionKey, partitionKey } from '../../lib/kafka/index.js'

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

describe('describeEventPartitions (the writer log line)', () => {
  it('gives each group its first and last offset as listed and its record count, without decoding', () => {
    const event = { eventSource: 'aws:kafka', records: { 'a-0': [{ offset: 15 }, { offset: 9 }, { offset: 42 }], 'b-1': [{}], 'c-2': [], 'd-3': 'junk' } }
    expect(describeEventPartitions(event)).toEqual({ 'a-0': '15..42 (3)', 'b-1': '?..? (1)' })
  })

  it('never throws on an event that is not one', () => {
    for (const bad of [null, undefined, 5, 'x', {}, { records: null }, { records: 3 }]) expect(() => describeEventPartitions(bad)).not.toThrow()
    expect(describeEventPartitions({ records: null })).toBeUndefined()
  })
})
