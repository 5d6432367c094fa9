import { spawn } from 'node:child_process'
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb'
import { HeadBucketCommand } from '@aws-sdk/client-s3'
import { describe, expect, it } from 'vitest'
import { testAws, uniqueName } from '../helpers/aws.js'

/** Runs `floe init` as a user would, with only the environment to configure it. */
function floeInit(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('FLOE_')))
    const child = spawn(process.execPath, ['bin/floe.mjs', 'init'], { env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

describe('floe init', () => {
  it('creates the control table, catalog table and bucket, and succeeds again finding them', async () => {
    const aws = testAws()
    const control = uniqueName('ctl')
    const catalog = uniqueName('cat')
    const bucket = uniqueName('wh')
    const env = {
      FLOE_CONTROL_TABLE: control,
      FLOE_CATALOG_TABLE: catalog,
      FLOE_WAREHOUSE: `s3://${bucket}/warehouse`,
      AWS_ENDPOINT_URL_S3: aws.endpoints.s3,
      AWS_ENDPOINT_URL_DYNAMODB: aws.endpoints.dynamodb,
    }
    const first = await floeInit(env)
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    expect(first.stdout).toContain(`created control table ${control}`)
    expect(first.stdout).toContain(`created catalog table ${catalog}`)
    expect(first.stdout).toContain(`created bucket ${bucket}`)

    const second = await floeInit(env)
    expect(second.code).toBe(0)
    expect(second.stdout).not.toContain('created')
    expect(second.stdout).toContain(`found   control table ${control}`)
    expect(second.stdout).toContain(`found   catalog table ${catalog}`)
    expect(second.stdout).toContain(`found   bucket ${bucket}`)

    await aws.ddb.send(new DescribeTableCommand({ TableName: control }))
    await aws.ddb.send(new DescribeTableCommand({ TableName: catalog }))
    await aws.s3.send(new HeadBucketCommand({ Bucket: bucket }))
  })

  it('skips the catalog table with FLOE_CATALOG=glue', async () => {
    const aws = testAws()
    const r = await floeInit({
      FLOE_CONTROL_TABLE: uniqueName('ctl'),
      FLOE_CATALOG: 'glue',
      FLOE_WAREHOUSE: `s3://${uniqueName('wh')}`,
      AWS_ENDPOINT_URL_S3: aws.endpoints.s3,
      AWS_ENDPOINT_URL_DYNAMODB: aws.endpoints.dynamodb,
    })
    expect(r.code).toBe(0)
    expect(r.stdout).not.toContain('catalog table')
  })

  it('exits non-zero naming the variable when a FLOE_* value is bad', async () => {
    const r = await floeInit({ FLOE_WAREHOUSE: 'http://not-a-warehouse', AWS_ENDPOINT_URL: 'http://127.0.0.1:9' })
    expect(r.code).toBe(2) // bad settings are usage errors (floe --help: exit codes)
    expect(r.stderr).toContain('FLOE_WAREHOUSE')
    expect(r.stderr).toContain('http://not-a-warehouse')
  })
})
