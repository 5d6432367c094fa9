/**
 * The self-managed Kafka source in the template, beside MSK: each authentication kind becomes
 * the mapping's SourceAccessConfiguration with the secret, the writer may read that secret and
 * nothing of MSK's, VPC network-interface actions appear only when the brokers are private, and
 * cdk-nag finds nothing unacknowledged in any variant.
 */
import { AwsSolutionsChecks } from 'cdk-nag'
import { describe, expect, it } from 'vitest'
import { VPC_ACCESS_ACTIONS } from '../../infra/constructs/kafka-source.js'
import { synth, type Synthesized } from './stack-fixture.js'

const SECRET = 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:kafka-client-AbCdEf'
// oxlint-disable-next-line typescript/no-explicit-any -- CloudFormation properties are untyped JSON
type Props = Record<string, any>
const mappings = (s: Synthesized) => Object.values(s.template.findResources('AWS::Lambda::EventSourceMapping')).map((r) => (r as { Properties: Props }).Properties)
const actions = (s: Synthesized) =>
  Object.values(s.template.findResources('AWS::IAM::Policy')).flatMap((r) =>
    ((r as { Properties: Props }).Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]).flatMap((st) => (Array.isArray(st.Action) ? st.Action : [st.Action]).map((a) => ({ action: a, resource: st.Resource }))),
  )

// The first synth loads aws-cdk-lib and cdk-nag: slow on a busy 2-core machine.
describe('self-managed Kafka source', { timeout: 180_000 }, () => {
  it.each([
    ['sasl-scram-256', 'SASL_SCRAM_256_AUTH'],
    ['sasl-scram-512', 'SASL_SCRAM_512_AUTH'],
    ['basic', 'BASIC_AUTH'],
    ['mtls', 'CLIENT_CERTIFICATE_TLS_AUTH'],
  ] as const)('%s: the mapping authenticates with the secret (%s), the writer reads only that secret', (kafkaAuth, type) => {
    const s = synth({ bootstrapServers: ['kafka-1.example.com:9094'], kafkaAuth, kafkaSecretArn: SECRET, topics: ['orders', 'refunds'] })
    const ms = mappings(s)
    expect(ms).toHaveLength(2)
    for (const m of ms) {
      expect(m.SelfManagedEventSource).toEqual({ Endpoints: { KafkaBootstrapServers: ['kafka-1.example.com:9094'] } })
      expect(m.EventSourceArn).toBeUndefined()
      expect(m.SourceAccessConfigurations).toEqual([{ Type: type, URI: SECRET }])
    }
    // One group per mapping (Lambda requires it): <group>.<topic>.
    expect(ms.map((m) => m.SelfManagedKafkaEventSourceConfig.ConsumerGroupId).sort()).toEqual(['floe-floe.orders', 'floe-floe.refunds'])
    const all = actions(s)
    expect(all.filter((a) => a.action === 'secretsmanager:GetSecretValue').map((a) => a.resource)).toEqual([SECRET])
    expect(all.filter((a) => a.action.startsWith('kafka:') || a.action.startsWith('kafka-cluster:'))).toEqual([])
    // Public brokers: no network interfaces, so no EC2 actions at all.
    expect(all.filter((a) => VPC_ACCESS_ACTIONS.includes(a.action))).toEqual([])
    expect(new AwsSolutionsChecks().validateScope(s.stack).violations).toEqual([])
  })

  it('no authentication (a private cluster on its own network): no secret, only the VPC configuration', () => {
    const s = synth({ bootstrapServers: ['10.0.1.5:9092'], kafkaAuth: 'none', topics: ['t1'], subnetIds: ['subnet-0a1'], securityGroupIds: ['sg-0c3'] })
    expect(mappings(s)[0]!.SourceAccessConfigurations).toEqual([
      { Type: 'VPC_SUBNET', URI: 'subnet:subnet-0a1' },
      { Type: 'VPC_SECURITY_GROUP', URI: 'security_group:sg-0c3' },
    ])
    const all = actions(s)
    expect(all.filter((a) => a.action.startsWith('secretsmanager:'))).toEqual([])
    expect(all.filter((a) => VPC_ACCESS_ACTIONS.includes(a.action)).map((a) => a.action).sort()).toEqual([...VPC_ACCESS_ACTIONS].sort())
    expect(new AwsSolutionsChecks().validateScope(s.stack).violations).toEqual([])
  })
})
