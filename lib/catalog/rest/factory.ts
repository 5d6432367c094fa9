/** A RestCatalog from FLOE_REST_* settings: the auth they name, with its secret from Secrets Manager (read once, on first use). */
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager'
import type { AwsCredentialIdentity, Provider } from '@smithy/types'
import type { RestCatalogConfig } from '../../config.js'
import { ConfigError } from '../../errors.js'
import { bearerAuth, noAuth, oauth2Auth, type RestAuth, sigV4Auth, signingNameFor } from './auth.js'
import { RestCatalog } from './catalog.js'

export interface RestDeps {
  region: string
  credentials: AwsCredentialIdentity | Provider<AwsCredentialIdentity>
  secrets: () => SecretsManagerClient
}

export function createRestCatalog(config: RestCatalogConfig, deps: RestDeps): RestCatalog {
  return new RestCatalog({ uri: config.uri, warehouse: config.warehouse, auth: restAuth(config, deps), timeoutMs: config.timeoutMs })
}

export function restAuth(config: RestCatalogConfig, deps: RestDeps): RestAuth {
  if (config.auth === 'sigv4') {
    return sigV4Auth({ signingName: config.signingName ?? signingNameFor(config.uri), region: config.signingRegion ?? deps.region, credentials: deps.credentials })
  }
  if (config.auth === 'none') return noAuth
  const secret = once(() => readSecret(deps.secrets(), config.secretArn!, config.timeoutMs))
  if (config.auth === 'bearer') {
    return bearerAuth(async () => {
      const value = await secret()
      const token = typeof value === 'string' ? value : value.token
      if (!token) throw new ConfigError('FLOE_REST_SECRET_ARN', `secret ${config.secretArn} holds no "token"`)
      return token
    })
  }
  return oauth2Auth({
    tokenUri: config.oauth2Uri ?? `${config.uri}/v1/oauth/tokens`,
    scope: config.oauth2Scope,
    timeoutMs: config.timeoutMs,
    credentials: async () => {
      const value = await secret()
      if (typeof value === 'string' || !value.client_id || !value.client_secret) {
        throw new ConfigError('FLOE_REST_SECRET_ARN', `secret ${config.secretArn} must be JSON with "client_id" and "client_secret"`)
      }
      return { clientId: value.client_id, clientSecret: value.client_secret }
    },
  })
}

type Secret = string | { token?: string; client_id?: string; client_secret?: string }

async function readSecret(client: SecretsManagerClient, arn: string, timeoutMs: number): Promise<Secret> {
  const out = await client.send(new GetSecretValueCommand({ SecretId: arn }), { abortSignal: AbortSignal.timeout(timeoutMs) })
  const text = out.SecretString ?? ''
  if (!text.trim().startsWith('{')) return text.trim()
  try {
    return JSON.parse(text) as Secret
  } catch (err) {
    throw new ConfigError('FLOE_REST_SECRET_ARN', `secret ${arn} is not valid JSON`, { cause: err })
  }
}

/** Memoises a successful promise; a failure is retried on the next call. */
function once<T>(f: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined
  return () => {
    p ??= f().catch((err: unknown) => {
      p = undefined
      throw err
    })
    return p
  }
}
