/**
 * S3 Tables as a deployment target (context catalog=s3tables) and the REST catalog endpoint
 * (context restEndpoint): resources, the functions' REST settings (parsed by the functions' own
 * config loader), IAM limited to the one table bucket, Floe's maintenance schedule off, cdk-nag.
 */
import { AwsSolutionsChecks } from 'cdk-nag'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../lib/config.js'
import { MINIMAL, resolveIntrinsics, synth, type Synthesized } from './stack-fixture.js'

// oxlint-disable-next-line typescript/no-explicit-any -- CloudFormation properties are untyped JSON
type Props = Record<string, any>
const resources = (s: Synthesized, type: string) => Object.entries(s.template.findResources(type)) as [string, { Properties: Props }][]
const fnEnv = (s: Synthesized, logicalPrefix: string) => resources(s, 'AWS::Lambda::Function').find(([id]) => id.startsWith(logicalPrefix))![1].Properties.Environment.Variables as Record<string, unknown>
const statements = (s: Synthesized) => resources(s, 'AWS::IAM::Policy').flatMap(([, r]) => r.Properties.PolicyDocument.Statement as Props[])
const BUCKET_ARN = 'arn:aws:s3tables:eu-west-1:111122223333:bucket/lake'

describe('catalog s3tables', () => {
  const created = synth({ ...MINIMAL, catalog: 's3tables', tableNamespace: 'events' })

  it('creates a table bucket (unreferenced-file removal on) and the namespace; the functions speak REST with SigV4 signing name s3tables', () => {
    created.template.hasResourceProperties('AWS::S3Tables::TableBucket', { TableBucketName: 'floe-floe', UnreferencedFileRemoval: { Status: 'Enabled' } })
    created.template.hasResourceProperties('AWS::S3Tables::Namespace', { Namespace: 'events' })
    for (const fn of ['Writer', 'Committer', 'Replay']) {
      const env = resolveIntrinsics(fnEnv(created, fn)) as Record<string, string>
      expect(env).toMatchObject({ FLOE_CATALOG: 'rest', FLOE_REST_URI: 'https://s3tables.eu-west-1.amazonaws.com/iceberg', FLOE_REST_AUTH: 'sigv4', FLOE_REST_SIGNING_NAME: 's3tables' })
      expect(JSON.parse(env.FLOE_ROUTES!)).toMatchObject({ defaultNamespace: 'events' })
      const config = loadConfig(env)
      expect(config.rest).toMatchObject({ auth: 'sigv4', signingName: 's3tables', uri: 'https://s3tables.eu-west-1.amazonaws.com/iceberg' })
      expect(config.rest!.warehouse).toMatch(/tablebucket/i)
    }
  })

  it('IAM: s3tables actions on that table bucket and its tables only; no DynamoDB catalog table', () => {
    const st = statements(created).filter((x) => x.Sid === 'S3TablesCatalog')
    expect(st.length).toBeGreaterThanOrEqual(3)
    for (const s of st) {
      const res = resolveIntrinsics(s.Resource) as string[]
      expect(res).toHaveLength(2)
      expect(res[1]).toBe(`${res[0]}/table/*`)
    }
    expect(statements(created).some((x) => x.Sid === 'CatalogTable')).toBe(false)
    expect(resources(created, 'AWS::DynamoDB::Table')).toHaveLength(1) // the control table only
  })

  it("Floe's maintenance schedule is off (S3 Tables maintains its tables); the commit schedule stays", () => {
    const schedules = resources(created, 'AWS::Scheduler::Schedule')
    expect(schedules).toHaveLength(1)
    expect(JSON.stringify(schedules[0]![1].Properties.Target)).toContain('Committer')
    expect(created.stack.maintenanceSchedule).toBeUndefined()
  })

  it('uses an existing table bucket when given its ARN: no bucket resource, the policy names that ARN', () => {
    const given = synth({ ...MINIMAL, catalog: 's3tables', tableNamespace: 'events', tableBucketArn: BUCKET_ARN })
    expect(resources(given, 'AWS::S3Tables::TableBucket')).toHaveLength(0)
    given.template.hasResourceProperties('AWS::S3Tables::Namespace', { TableBucketARN: BUCKET_ARN, Namespace: 'events' })
    expect(fnEnv(given, 'Committer').FLOE_REST_WAREHOUSE).toBe(BUCKET_ARN)
    const st = statements(given).find((x) => x.Sid === 'S3TablesCatalog')!
    expect(st.Resource).toEqual([BUCKET_ARN, `${BUCKET_ARN}/table/*`])
    expect(new AwsSolutionsChecks().validateScope(given.stack).violations).toEqual([])
  })

  it('bad combinations fail at synth and name the key', () => {
    expect(() => synth({ ...MINIMAL, catalog: 's3tables' })).toThrow(/tableNamespace'?: required with catalog s3tables/)
    expect(() => synth({ ...MINIMAL, tableNamespace: 'events' })).toThrow(/tableNamespace'?: only with catalog s3tables/)
    expect(() => synth({ ...MINIMAL, catalog: 's3tables', tableNamespace: 'events', tableBucketArn: BUCKET_ARN, tableBucketName: 'lake' })).toThrow(/tableBucketName/)
    expect(() => synth({ ...MINIMAL, catalog: 's3tables', tableNamespace: 'Events' })).toThrow(/tableNamespace/)
    expect(() => synth({ ...MINIMAL, catalog: 's3tables', tableNamespace: 'events', routes: { defaultNamespace: 'other', routes: [{ table: '{topic}' }] } })).toThrow(/differs from tableNamespace/)
    expect(() => synth({ ...MINIMAL, catalog: 'glue', glueDatabase: 'db', restEndpoint: true })).toThrow(/restEndpoint'?: serves the DynamoDB catalog/)
  })
})

describe('restEndpoint', () => {
  it('a REST catalog function behind a function URL with IAM auth, on the DynamoDB catalog, with its URL as an output', () => {
    const s = synth({ ...MINIMAL, restEndpoint: true })
    s.template.hasResourceProperties('AWS::Lambda::Url', { AuthType: 'AWS_IAM' })
    const env = resolveIntrinsics(fnEnv(s, 'RestCatalog')) as Record<string, string>
    expect(env.FLOE_CATALOG).toBe('dynamodb')
    expect(loadConfig(env).catalogTable).toBe(env.FLOE_CATALOG_TABLE)
    expect(Object.keys(s.template.findOutputs('RestCatalogUrl'))).toEqual(['RestCatalogUrl'])
    expect(resources(synth(), 'AWS::Lambda::Url')).toHaveLength(0)
  })
})
