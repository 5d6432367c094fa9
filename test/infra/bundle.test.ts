/**
 * The one test that bundles for real: synthesize the stack with the local esbuild (as `cdk
 * deploy` would), then cold-start each synthesized asset — not the source — in a plain `node`
 * child process with only FLOE_* settings and local endpoints, and call its handler. A bundle
 * that cannot load (a missing wasm file, a CommonJS dependency without `require`, a minified
 * class name) fails here, not in Lambda. The writer gets a real MSK event sample and writes
 * Parquet through parquet-wasm; the committer then commits it, and the maintenance bundle runs
 * orphan cleanup over the result, so every bundle runs end to end.
 */
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { ListObjectsV2Command } from '@aws-sdk/client-s3'
import { App } from 'aws-cdk-lib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nodeOptions, processEnvironment } from '../../infra/constructs/floe-function.js'
import { FloeStack } from '../../infra/floe-stack.js'
import { createTestBucket, createTestCatalogTable, createTestControlTable, testAws, uniqueName } from '../helpers/aws.js'
import { MINIMAL } from './stack-fixture.js'

const run = promisify(execFile)
const outdir = mkdtempSync(path.join(tmpdir(), 'floe-cdk-'))
const assets: Record<'Writer' | 'Committer' | 'Maintenance' | 'Replay', string> = { Writer: '', Committer: '', Maintenance: '', Replay: '' }

beforeAll(() => {
  const app = new App({ outdir })
  const stack = new FloeStack(app, 'FloeBundle', { config: MINIMAL, env: { account: '111122223333', region: 'eu-west-1' } })
  const assembly = app.synth()
  const template = assembly.getStackByName(stack.stackName).template as { Resources: Record<string, { Type: string; Properties: { Code?: { S3Key?: string } } }> }
  for (const name of ['Writer', 'Committer', 'Maintenance', 'Replay'] as const) {
    const fn = Object.entries(template.Resources).find(([id, r]) => r.Type === 'AWS::Lambda::Function' && id.startsWith(name))
    const key = fn?.[1].Properties.Code?.S3Key
    if (!key) throw new Error(`no ${name} function code in the template`)
    assets[name] = path.join(assembly.directory, `asset.${key.replace(/\.zip$/, '')}`)
  }
}, 300_000)

afterAll(() => rmSync(outdir, { recursive: true, force: true }))

/** Import the bundle in a fresh `node`, call `handler(event)`, report what it returned or threw. */
async function coldStart(asset: string, event: unknown, env: Record<string, string>): Promise<{ loaded: boolean; ok: boolean; value?: unknown; name?: string; message?: string }> {
  const script = `
    const report = (r) => console.log('FLOE_SMOKE ' + JSON.stringify(r))
    let mod
    try { mod = await import(${JSON.stringify(`file://${path.join(asset, 'index.mjs')}`)}) } catch (e) { report({ loaded: false, ok: false, name: e.name, message: e.message }); process.exit(0) }
    if (typeof mod.handler !== 'function') { report({ loaded: false, ok: false, message: 'handler is ' + typeof mod.handler }); process.exit(0) }
    const context = { functionName: process.env.AWS_LAMBDA_FUNCTION_NAME, awsRequestId: 'smoke-' + Date.now(), getRemainingTimeInMillis: () => 60000 }
    try { report({ loaded: true, ok: true, value: await mod.handler(${JSON.stringify(event)}, context) }) } catch (e) { report({ loaded: true, ok: false, name: e.name, message: e.message }) }
  `
  const base: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('FLOE_') && !k.startsWith('NODE_') && !k.startsWith('VITEST')) base[k] = v
  // The NODE_OPTIONS the stack gives its functions: Node refuses to start on a flag it does not allow there.
  base.NODE_OPTIONS = nodeOptions(1024)
  Object.assign(base, processEnvironment())
  // Run outside the repository, so nothing resolves from its node_modules: the bundle stands alone.
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: tmpdir(), env: { ...base, ...env }, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 })
  const line = stdout.split('\n').find((l) => l.startsWith('FLOE_SMOKE '))
  if (!line) throw new Error(`no report from the child process; stdout:\n${stdout.slice(-2000)}`)
  return JSON.parse(line.slice('FLOE_SMOKE '.length))
}

describe('bundled Lambda assets', () => {
  it('each bundle is ESM with parquet-wasm\'s wasm, the encode worker and a source map beside it', () => {
    for (const dir of Object.values(assets)) {
      expect(['index.mjs', 'index.mjs.map', 'parquet_wasm_bg.wasm', 'encode-worker.cjs'].filter((f) => !existsSync(path.join(dir, f)))).toEqual([])
      expect(readFileSync(path.join(dir, 'index.mjs'), 'utf8').slice(0, 200)).toContain('createRequire')
    }
  })

  it('a malformed event: the writer bundle loads and rejects it with a typed error', async () => {
    const bucket = await createTestBucket()
    const result = await coldStart(assets.Writer, {}, { FLOE_WAREHOUSE: `s3://${bucket}/warehouse`, AWS_LAMBDA_FUNCTION_NAME: 'floe-smoke-writer' })
    expect(result).toMatchObject({ loaded: true, ok: false, name: 'EventShapeError' })
  }, 180_000)

  it('cold starts: the writer bundle writes an MSK sample to Parquet, the committer bundle commits it, the maintenance bundle finds no orphan, the replay bundle runs', async () => {
    const aws = testAws()
    const bucket = await createTestBucket()
    const env = {
      FLOE_PIPELINE: uniqueName('smoke'),
      FLOE_WAREHOUSE: `s3://${bucket}/warehouse`,
      FLOE_CONTROL_TABLE: await createTestControlTable(),
      FLOE_CATALOG: 'dynamodb',
      FLOE_CATALOG_TABLE: await createTestCatalogTable(),
      FLOE_ROUTES: JSON.stringify({ defaultNamespace: 'smoke', routes: [{ table: '{topic}' }] }),
    }
    const event = JSON.parse(readFileSync(path.join(import.meta.dirname, '../events/msk-base.json'), 'utf8'))
    // Parquet encoded on the bundle's worker threads (encode-worker.cjs beside index.mjs).
    const written = await coldStart(assets.Writer, event, { ...env, FLOE_WRITER_WORKERS: '2', AWS_LAMBDA_FUNCTION_NAME: 'floe-smoke-writer' })
    expect(written).toMatchObject({ loaded: true, ok: true, value: { recordsIn: 1, tables: [{ table: 'smoke.mytopic', rows: 1, files: 1 }] } })
    const listed = await aws.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'warehouse/' }))
    expect((listed.Contents ?? []).filter((o) => o.Key?.endsWith('.parquet'))).toHaveLength(1)

    const committed = await coldStart(assets.Committer, { source: 'floe.schedule' }, { ...env, AWS_LAMBDA_FUNCTION_NAME: 'floe-smoke-committer' })
    expect(committed).toMatchObject({ loaded: true, ok: true, value: { committed: 1, failures: 0, records: 1 } })

    const maintained = await coldStart(assets.Maintenance, { source: 'floe.schedule' }, { ...env, AWS_LAMBDA_FUNCTION_NAME: 'floe-smoke-maintenance' })
    expect(maintained).toMatchObject({ loaded: true, ok: true, value: { tables: 1, failures: 0, deleted: 0, results: [{ table: 'smoke.mytopic', status: 'cleaned', orphans: 0 }, { table: '_spill', status: 'cleaned' }] } })

    const replayed = await coldStart(assets.Replay, { replay: 'failed-batches', dryRun: true }, { ...env, AWS_LAMBDA_FUNCTION_NAME: 'floe-smoke-replay' })
    expect(replayed).toMatchObject({ loaded: true, ok: true, value: { kind: 'failed-batches', dryRun: true, sources: 0, failures: 0 } })
  }, 300_000)
})
