/**
 * REST catalog Lambda (function URL, IAM auth): the read and commit parts of the Iceberg REST
 * protocol over Floe's catalog (FLOE_CATALOG, normally the DynamoDB catalog table), so engines
 * that speak only REST (PyIceberg, DuckDB, Spark's RESTCatalog, BI tools) read and append to the
 * tables Spark's DynamoDbCatalog sees. Thin: config, clients and catalog once per cold start;
 * lib/catalog/rest-server does the work. Engines sign with SigV4, signing name `lambda`.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda'
import { createCatalog, serveRest, type Catalog } from '../lib/catalog/index.js'
import { createClients } from '../lib/clients.js'
import { loadConfig } from '../lib/config.js'
import { createFileIO } from '../lib/io/index.js'

export function createRestCatalogHandler(catalog: Catalog | (() => Catalog)) {
  let built: Catalog | undefined
  return async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    built ??= typeof catalog === 'function' ? catalog() : catalog
    const body = event.body === undefined ? undefined : event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body
    const out = await serveRest(built, { method: event.requestContext.http.method, path: event.rawPath, query: new URLSearchParams(event.rawQueryString ?? ''), body })
    return { statusCode: out.status, headers: out.body === undefined ? {} : { 'content-type': 'application/json' }, body: out.body ?? '' }
  }
}

const build = (): Catalog => {
  const config = loadConfig(process.env)
  const clients = createClients({ maxAttempts: config.awsMaxAttempts })
  return createCatalog(config, clients, createFileIO(clients))
}

const initial = process.env.AWS_LAMBDA_FUNCTION_NAME ? build() : undefined

export const handler = createRestCatalogHandler(() => initial ?? build())
