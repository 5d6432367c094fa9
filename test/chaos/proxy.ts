/**
 * A fault-injecting HTTP proxy on loopback, in front of the real emulators (DynamoDB Local and
 * s3rver). Each request is classified (S3 PUT/GET/DELETE/LIST, DynamoDB operation + table), and a
 * rule may: answer with throttling or a 5xx instead of forwarding, hold the request until the
 * harness releases it, or report it to the harness (which may SIGKILL the process that sent it
 * before or after it reaches the service). Nothing about the services is mocked: every request
 * that is forwarded is answered by the emulator.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export interface RequestInfo {
  service: 's3' | 'dynamodb'
  /** e.g. PutObject, GetObject, DeleteObject(s), ListObjectsV2, TransactWriteItems, UpdateItem. */
  op: string
  /** DynamoDB TableName (first one for transactions) or S3 bucket/key. */
  target: string
  /** Sequence number of this request through this proxy (0-based). */
  seq: number
  body: string
}

/** What to do with one request. */
export type Verdict =
  | { action: 'forward' }
  /** Reply with an error the SDK treats as throttling / server error (it retries). */
  | { action: 'throttle' }
  | { action: 'error5xx' }
  /** Wait for the promise, then decide again (used to hold a swap while something else happens). */
  | { action: 'hold'; until: Promise<unknown>; then?: Verdict }
  /** Forward, then run the callback before replying (e.g. kill the client after the write landed). */
  | { action: 'forward-then'; after: () => Promise<void> | void }
  /** Never answer: the caller is about to be killed. */
  | { action: 'hang' }

export type Rule = (req: RequestInfo) => Verdict | Promise<Verdict>

export class FaultProxy {
  private server?: http.Server
  private seq = 0
  readonly log: RequestInfo[] = []
  rule: Rule = () => ({ action: 'forward' })

  constructor(
    private readonly upstream: string,
    private readonly service: 's3' | 'dynamodb',
  ) {}

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => void this.handle(req, res))
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve))
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`
  }

  async stop(): Promise<void> {
    if (!this.server) return
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server!.close(() => resolve()))
  }

  private classify(req: http.IncomingMessage, body: Buffer): RequestInfo {
    const seq = this.seq++
    if (this.service === 'dynamodb') {
      const op = String(req.headers['x-amz-target'] ?? '').split('.').pop() ?? 'unknown'
      const text = body.toString('utf8')
      const table = /"TableName"\s*:\s*"([^"]+)"/.exec(text)?.[1] ?? ''
      return { service: 'dynamodb', op, target: table, seq, body: text }
    }
    const url = new URL(req.url ?? '/', 'http://x')
    const path = decodeURIComponent(url.pathname).replace(/^\//, '')
    const method = req.method ?? 'GET'
    let op = 'GetObject'
    if (method === 'PUT') op = 'PutObject'
    else if (method === 'DELETE') op = 'DeleteObject'
    else if (method === 'POST' && url.searchParams.has('delete')) op = 'DeleteObjects'
    else if (method === 'HEAD') op = 'HeadObject'
    else if (method === 'GET' && (url.searchParams.has('list-type') || !path.includes('/'))) op = 'ListObjectsV2'
    return { service: 's3', op, target: path, seq, body: '' }
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks)
    const info = this.classify(req, body)
    this.log.push(info)
    let verdict: Verdict
    try {
      verdict = await this.rule(info)
      while (verdict.action === 'hold') {
        await verdict.until.catch(() => undefined)
        verdict = verdict.then ?? { action: 'forward' }
      }
    } catch {
      verdict = { action: 'forward' }
    }
    if (verdict.action === 'hang') return
    if (verdict.action === 'throttle' || verdict.action === 'error5xx') return this.fail(res, verdict.action)
    const upstream = await this.forward(req, body).catch(() => undefined)
    if (!upstream) return this.fail(res, 'error5xx')
    if (verdict.action === 'forward-then') await verdict.after()
    if (res.destroyed) return
    res.writeHead(upstream.status, upstream.headers)
    res.end(upstream.body)
  }

  private fail(res: http.ServerResponse, kind: 'throttle' | 'error5xx'): void {
    if (this.service === 'dynamodb') {
      const throttled = kind === 'throttle'
      res.writeHead(throttled ? 400 : 500, { 'content-type': 'application/x-amz-json-1.0' })
      res.end(
        JSON.stringify({
          __type: throttled ? 'com.amazonaws.dynamodb.v20120810#ThrottlingException' : 'com.amazonaws.dynamodb.v20120810#InternalServerError',
          message: throttled ? 'Rate of requests exceeds the allowed throughput (injected)' : 'Internal server error (injected)',
        }),
      )
      return
    }
    const code = kind === 'throttle' ? 'SlowDown' : 'InternalError'
    res.writeHead(503, { 'content-type': 'application/xml' })
    res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>injected</Message></Error>`)
  }

  private forward(req: http.IncomingMessage, body: Buffer): Promise<{ status: number; headers: http.OutgoingHttpHeaders; body: Buffer }> {
    const target = new URL(req.url ?? '/', this.upstream)
    return new Promise((resolve, reject) => {
      const out = http.request(
        target,
        // The Host header is kept: it is part of the SigV4 signature s3rver checks.
        { method: req.method, headers: req.headers },
        (up) => {
          const parts: Buffer[] = []
          up.on('data', (c: Buffer) => parts.push(c))
          up.on('end', () => resolve({ status: up.statusCode ?? 502, headers: up.headers, body: Buffer.concat(parts) }))
          up.on('error', reject)
        },
      )
      out.on('error', reject)
      out.end(body)
    })
  }
}
