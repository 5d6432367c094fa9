/**
 * Starts the REST catalog server of the REST tests (server/RestServer.java: Apache Iceberg's
 * CatalogHandlers over a JdbcCatalog with S3FileIO) on a loopback port, warehouse on the test
 * S3 server. install-server.sh (run by test/rest/setup.ts) put its jars and classes in .interop/.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createInterface } from 'node:readline'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
const installed = join(root, '.interop', 'rest-server')

export interface RestServerOptions {
  /** s3://bucket/prefix on the test S3 server. */
  warehouse: string
  prefix?: string
  oauth?: { clientId: string; clientSecret: string }
}

export interface RunningRestServer {
  uri: string
  stop(): Promise<void>
}

export async function startRestServer(opts: RestServerOptions): Promise<RunningRestServer> {
  const s3 = process.env.AWS_ENDPOINT_URL_S3 ?? process.env.AWS_ENDPOINT_URL
  if (!s3) throw new Error('AWS_ENDPOINT_URL_S3 unset: run through vitest (test/setup/global.ts starts the S3 server)')
  const dir = mkdtempSync(join(tmpdir(), 'floe-rest-'))
  const child = spawn('java', ['-Xmx512m', '-XX:TieredStopAtLevel=1', '-cp', `${join(installed, 'classes')}:${join(installed, 'jars', '*')}`, 'org.apache.iceberg.rest.RestServer'], {
    env: {
      ...process.env,
      REST_PORT: '0',
      REST_WAREHOUSE: opts.warehouse,
      REST_S3_ENDPOINT: s3,
      REST_DB: join(dir, 'catalog.db'),
      REST_PREFIX: opts.prefix ?? '',
      ...(opts.oauth ? { REST_CLIENT_ID: opts.oauth.clientId, REST_CLIENT_SECRET: opts.oauth.clientSecret } : {}),
      AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
      AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-5000)))
  const port = await new Promise<number>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`REST catalog server did not start in 60 s: ${stderr}`)), 60_000)
    child.once('exit', (code) => fail(new Error(`REST catalog server exited (${code}): ${stderr}`)))
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = /^listening (\d+)$/.exec(line)
      if (m) {
        clearTimeout(timer)
        ok(Number(m[1]))
      }
    })
  })
  return {
    uri: `http://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((ok) => child.once('exit', ok))
        child.kill('SIGTERM')
        await exited
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
