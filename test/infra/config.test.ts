import { App } from 'aws-cdk-lib'
import { describe, expect, it } from 'vitest'
import { parseStackConfig, readContext } from '../../infra/config.js'
import { FloeStack } from '../../infra/floe-stack.js'
import { ConfigError } from '../../lib/errors.js'
import { MSK_ARN } from './stack-fixture.js'

const base = { mskClusterArn: MSK_ARN, topics: ['orders'] }

function errorOf(raw: Record<string, unknown>): ConfigError {
  try {
    parseStackConfig(raw)
  } catch (err) {
    if (err instanceof ConfigError) return err
    throw err
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(raw)}`)
}

describe('stack context validation', () => {
  it('a missing required key is named', () => {
    expect(errorOf({ mskClusterArn: MSK_ARN }).message).toMatch(/^context key 'topics': .*not set/)
  })

  it('an out-of-range batch size names the key, the limit and the value', () => {
    const err = errorOf({ ...base, batchSize: 20_000 })
    expect(err.key).toBe("context key 'batchSize'")
    expect(err.message).toMatch(/10000.*got 20000/)
  })

  it('a batching window over 300 s is rejected', () => {
    expect(errorOf({ ...base, maxBatchingWindowSeconds: 301 }).message).toMatch(/^context key 'maxBatchingWindowSeconds': .*300.*got 301/)
  })

  it('a topic the mapping would reject is named before deploy', () => {
    expect(errorOf({ ...base, topics: ['orders', '.hidden'] }).message).toMatch(/^context key 'topics': .* at 1; got/)
  })

  it('a malformed MSK ARN is rejected with the value', () => {
    expect(errorOf({ ...base, mskClusterArn: 'arn:aws:kafka:us-east-1:1:cluster/x' }).message).toMatch(/^context key 'mskClusterArn': .*got "arn:aws:kafka:us-east-1:1:cluster\/x"/)
  })

  it('MSK and self-managed brokers together are rejected', () => {
    expect(errorOf({ ...base, bootstrapServers: ['b1:9092'] }).key).toBe("context key 'mskClusterArn'")
  })

  it('self-managed Kafka with SASL needs the secret', () => {
    expect(errorOf({ bootstrapServers: ['b1:9096'], topics: ['t1'] }).key).toBe("context key 'kafkaSecretArn'")
  })

  it('subnets without security groups are rejected', () => {
    const err = errorOf({ bootstrapServers: ['b1:9092'], kafkaAuth: 'none', topics: ['t1'], subnetIds: ['subnet-0abc'] })
    expect(err.key).toBe("context key 'securityGroupIds'")
  })

  it('invalid routes name the routes key and the path', () => {
    const err = errorOf({ ...base, routes: { routes: [{ table: 'a', bogus: 1 }] } })
    expect(err.key).toBe("context key 'routes'")
    expect(err.message).toMatch(/routes\.0/)
  })

  it('glue without a database is rejected', () => {
    expect(errorOf({ ...base, catalog: 'glue' }).key).toBe("context key 'glueDatabase'")
  })

  it('settings may not override what the stack sets', () => {
    expect(errorOf({ ...base, settings: { FLOE_WAREHOUSE: 's3://x/y' } }).message).toMatch(/FLOE_WAREHOUSE is set by the stack/)
  })

  it('settings are validated with the functions\' own rules', () => {
    expect(errorOf({ ...base, settings: { FLOE_COMMIT_CONCURRENCY: 0 } }).message).toMatch(/^context key 'settings': FLOE_COMMIT_CONCURRENCY/)
    expect(errorOf({ ...base, settings: { FLOE_NOPE: 1 } }).message).toMatch(/unknown setting FLOE_NOPE/)
  })

  it('overlapping warehouse and dead-letter prefixes are rejected (dead letters expire)', () => {
    expect(errorOf({ ...base, warehousePrefix: 'w', deadLetterPrefix: 'w/dl' }).key).toBe("context key 'deadLetterPrefix'")
  })

  it('an unknown key given as a prop is named', () => {
    expect(errorOf({ ...base, batchsize: 5 }).message).toMatch(/'batchsize'.*unknown context key/)
  })

  it('defaults: 10,000 records, 30 s window, TRIM_HORIZON, one minute commits', () => {
    const c = parseStackConfig(base)
    expect([c.batchSize, c.maxBatchingWindowSeconds, c.startingPosition, c.commitSchedule]).toEqual([10_000, 30, 'TRIM_HORIZON', 'rate(1 minute)'])
    expect(c.kafka).toEqual({ kind: 'msk', clusterArn: MSK_ARN, auth: 'iam', secretArn: undefined })
    expect(c.consumerGroups.get('orders')).toBe('floe-floe')
  })

  it('with several topics every mapping gets its own consumer group (Lambda requires unique ids)', () => {
    const c = parseStackConfig({ ...base, topics: ['aa', 'bb'], consumerGroupId: 'g' })
    expect([...c.consumerGroups]).toEqual([['aa', 'g.aa'], ['bb', 'g.bb']])
  })

  it('command-line context (-c key=value strings) is parsed: numbers and JSON', () => {
    const app = new App({ context: { topics: '["xx","yy"]', batchSize: '500', mskClusterArn: MSK_ARN } })
    const c = parseStackConfig(readContext(app.node))
    expect(c.topics).toEqual(['xx', 'yy'])
    expect(c.batchSize).toBe(500)
  })

  it('a stack built from invalid app context fails naming the key', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [], ...base, startingPosition: 'EARLIEST' } })
    expect(() => new FloeStack(app, 'Bad')).toThrow(/context key 'startingPosition'.*got "EARLIEST"/)
  })
})
