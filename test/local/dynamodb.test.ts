import { describe, expect, it } from 'vitest'
import { ConditionalCheckFailedException, DescribeTableCommand, DescribeTimeToLiveCommand, TransactionCanceledException } from '@aws-sdk/client-dynamodb'
import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb'
import { createTestCatalogTable, createTestControlTable, testAws } from '../helpers/aws.js'
import { ensureCatalogTable, ensureControlTable } from '../../lib/local/init.js'

describe('DynamoDB Local', () => {
  it('rejects a conditional put whose condition fails, and keeps the first item', async () => {
    const { doc } = testAws()
    const table = await createTestControlTable()
    await doc.send(new PutCommand({ TableName: table, Item: { pk: 'p', sk: 's', offset: '9007199254740993' }, ConditionExpression: 'attribute_not_exists(pk)' }))
    const second = doc.send(new PutCommand({ TableName: table, Item: { pk: 'p', sk: 's', offset: '1' }, ConditionExpression: 'attribute_not_exists(pk)' }))
    await expect(second).rejects.toBeInstanceOf(ConditionalCheckFailedException)
    const { Item } = await doc.send(new GetCommand({ TableName: table, Key: { pk: 'p', sk: 's' }, ConsistentRead: true }))
    expect(Item?.offset).toBe('9007199254740993')
  })

  it('cancels a whole transaction when one condition fails, with a reason per item', async () => {
    const { doc } = testAws()
    const table = await createTestControlTable()
    await doc.send(new PutCommand({ TableName: table, Item: { pk: 'cp', sk: 'topic-0', next: '10' } }))
    const tx = doc.send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: table, Item: { pk: 'batch', sk: 'b1', files: [] } } },
          {
            Update: {
              TableName: table,
              Key: { pk: 'cp', sk: 'topic-0' },
              UpdateExpression: 'SET #n = :next',
              ConditionExpression: '#n = :expected',
              ExpressionAttributeNames: { '#n': 'next' },
              ExpressionAttributeValues: { ':next': '20', ':expected': '5' },
            },
          },
        ],
      }),
    )
    const err = await tx.then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(TransactionCanceledException)
    const codes = (err as TransactionCanceledException).CancellationReasons?.map((r) => r.Code)
    expect(codes).toEqual(['None', 'ConditionalCheckFailed'])
    // Nothing of the cancelled transaction was applied.
    const batch = await doc.send(new GetCommand({ TableName: table, Key: { pk: 'batch', sk: 'b1' }, ConsistentRead: true }))
    expect(batch.Item).toBeUndefined()
    const cp = await doc.send(new GetCommand({ TableName: table, Key: { pk: 'cp', sk: 'topic-0' }, ConsistentRead: true }))
    expect(cp.Item?.next).toBe('10')
  })

  it('creates the control table with its keys, pending index and TTL, and finds it the second time', async () => {
    const { ddb } = testAws()
    const table = await createTestControlTable()
    expect(await ensureControlTable(ddb, table)).toBe('exists')
    const { Table } = await ddb.send(new DescribeTableCommand({ TableName: table }))
    expect(Table?.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ])
    expect(Table?.GlobalSecondaryIndexes?.map((i) => i.IndexName)).toEqual(['pending'])
    const ttl = await ddb.send(new DescribeTimeToLiveCommand({ TableName: table }))
    expect(ttl.TimeToLiveDescription?.AttributeName).toBe('ttl')
  })

  it("creates the catalog table in Iceberg Java's DynamoDbCatalog layout", async () => {
    const { ddb } = testAws()
    const table = await createTestCatalogTable()
    expect(await ensureCatalogTable(ddb, table)).toBe('exists')
    const { Table } = await ddb.send(new DescribeTableCommand({ TableName: table }))
    expect(Table?.KeySchema).toEqual([
      { AttributeName: 'identifier', KeyType: 'HASH' },
      { AttributeName: 'namespace', KeyType: 'RANGE' },
    ])
    const gsi = Table?.GlobalSecondaryIndexes?.[0]
    expect(gsi?.IndexName).toBe('namespace-identifier')
    expect(gsi?.KeySchema).toEqual([
      { AttributeName: 'namespace', KeyType: 'HASH' },
      { AttributeName: 'identifier', KeyType: 'RANGE' },
    ])
    expect(gsi?.Projection?.ProjectionType).toBe('KEYS_ONLY')
  })
})
