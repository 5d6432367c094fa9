/**
 * Authentication of REST catalog requests: none, AWS SigV4 (S3 Tables: signing name `s3tables`,
 * Glue's Iceberg endpoint: `glue`; signed by @smithy/signature-v4, the AWS SDK's own signer),
 * OAuth2 client credentials (token endpoint, cached until shortly before it expires), or a fixed
 * bearer token. Secrets (client id and secret, or the token) come from Secrets Manager.
 */
import { Sha256 } from '@aws-crypto/sha256-js'
import { SignatureV4 } from '@smithy/signature-v4'
import type { AwsCredentialIdentity, Provider } from '@smithy/types'
import { CatalogRequestError } from '../../errors.js'

export interface HttpRequestParts {
  method: string
  url: URL
  headers: Record<string, string>
  body?: string
}

/** Adds authentication headers to a request (mutates and returns `req.headers`). */
export interface RestAuth {
  headers(req: HttpRequestParts): Promise<Record<string, string>>
}

export const noAuth: RestAuth = { headers: async (req) => req.headers }

export interface SigV4Options {
  /** `s3tables`, `glue`, `execute-api`… (signingNameFor derives it from the endpoint's host). */
  signingName: string
  region: string
  credentials: AwsCredentialIdentity | Provider<AwsCredentialIdentity>
}

/** The signing name an AWS Iceberg REST endpoint expects, from its host; `execute-api` otherwise (API Gateway, Lambda URLs sign as `lambda`). */
export function signingNameFor(uri: string): string {
  const host = new URL(uri).hostname
  if (/^s3tables[.-]/.test(host)) return 's3tables'
  if (/^glue[.-]/.test(host)) return 'glue'
  if (/\.lambda-url\./.test(host)) return 'lambda'
  return 'execute-api'
}

export function sigV4Auth(opts: SigV4Options): RestAuth {
  const signer = new SignatureV4({ service: opts.signingName, region: opts.region, credentials: opts.credentials, sha256: Sha256 })
  return {
    async headers(req) {
      const query: Record<string, string | string[]> = {}
      for (const [k, v] of req.url.searchParams) {
        const prev = query[k]
        query[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v]
      }
      const signed = await signer.sign({
        method: req.method,
        protocol: req.url.protocol,
        hostname: req.url.hostname,
        port: req.url.port ? Number(req.url.port) : undefined,
        path: req.url.pathname,
        query,
        headers: { ...req.headers, host: req.url.host },
        body: req.body,
      })
      // `host` is set by fetch itself from the URL (the value signed above).
      const { host: _host, ...rest } = signed.headers
      return rest
    },
  }
}

export function bearerAuth(token: () => Promise<string>): RestAuth {
  return {
    async headers(req) {
      return { ...req.headers, authorization: `Bearer ${await token()}` }
    },
  }
}

export interface OAuth2Options {
  tokenUri: string
  credentials: () => Promise<{ clientId: string; clientSecret: string }>
  scope: string
  timeoutMs: number
  now?: () => number
}

/** OAuth2 client-credentials grant (RFC 6749 §4.4) as Iceberg's REST catalogs accept it; the token is reused until 60 s before `expires_in`. */
export function oauth2Auth(opts: OAuth2Options): RestAuth {
  const now = opts.now ?? Date.now
  let cached: { token: string; until: number } | undefined
  const token = async (): Promise<string> => {
    if (cached && now() < cached.until) return cached.token
    const { clientId, clientSecret } = await opts.credentials()
    const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: opts.scope })
    let res: Response
    try {
      res = await fetch(opts.tokenUri, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body, signal: AbortSignal.timeout(opts.timeoutMs) })
    } catch (err) {
      throw new CatalogRequestError(`OAuth2 token request to ${opts.tokenUri} failed: ${(err as Error).message}`, { cause: err, retryable: true })
    }
    const text = await res.text()
    if (!res.ok) throw new CatalogRequestError(`OAuth2 token request to ${opts.tokenUri} for client '${clientId}' answered HTTP ${res.status}: ${text.slice(0, 300)}`, { retryable: res.status >= 500 })
    const json = JSON.parse(text) as { access_token?: string; expires_in?: number }
    if (!json.access_token) throw new CatalogRequestError(`OAuth2 token response from ${opts.tokenUri} has no access_token`)
    cached = { token: json.access_token, until: now() + Math.max(0, (json.expires_in ?? 3600) - 60) * 1000 }
    return cached.token
  }
  return bearerAuth(token)
}
