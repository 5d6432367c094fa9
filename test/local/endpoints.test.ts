import { spawn } from 'node:child_process'
import { connect } from 'node:net'
import { createInterface } from 'node:readline'
import { describe, expect, it } from 'vitest'
import { startLocalEndpoints } from '../../lib/local/endpoints.js'
import { testAws } from '../helpers/aws.js'

/** True when something accepts TCP connections at the URL's host and port. */
function listening(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) })
    socket.once('connect', () => (socket.destroy(), resolve(true)))
    socket.once('error', () => resolve(false))
  })
}

async function waitUntilClosed(url: string, deadlineMs: number): Promise<boolean> {
  const end = Date.now() + deadlineMs
  while (Date.now() < end) {
    if (!(await listening(url))) return true
    await new Promise((r) => setTimeout(r, 200))
  }
  return false
}

const withoutEndpoints = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_ENDPOINT_URL')))

describe('local endpoints', () => {
  it('starts nothing when the environment names the endpoints (LocalStack mode)', async () => {
    const { endpoints } = testAws()
    const ep = await startLocalEndpoints({ env: { AWS_ENDPOINT_URL_S3: endpoints.s3, AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb } })
    expect(ep.started).toEqual([])
    expect(ep).toMatchObject({ s3: endpoints.s3, dynamodb: endpoints.dynamodb })
    await ep.stop()
    // Stopping must not touch servers it did not start.
    expect(await listening(endpoints.s3)).toBe(true)
    expect(await listening(endpoints.dynamodb)).toBe(true)
  })

  it('fails clearly when an endpoint from the environment does not answer', async () => {
    const { endpoints } = testAws()
    const started = startLocalEndpoints({ env: { AWS_ENDPOINT_URL_S3: endpoints.s3, AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:9' }, timeoutMs: 1_000 })
    await expect(started).rejects.toThrow(/AWS_ENDPOINT_URL.*dynamodb http:\/\/127\.0\.0\.1:9/)
  })

  it('servers started by a process die with it, even when it is SIGKILLed', async () => {
    const script = [
      "import { startLocalEndpoints } from './lib/local/endpoints.ts'",
      'const ep = await startLocalEndpoints()',
      'console.log(JSON.stringify({ s3: ep.s3, dynamodb: ep.dynamodb }))',
      'setInterval(() => {}, 1000)',
    ].join('\n')
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      env: withoutEndpoints(),
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const firstLine = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve)
      child.once('exit', (code) => reject(new Error(`child exited early with ${code}`)))
    })
    const urls = JSON.parse(firstLine) as { s3: string; dynamodb: string }
    expect(await listening(urls.s3)).toBe(true)
    expect(await listening(urls.dynamodb)).toBe(true)
    child.kill('SIGKILL')
    expect(await waitUntilClosed(urls.s3, 30_000)).toBe(true)
    expect(await waitUntilClosed(urls.dynamodb, 30_000)).toBe(true)
  }, 180_000)
})
