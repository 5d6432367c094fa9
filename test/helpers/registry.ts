/**
 * A Confluent-compatible schema registry for tests, on 127.0.0.1 with an OS-assigned port (no
 * public registry package installs here). It speaks the part of the REST API Floe and producers
 * use: `GET /schemas/ids/{id}`, `GET /subjects`, `GET /subjects/{s}/versions`,
 * `GET /subjects/{s}/versions/{v|latest}`, `POST /subjects/{s}/versions`, with the registry's
 * error codes (40401 subject, 40402 version, 40403 schema not found). An outage mode makes it
 * answer 503, hang (to exercise timeouts) or reset connections; optional basic auth.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

export interface RegisteredSchema {
  id: number
  schema: string
  schemaType?: string
  references?: { name: string; subject: string; version: number }[]
}

export type OutageMode = false | '503' | 'hang' | 'reset'

export interface TestRegistry {
  url: string
  /** Register through the REST API (as a producer would); returns the schema id. */
  register(subject: string, schema: unknown, opts?: { schemaType?: string; references?: RegisteredSchema['references'] }): Promise<number>
  outage(mode: OutageMode): void
  /** Change the accepted basic-auth credentials (a rotation). */
  setAuth(auth: { username: string; password: string }): void
  /** Paths of every request received, in order. */
  readonly requests: string[]
  close(): Promise<void>
}

const CONTENT_TYPE = 'application/vnd.schemaregistry.v1+json'

export async function startTestRegistry(opts: { auth?: { username: string; password: string }; firstId?: number } = {}): Promise<TestRegistry> {
  const byId = new Map<number, RegisteredSchema>()
  const subjects = new Map<string, number[]>() // subject → ids by version
  let nextId = opts.firstId ?? 1
  let mode: OutageMode = false
  const requests: string[] = []
  const sockets = new Set<Socket>()
  let expectedAuth = opts.auth ? `Basic ${Buffer.from(`${opts.auth.username}:${opts.auth.password}`).toString('base64')}` : undefined

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': CONTENT_TYPE })
    res.end(JSON.stringify(body))
  }
  const notFound = (res: ServerResponse, code: number, message: string) => send(res, 404, { error_code: code, message })

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://registry')
    requests.push(`${req.method} ${url.pathname}`)
    if (mode === '503') return send(res, 503, { error_code: 50301, message: 'Service unavailable (test outage)' })
    if (mode === 'hang') return // never answers; the client must time out
    if (mode === 'reset') return req.socket.destroy()
    if (expectedAuth && req.headers.authorization !== expectedAuth) return send(res, 401, { error_code: 401, message: 'Unauthorized' })
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent)

    if (req.method === 'GET' && parts[0] === 'schemas' && parts[1] === 'ids' && parts.length === 3) {
      const s = byId.get(Number(parts[2]))
      if (!s) return notFound(res, 40403, `Schema ${parts[2]} not found`)
      return send(res, 200, { schema: s.schema, ...(s.schemaType ? { schemaType: s.schemaType } : {}), ...(s.references?.length ? { references: s.references } : {}) })
    }
    if (req.method === 'GET' && parts[0] === 'subjects' && parts.length === 1) return send(res, 200, [...subjects.keys()])
    if (parts[0] === 'subjects' && parts[2] === 'versions') {
      const subject = parts[1]!
      const versions = subjects.get(subject)
      if (req.method === 'POST' && parts.length === 3) {
        const body = JSON.parse(await readBody(req)) as { schema: string; schemaType?: string; references?: RegisteredSchema['references'] }
        const existing = [...byId.values()].find((s) => s.schema === body.schema && (s.schemaType ?? 'AVRO') === (body.schemaType ?? 'AVRO'))
        const id = existing?.id ?? nextId++
        if (!existing) byId.set(id, { id, schema: body.schema, schemaType: body.schemaType, references: body.references })
        const list = versions ?? []
        if (!list.includes(id)) list.push(id)
        subjects.set(subject, list)
        return send(res, 200, { id })
      }
      if (!versions) return notFound(res, 40401, `Subject '${subject}' not found.`)
      if (req.method === 'GET' && parts.length === 3) return send(res, 200, versions.map((_, i) => i + 1))
      if (req.method === 'GET' && parts.length === 4) {
        const version = parts[3] === 'latest' ? versions.length : Number(parts[3])
        const id = versions[version - 1]
        if (id === undefined) return notFound(res, 40402, `Version ${parts[3]} not found.`)
        const s = byId.get(id)!
        return send(res, 200, { subject, version, id, schema: s.schema, ...(s.schemaType ? { schemaType: s.schemaType } : {}), ...(s.references?.length ? { references: s.references } : {}) })
      }
    }
    return send(res, 404, { error_code: 404, message: `HTTP 404 Not Found: ${req.method} ${url.pathname}` })
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: Error) => send(res, 500, { error_code: 500, message: err.message }))
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  return {
    url,
    requests,
    outage(m) {
      mode = m
    },
    setAuth(auth) {
      expectedAuth = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`
    },
    async register(subject, schema, o = {}) {
      const headers: Record<string, string> = { 'content-type': CONTENT_TYPE }
      if (expectedAuth) headers.authorization = expectedAuth
      const res = await fetch(`${url}/subjects/${encodeURIComponent(subject)}/versions`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ schema: typeof schema === 'string' ? schema : JSON.stringify(schema), schemaType: o.schemaType, references: o.references }),
      })
      if (!res.ok) throw new Error(`register ${subject}: ${res.status} ${await res.text()}`)
      return ((await res.json()) as { id: number }).id
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}
