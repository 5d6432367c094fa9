/** The REST endpoint (router.ts) on a node:http server: `floe start --serve` and the tests. */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Catalog } from '../types.js'
import { serveRest } from './router.js'

export interface ServingRest {
  uri: string
  close(): Promise<void>
}

/** Listens on `host:port` (loopback by default; port 0 = any free port). */
export async function listenRest(catalog: Catalog, opts: { port?: number; host?: string } = {}): Promise<ServingRest> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost')
      serveRest(catalog, { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, body: Buffer.concat(chunks).toString('utf8') })
        .then((out) => {
          res.writeHead(out.status, out.body === undefined ? {} : { 'content-type': 'application/json' })
          res.end(out.body)
        })
        .catch((err: unknown) => {
          res.writeHead(500, { 'content-type': 'application/json' })
          res.end(JSON.stringify({ error: { message: String((err as Error).message), type: 'ServiceFailureException', code: 500 } }))
        })
    })
  })
  const host = opts.host ?? '127.0.0.1'
  await new Promise<void>((ok, fail) => {
    server.once('error', fail)
    server.listen(opts.port ?? 0, host, ok)
  })
  const { port } = server.address() as AddressInfo
  return { uri: `http://${host}:${port}`, close: () => new Promise<void>((ok) => server.close(() => ok())) }
}
