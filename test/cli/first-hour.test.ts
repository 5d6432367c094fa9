/**
 * The first hour of a new user, through the real CLI (bin/floe.mjs in a child process): bad
 * settings, routes and input fail before anything starts or is deleted, naming the key, file and
 * line; `--input` is read losslessly and a malformed line is a dead letter; JSON numbers are typed
 * from their literals and `columns` hints pin a type; the commands a summary prints work as
 * printed against a deployed stack's outputs (`--stack`).
 */
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { testAws, uniqueName } from '../helpers/aws.js'

const BIN = join(process.cwd(), 'bin/floe.mjs')

function floe(args: string[], opts: { env?: Record<string, string | undefined>; cwd?: string; timeout?: number } = {}) {
  const started = Date.now()
  const env = { ...process.env, ...opts.env }
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k]
  const r = spawnSync(process.execPath, [BIN, ...args], { env, cwd: opts.cwd, encoding: 'utf8', timeout: opts.timeout ?? 240_000 })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, ms: Date.now() - started }
}

/** No local endpoints in the environment: a command that got as far as starting them would say so. */
const bare = { AWS_ENDPOINT_URL: undefined, AWS_ENDPOINT_URL_S3: undefined, AWS_ENDPOINT_URL_DYNAMODB: undefined }

describe('bad settings, routes and input fail before anything starts', () => {
  const dir = mkdtempSync(join(tmpdir(), 'floe-first-hour-'))
  const state = join(dir, 'floe-local')
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text)
    return name
  }

  it.each([
    ['a misspelt setting', { FLOE_MEMORY_BUDGT_MB: '5' }, [], /FLOE_MEMORY_BUDGT_MB: unknown setting \(did you mean FLOE_MEMORY_BUDGET_MB\?\)/],
    ['a bad value', { FLOE_MEMORY_BUDGET_MB: '-5' }, [], /FLOE_MEMORY_BUDGET_MB: .*>=1; got "-5"/],
    ['a routes syntax error', {}, ['--routes', file('syntax.json', '{\n  "routes": [\n    {"table": "t",}\n  ]\n}\n')], /--routes syntax\.json: not valid JSON at line 3, column \d+/],
    ['an unknown routes key', {}, ['--routes', file('typo.json', '{"routes":[{"table":"t"}],"tabels":{}}')], /--routes typo\.json: \$\.tabels: unknown key "tabels" \(did you mean "tables"\?\)/],
    ['bucket(0, ts)', {}, ['--routes', file('bucket.json', '{"routes":[{"table":"t"}],"tables":{"t":{"partitionBy":["bucket(0, ts)"]}}}')], /\$\.tables\.t\.partitionBy\[0\]: partitionBy 'bucket\(0, ts\)'/],
    ['a missing routes file', {}, ['--routes', 'nope.json'], /--routes: file not found: nope\.json/],
    ['a missing input file', {}, ['--input', 'nope.ndjson'], /--input: cannot read nope\.ndjson: no such file/],
    ['an unknown option', {}, ['--recrods', '5'], /Unknown option '--recrods'/],
  ])('%s: exit code 2, the key named, --reset deletes nothing, no endpoint started', (_what, env, args, message) => {
    mkdirSync(state, { recursive: true })
    writeFileSync(join(state, 'keep'), 'x')
    const r = floe(['start', '--reset', ...args], { cwd: dir, env: { ...bare, ...env } })
    expect(r.stderr).toMatch(message)
    expect(r.status).toBe(2)
    expect(existsSync(join(state, 'keep'))).toBe(true)
    expect(r.stdout).not.toMatch(/starting DynamoDB Local/)
    // Measured: ~1.5 s on an idle 2-core machine (the CLI's start-up); the bound here only
    // proves nothing slow (Java, endpoints) ran, since the test machine may be loaded.
    expect(r.ms).toBeLessThan(30_000)
  })

  it('a command with FLOE_WAREHOUSE but no AWS credentials says how to reach the local pipeline or a stack', () => {
    const noCredentials = { ...bare, FLOE_WAREHOUSE: 's3://some-bucket/tables', AWS_ACCESS_KEY_ID: undefined, AWS_SECRET_ACCESS_KEY: undefined, AWS_SESSION_TOKEN: undefined, AWS_PROFILE: undefined, AWS_REGION: 'us-east-1', AWS_CONFIG_FILE: join(dir, 'none'), AWS_SHARED_CREDENTIALS_FILE: join(dir, 'none'), AWS_EC2_METADATA_DISABLED: 'true', AWS_CONTAINER_CREDENTIALS_FULL_URI: undefined, AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: undefined, AWS_WEB_IDENTITY_TOKEN_FILE: undefined }
    const r = floe(['status'], { cwd: dir, env: noCredentials })
    expect(r.stderr).toMatch(/no AWS credentials .*finds \.\/floe-local, or pass --dir.*--stack NAME/)
    expect(r.status).toBe(1)
  })

  it('without FLOE_WAREHOUSE and without local state, status says to run npm start first or pass --stack', () => {
    const r = floe(['status', '--dir', 'nowhere'], { cwd: dir, env: bare })
    expect(r.stderr).toMatch(/--dir: no local state in .*nowhere \(run `npm start` first\).*--stack NAME/)
    expect(r.status).toBe(2)
  })

  it('documents one exit-code convention in --help', () => {
    const r = floe(['--help'])
    expect(r.stdout).toMatch(/Exit codes: 0 done; 1 failed while running.*\n2 bad usage or settings/)
  })
})

describe('records as written, through floe start --input', () => {
  const aws = testAws()
  const env = () => ({
    AWS_ENDPOINT_URL_S3: aws.endpoints.s3,
    AWS_ENDPOINT_URL_DYNAMODB: aws.endpoints.dynamodb,
    FLOE_PIPELINE: uniqueName('hour'),
    FLOE_CONTROL_TABLE: uniqueName('hour-control'),
    FLOE_CATALOG_TABLE: uniqueName('hour-iceberg'),
  })

  it('types numbers from their literals, keeps 64-bit integers exact, pins hinted columns and dead-letters malformed lines', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'floe-input-'))
    const lines = [
      '{"topic":"sensors","partition":0,"value":{"reading":1.0,"id":9007199254740993,"count":1,"n":7}}',
      'this is not json',
      '{"topic":"sensors","partition":0,"value":{"reading":2.5,"id":9223372036854775807,"count":2,"n":8.5}}',
      '{"topic":"sensors","partition":"zero","value":{}}',
      '{"topic":"sensors","partition":0,"value":{"reading":3,"id":1,"count":3,"n":9}}',
    ]
    writeFileSync(join(dir, 'in.ndjson'), `${lines.join('\n')}\n`)
    writeFileSync(join(dir, 'routes.json'), JSON.stringify({ routes: [{ table: '{topic}' }], tables: { sensors: { columns: { n: 'double', count: 'int' } } } }))
    const vars = env()
    // --batch-size 1: the table is created from the first record alone, so `reading` can only be
    // a double because it was written `1.0` (JSON.parse makes 1 of it), and the later 2.5 lands.
    const r = floe(['start', '--json', '--quiet', '--input', 'in.ndjson', '--routes', 'routes.json', '--dir', 'state', '--batch-size', '1'], { cwd: dir, env: vars })
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/input: 3 records from in\.ndjson; 2 malformed lines become dead letters \(line 2, 4\)/)
    const summary = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { malformed: number; deadLetters: number; deadLettersByStage: Record<string, number>; tables: { table: string; rows: number }[] }
    expect(summary.tables).toMatchObject([{ table: 'default.sensors', rows: 3 }])
    expect(summary.malformed).toBe(2)
    expect(summary.deadLettersByStage).toEqual({ input: 2 })

    const inspect = floe(['inspect', 'default.sensors', '--dir', 'state'], { cwd: dir, env: vars })
    expect(inspect.status).toBe(0)
    const schema = (JSON.parse(inspect.stdout) as { currentSchema: { fields: { name: string; type: string }[] } }).currentSchema
    expect(Object.fromEntries(schema.fields.map((f) => [f.name, f.type]))).toEqual({ reading: 'double', id: 'long', count: 'int', n: 'double' })

    // The 64-bit ids are in the table exactly (read back with hyparquet, not Floe's code).
    const { parquetReadObjects } = await import('hyparquet')
    const { compressors } = await import('hyparquet-compressors')
    const md = JSON.parse(readFileSync(new URL((JSON.parse(inspect.stdout) as { metadataLocation: string }).metadataLocation), 'utf8')) as { location: string }
    const dataDir = join(new URL(md.location).pathname, 'data')
    const { readdirSync } = await import('node:fs')
    const files = readdirSync(dataDir, { recursive: true }).map(String).filter((f) => f.endsWith('.parquet'))
    const ids: bigint[] = []
    for (const f of files) {
      const buf = readFileSync(join(dataDir, f))
      const rows = (await parquetReadObjects({ file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer, columns: ['id'], compressors })) as { id: bigint }[]
      ids.push(...rows.map((x) => BigInt(x.id)))
    }
    expect(ids.sort((a, b) => (a < b ? -1 : 1))).toEqual([1n, 9007199254740993n, 9223372036854775807n])

    const dead = floe(['dead-letters', '--dir', 'state'], { cwd: dir, env: vars })
    expect(dead.stdout).toMatch(/in\.ndjson:2 .*input: in\.ndjson:2: not JSON/)
    expect(dead.stdout).toMatch(/in\.ndjson:4 .*"partition" must be a non-negative integer, got "zero"/)
    const grouped = floe(['dead-letters', '--group-by', 'stage', '--dir', 'state'], { cwd: dir, env: vars })
    expect(grouped.stdout).toMatch(/^\s+2 {2}input$/m)

    // The live view: two refreshes, then Ctrl-C ends it with exit code 0.
    const watch = spawn(process.execPath, [BIN, 'status', '--watch', '--interval', '1', '--dir', 'state'], { cwd: dir, env: { ...process.env, ...vars } })
    let view = ''
    watch.stdout.on('data', (c: Buffer) => (view += c.toString()))
    const ended = new Promise<number | null>((resolve) => watch.on('exit', (code) => resolve(code)))
    const until = Date.now() + 120_000
    while ((view.match(/^table +lag +records\/s +pending +last commit +small files$/gm) ?? []).length < 2 && Date.now() < until) await new Promise((res) => setTimeout(res, 200))
    watch.kill('SIGINT')
    expect(await ended).toBe(0)
    expect(view).toMatch(/^default\.sensors +0 +[\d.]+ +0 +\d+s ago +\d+\/\d+ \(\d+%\)$/m)
  }, 300_000)

  it('reads a deployed stack\'s outputs with --stack', async () => {
    // CloudFormation has no local server (neither DynamoDB Local nor s3rver implements it), so
    // this test answers DescribeStacks itself with a stub on loopback; DynamoDB and S3 are real.
    const dir = mkdtempSync(join(tmpdir(), 'floe-stack-'))
    writeFileSync(join(dir, 'in.ndjson'), '{"topic":"orders","partition":0,"value":{"id":1}}\n')
    const vars = env()
    const run = floe(['start', '--quiet', '--input', 'in.ndjson', '--dir', 'state', '--s3'], { cwd: dir, env: vars })
    expect(run.status).toBe(0)
    const outputs = {
      WarehouseUrl: 's3://floe-local/warehouse',
      DeadLetterUrl: 's3://floe-local/warehouse/_floe/dead-letters',
      ControlTableName: vars.FLOE_CONTROL_TABLE,
      CatalogTableName: vars.FLOE_CATALOG_TABLE,
    }
    let asked = ''
    const stub = createServer((req, res) => {
      let body = ''
      req.on('data', (c: Buffer) => (body += c.toString()))
      req.on('end', () => {
        asked = body
        const members = Object.entries(outputs).map(([k, v]) => `<member><OutputKey>${k}</OutputKey><OutputValue>${v}</OutputValue></member>`).join('')
        res.setHeader('content-type', 'text/xml')
        res.end(`<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStacksResult><Stacks><member><StackName>Floe</StackName><StackId>arn:aws:cloudformation:us-east-1:000000000000:stack/Floe/1</StackId><CreationTime>2026-01-01T00:00:00Z</CreationTime><StackStatus>CREATE_COMPLETE</StackStatus><Outputs>${members}</Outputs></member></Stacks></DescribeStacksResult></DescribeStacksResponse>`)
      })
    })
    await new Promise<void>((r) => stub.listen(0, '127.0.0.1', r))
    try {
      const port = (stub.address() as { port: number }).port
      const { FLOE_CONTROL_TABLE: _c, FLOE_CATALOG_TABLE: _t, ...rest } = vars
      const status = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
        const child = spawn(process.execPath, [BIN, 'status', '--stack', 'Floe'], {
          cwd: dir,
          env: { ...process.env, ...rest, FLOE_CONTROL_TABLE: '', FLOE_CATALOG_TABLE: '', AWS_ENDPOINT_URL_CLOUDFORMATION: `http://127.0.0.1:${port}`, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' },
        })
        let out = ''
        let err = ''
        child.stdout.on('data', (c: Buffer) => (out += c.toString()))
        child.stderr.on('data', (c: Buffer) => (err += c.toString()))
        child.on('exit', (code) => resolve({ code, out, err }))
      })
      expect(asked).toMatch(/Action=DescribeStacks.*StackName=Floe/)
      expect(status.err).toBe('')
      expect(status.code).toBe(0)
      expect(status.out).toMatch(/^default\.orders: no pending batches; last commit/m)
    } finally {
      stub.close()
    }
  }, 300_000)
})
