/**
 * `floe init`: create what Floe needs on the configured endpoints — the control table, the
 * catalog table (FLOE_CATALOG=dynamodb) and the warehouse and dead-letter buckets (s3://) or
 * folders (file://). Idempotent: run it as often as you like; it says what it created and what
 * it found.
 */
import { mkdir } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { createClients, destroyClients } from '../clients.js'
import { loadConfig, type FloeConfig } from '../config.js'
import { parsePath } from '../io/index.js'
import { ensureBucket, ensureCatalogTable, ensureControlTable, type EnsureResult } from '../local/index.js'
import type { Command } from './command.js'

export interface InitStep {
  kind: 'control table' | 'catalog table' | 'bucket' | 'folder'
  name: string
  result: EnsureResult
}

/** Ensures every resource of `config`; returns what happened to each, in order. */
export async function initResources(config: FloeConfig, clients = createClients({ region: config.region, maxAttempts: config.awsMaxAttempts })): Promise<InitStep[]> {
  const steps: InitStep[] = []
  steps.push({ kind: 'control table', name: config.controlTable, result: await ensureControlTable(clients.ddb, config.controlTable) })
  if (config.catalog === 'dynamodb') {
    steps.push({ kind: 'catalog table', name: config.catalogTable, result: await ensureCatalogTable(clients.ddb, config.catalogTable) })
  }
  const seen = new Set<string>()
  for (const location of [config.warehouse, config.dlq]) {
    const p = parsePath(location)
    if (p.kind === 's3') {
      if (seen.has(p.bucket)) continue
      seen.add(p.bucket)
      steps.push({ kind: 'bucket', name: p.bucket, result: await ensureBucket(clients.s3, p.bucket) })
    } else {
      if (seen.has(p.path)) continue
      seen.add(p.path)
      const created = await mkdir(p.path, { recursive: true })
      steps.push({ kind: 'folder', name: p.path, result: created === undefined ? 'exists' : 'created' })
    }
  }
  return steps
}

export const initCommand: Command = {
  name: 'init',
  summary: 'Create the control table, catalog table and warehouse bucket if missing (idempotent)',
  usage: `Usage: floe init

Creates, on the configured endpoints, whatever of these is missing:
  - the control table      FLOE_CONTROL_TABLE (default floe-control)
  - the catalog table      FLOE_CATALOG_TABLE (default iceberg), when FLOE_CATALOG=dynamodb,
                           in Iceberg Java's DynamoDbCatalog layout
  - the warehouse bucket   from FLOE_WAREHOUSE=s3://bucket/prefix (a folder for file://)
  - the dead-letter bucket from FLOE_DLQ, when it names another bucket

Endpoints: AWS_ENDPOINT_URL (or AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL_DYNAMODB) for LocalStack,
DynamoDB Local or s3rver; unset means AWS itself (region from AWS_REGION).`,
  async run(argv) {
    parseArgs({ args: argv, options: {}, strict: true, allowPositionals: false })
    const config = loadConfig(process.env)
    const clients = createClients({ region: config.region, maxAttempts: config.awsMaxAttempts })
    try {
      for (const step of await initResources(config, clients)) {
        process.stdout.write(`${step.result === 'created' ? 'created' : 'found  '} ${step.kind} ${step.name}\n`)
      }
    } finally {
      destroyClients(clients)
    }
    return 0
  },
}
