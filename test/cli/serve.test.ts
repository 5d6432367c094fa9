/**
 * `npm start -- --serve` as a user runs it: the real CLI starts its own DynamoDB Local and
 * s3rver (no AWS_ENDPOINT_URL*), ingests, prints engine configuration and then stays up until
 * Ctrl-C; meanwhile other `floe` commands find the running endpoints through the local state.
 */
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ListTablesCommand } from '@aws-sdk/client-dynamodb'
import { ListBucketsCommand } from '@aws-sdk/client-s3'
import { describe, expect, it } from 'vitest'
import { createClients, destroyClients } from '../../lib/clients.js'
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../lib/local/endpoints.js'

const BIN = join(process.cwd(), 'bin/floe.mjs')
const bareEnv = () => {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const k of ['AWS_ENDPOINT_URL', 'AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL_DYNAMODB']) delete env[k]
  for (const k of Object.keys(env)) if (k.startsWith('FLOE_')) delete env[k]
  return env
}

describe('floe start --serve', () => {
  it('keeps the endpoints up until Ctrl-C, prints engine config, and the other commands use them', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'floe-serve-'))
    const child = spawn(process.execPath, [BIN, 'start', '--serve', '--records', '600', '--seed', '1', '--batch-size', '100'], { cwd, env: bareEnv() })
    let out = ''
    let err = ''
    child.stdout.on('data', (c: Buffer) => (out += c.toString()))
    child.stderr.on('data', (c: Buffer) => (err += c.toString()))
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    try {
      const deadline = Date.now() + 280_000
      while (!out.includes('Ctrl-C to stop.') && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 250))
      expect(err).toBe('')
      expect(out).toContain('Ctrl-C to stop.')
      // What a user watches while it runs, and a summary whose numbers add up.
      expect(out).toMatch(/^starting DynamoDB Local and s3rver…$/m)
      expect(out).toMatch(/^[\d,]+\/600 records · [\d,]+ rec\/s · (ETA \d+ s|ETA –|settling) · /m)
      const perTable = [...out.matchAll(/^(demo\.\w+|\(no table\)) .* (\d+)$/gm)].map((m) => Number(m[2]))
      const total = Number(/: (\d+) dead letters? in all/.exec(out)?.[1])
      expect(perTable.reduce((a, b) => a + b, 0)).toBe(total)
      expect(out).toMatch(/this run: 600 records generated with seed 1 over 3 topics, \d+ of them poison → [\d,]+ rows added to tables, \d+ new dead letters?/)
      expect(out).not.toMatch(/\b1 (commits|rows|batches|files)\b/)
      expect(out).toMatch(/spark\.sql\.catalog\.floe\.dynamodb\.endpoint=http:\/\/127\.0\.0\.1:\d+/)
      expect(out).toMatch(/load_catalog\("floe", .*"dynamodb\.endpoint": "http:\/\/127\.0\.0\.1:\d+"/)
      expect(out).toMatch(/iceberg_scan\('.*demo\.db\/clicks\/metadata\/.*\.metadata\.json'\)/)
      // The catalog as an Iceberg REST catalog on loopback.
      const restUri = /^REST catalog: (http:\/\/127\.0\.0\.1:\d+) /m.exec(out)?.[1]
      expect(restUri).toBeDefined()
      const namespaces = (await (await fetch(`${restUri}/v1/namespaces`)).json()) as { namespaces: string[][] }
      expect(namespaces.namespaces).toContainEqual(['demo'])
      const clicks = (await (await fetch(`${restUri}/v1/namespaces/demo/tables/clicks`)).json()) as { 'metadata-location': string }
      expect(clicks['metadata-location']).toMatch(/demo\.db\/clicks\/metadata\/.*\.metadata\.json$/)
      // Still up a moment later (it used to exit at once with code 13).
      await new Promise((r) => setTimeout(r, 2_000))
      expect(child.exitCode).toBeNull()

      const [, dynamodb, s3] = /endpoints are running: DynamoDB (\S+), S3 (\S+) /.exec(out)!
      const clients = createClients({ endpoints: { dynamodb: dynamodb!, s3: s3! }, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 1 })
      try {
        const { TableNames } = await clients.ddb.send(new ListTablesCommand({}))
        expect(TableNames).toEqual(expect.arrayContaining(['floe-control', 'iceberg']))
        await clients.s3.send(new ListBucketsCommand({}))
      } finally {
        destroyClients(clients)
      }

      // The commands the summary prints, as printed, against the served endpoints.
      const status = spawnSync(process.execPath, [BIN, 'status'], { cwd, env: bareEnv(), encoding: 'utf8', timeout: 120_000 })
      expect(status.stderr).toBe('')
      expect(status.stdout).toMatch(/^demo\.clicks: no pending batches; last commit/m)
      const inspect = spawnSync(process.execPath, [BIN, 'inspect', 'demo.orders'], { cwd, env: bareEnv(), encoding: 'utf8', timeout: 120_000 })
      expect(inspect.status).toBe(0)
      expect(JSON.parse(inspect.stdout)).toMatchObject({ formatVersion: 2, currentSnapshot: { records: expect.any(Number) } })

      const commit = spawnSync(process.execPath, [BIN, 'commit'], { cwd, env: bareEnv(), encoding: 'utf8', timeout: 120_000 })
      expect(commit.stdout).toMatch(/^\d+ tables, 0 committed, 0 failed, 0 busy$/m)
      expect(commit.status).toBe(0)

      child.kill('SIGINT')
      expect(await exited).toBe(0)
      expect(existsSync(join(cwd, 'floe-local', 'serve.json'))).toBe(false)
      const after = createClients({ endpoints: { dynamodb: dynamodb! }, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 1 })
      try {
        await expect(after.ddb.send(new ListTablesCommand({}), { abortSignal: AbortSignal.timeout(5_000) })).rejects.toThrow(/ECONNREFUSED|connect|aborted|socket/i)
      } finally {
        destroyClients(after)
      }
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL')
    }
  }, 420_000)
})
