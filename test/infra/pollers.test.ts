/**
 * Provisioned mode for high-partition topics (docs/scale.md, docs/deploy.md): the context keys
 * minimumPollers / maximumPollers / pollerGroupName become the mapping's ProvisionedPollerConfig;
 * without them the mapping stays on-demand. Bad combinations fail at synth and name the key.
 */
import { describe, expect, it } from 'vitest'
import { App } from 'aws-cdk-lib'
import { parseStackConfig, readContext } from '../../infra/config.js'
import { ConfigError } from '../../lib/errors.js'
import { MINIMAL, MSK_ARN, synth } from './stack-fixture.js'

// oxlint-disable-next-line typescript/no-explicit-any -- CloudFormation properties are untyped JSON
type Props = Record<string, any>

const mappings = (config: Parameters<typeof synth>[0]) =>
  Object.values(synth(config).template.findResources('AWS::Lambda::EventSourceMapping')).map((r) => (r as { Properties: Props }).Properties)

function errorOf(raw: Record<string, unknown>): ConfigError {
  try {
    parseStackConfig(raw)
  } catch (err) {
    if (err instanceof ConfigError) return err
    throw err
  }
  throw new Error('expected a ConfigError')
}

describe('event pollers', { timeout: 180_000 }, () => {
  it('minimumPollers and maximumPollers put every mapping in provisioned mode; without them it stays on-demand', () => {
    for (const m of mappings({ ...MINIMAL, minimumPollers: 20, maximumPollers: 400, pollerGroupName: 'floe-ingest', batchSize: 10_000, maxBatchingWindowSeconds: 10 })) {
      expect(m.ProvisionedPollerConfig).toEqual({ MinimumPollers: 20, MaximumPollers: 400, PollerGroupName: 'floe-ingest' })
      expect(m.BatchSize).toBe(10_000)
      expect(m.MaximumBatchingWindowInSeconds).toBe(10)
    }
    for (const m of mappings(MINIMAL)) expect(m.ProvisionedPollerConfig).toBeUndefined()
  })

  it('reads the keys from -c context as strings, and names the key of a bad value', () => {
    const app = new App({ context: { mskClusterArn: MSK_ARN, topics: '["orders"]', minimumPollers: '5', maximumPollers: '50' } })
    const c = parseStackConfig(readContext(app.node))
    expect([c.minimumPollers, c.maximumPollers]).toEqual([5, 50])
    expect(errorOf({ mskClusterArn: MSK_ARN, topics: ['orders'], maximumPollers: 2_001 }).key).toBe("context key 'maximumPollers'")
    expect(errorOf({ mskClusterArn: MSK_ARN, topics: ['orders'], minimumPollers: 0 }).key).toBe("context key 'minimumPollers'")
    expect(errorOf({ mskClusterArn: MSK_ARN, topics: ['orders'], minimumPollers: 10, maximumPollers: 5 }).message).toMatch(/maximumPollers.*at least minimumPollers \(10\); got 5/)
    expect(errorOf({ mskClusterArn: MSK_ARN, topics: ['orders'], pollerGroupName: 'g' }).message).toMatch(/pollerGroupName.*provisioned mode/)
  })
})
