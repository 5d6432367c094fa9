/**
 * FLOE_CATALOG=rest from settings to requests: bad settings fail at cold start naming the key;
 * createCatalog builds a REST client whose auth is what FLOE_REST_AUTH says — a bearer token or
 * OAuth2 client credentials read from Secrets Manager (mocked with aws-sdk-client-mock: no local
 * server implements Secrets Manager), SigV4 with the derived signing name — seen by a loopback
 * HTTP server that records the requests.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager'
import { mockClient } from 'aws-sdk-client-mock'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createCatalog, RestCatalog } from '../../lib/catalog/index.js'
import type { AwsClients } from '../../lib/clients.js'
import { loadConfig } from '../../lib/config.js'
import { ConfigError } from '../../lib/errors.js'
import { createFileIO } from '../../lib/io/index.js'
import { testAws } from '../helpers/aws.js'

const seen: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[] = []
let uri = ''
const server = createServer((req, res) => {
  let body = ''
  req.on('data', (c: Buffer) => (body += c.toString()))
  req.on('end', () => {
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, body })
    res.setHeader('content-type', 'application/json')
    if (req.url === '/v1/oauth/tokens') return res.end(JSON.stringify({ access_token: 'oauth-token-1', token_type: 'bearer', expires_in: 3600 }))
    if (req.url!.startsWith('/v1/config')) return res.end(JSON.stringify({ defaults: {}, overrides: { prefix: 'p1' } }))
    res.end(JSON.stringify({ namespaces: [['a'], ['b', 'c']] }))
  })
})

const secrets = new SecretsManagerClient({ region: 'us-east-1' })
const secretsMock = mockClient(secrets)
const clients = () => ({ ...testAws().clients, secrets: () => secrets }) as AwsClients
const settings = (extra: Record<string, string>) => loadConfig({}, { FLOE_WAREHOUSE: 's3://floe-bucket/wh', FLOE_CATALOG: 'rest', FLOE_REST_URI: uri, ...extra })

beforeAll(async () => {
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => new Promise<void>((ok) => server.close(() => ok())))

describe('FLOE_CATALOG=rest settings', () => {
  it('bad settings fail at cold start and name the key', () => {
    const bad = (env: Record<string, string>) => () => loadConfig({}, { FLOE_WAREHOUSE: 's3://floe-bucket/wh', FLOE_CATALOG: 'rest', ...env })
    expect(bad({})).toThrow(ConfigError)
    expect(bad({})).toThrow(/FLOE_REST_URI: required when FLOE_CATALOG=rest/)
    expect(bad({ FLOE_REST_URI: 'not a url' })).toThrow(/FLOE_REST_URI/)
    expect(bad({ FLOE_REST_URI: 'https://x', FLOE_REST_AUTH: 'oauth2' })).toThrow(/FLOE_REST_SECRET_ARN: required when FLOE_REST_AUTH=oauth2/)
    expect(bad({ FLOE_REST_URI: 'https://x', FLOE_REST_AUTH: 'kerberos' })).toThrow(/FLOE_REST_AUTH/)
    expect(bad({ FLOE_REST_URI: 'https://x', FLOE_REST_TIMEOUT_MS: '5' })).toThrow(/FLOE_REST_TIMEOUT_MS/)
  })

  it('bearer: the token from Secrets Manager on every request; the prefix from /v1/config in the paths', async () => {
    secretsMock.reset().on(GetSecretValueCommand, { SecretId: 'arn:bearer' }).resolves({ SecretString: JSON.stringify({ token: 'tok-123' }) })
    const catalog = createCatalog(settings({ FLOE_REST_AUTH: 'bearer', FLOE_REST_SECRET_ARN: 'arn:bearer', FLOE_REST_WAREHOUSE: 'wh' }), clients(), createFileIO(testAws().clients))
    expect(catalog).toBeInstanceOf(RestCatalog)
    seen.length = 0
    expect(await catalog.listNamespaces()).toEqual(['a', 'b.c'])
    expect(seen.map((r) => r.url)).toEqual(['/v1/config?warehouse=wh', '/v1/p1/namespaces'])
    expect(seen.every((r) => r.headers.authorization === 'Bearer tok-123')).toBe(true)
  })

  it('oauth2: client credentials from Secrets Manager exchanged once for a token, then used as bearer', async () => {
    secretsMock.reset().on(GetSecretValueCommand, { SecretId: 'arn:oauth' }).resolves({ SecretString: JSON.stringify({ client_id: 'floe', client_secret: 's3cret' }) })
    const catalog = createCatalog(settings({ FLOE_REST_AUTH: 'oauth2', FLOE_REST_SECRET_ARN: 'arn:oauth' }), clients(), createFileIO(testAws().clients))
    seen.length = 0
    await catalog.listNamespaces()
    await catalog.listNamespaces()
    expect(seen.map((r) => r.url)).toEqual(['/v1/oauth/tokens', '/v1/config', '/v1/p1/namespaces', '/v1/p1/namespaces'])
    expect(Object.fromEntries(new URLSearchParams(seen[0]!.body))).toEqual({ grant_type: 'client_credentials', client_id: 'floe', client_secret: 's3cret', scope: 'catalog' })
    expect(seen.slice(1).every((r) => r.headers.authorization === 'Bearer oauth-token-1')).toBe(true)
  })

  it('sigv4: requests carry a SigV4 Authorization for the configured signing name and region', async () => {
    const catalog = createCatalog(settings({ FLOE_REST_AUTH: 'sigv4', FLOE_REST_SIGNING_NAME: 's3tables', FLOE_REST_SIGNING_REGION: 'eu-central-1' }), clients(), createFileIO(testAws().clients))
    seen.length = 0
    await catalog.listNamespaces()
    for (const r of seen) {
      expect(r.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=[^/]+\/\d{8}\/eu-central-1\/s3tables\/aws4_request, SignedHeaders=[^,]*host[^,]*x-amz-date/)
      expect(r.headers['x-amz-content-sha256']).toMatch(/^[0-9a-f]{64}$/)
    }
  })
})
