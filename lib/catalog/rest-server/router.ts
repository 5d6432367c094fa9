/**
 * An Iceberg REST catalog endpoint (open-api/rest-catalog-open-api.yaml) over any Floe Catalog —
 * in practice the DynamoDB catalog in Iceberg Java's DynamoDbCatalog layout, so engines that
 * speak only REST see the tables Spark's DynamoDbCatalog sees. Transport-free: the Lambda
 * handler (functions/rest-catalog.ts) and `floe start --serve` feed it requests.
 *
 * Served: GET /v1/config; namespaces: list, create, load, exists; tables: list, create, load,
 * exists, commit (requirements + updates, apply.ts). A commit loads the current metadata, checks
 * the requirements, applies the updates and swaps through the catalog's compare-and-swap: a
 * concurrent writer between load and swap is a 409 as well. Not served (501): views, rename,
 * drop, staged creates, multi-table transactions, scan planning.
 */
import { AlreadyExistsError, CommitConflictError, CommitStateUnknownError, FloeError, NoSuchTableError } from '../../errors.js'
import { parseJson, stringifyJson, type PartitionSpec, type SortOrder } from '../../iceberg/index.js'
import type { Schema } from '../../schema/index.js'
import type { TableId } from '../identifier.js'
import type { Catalog, LoadedTable } from '../types.js'
import { applyUpdates, BadUpdate, checkRequirements, RequirementFailed } from './apply.js'

export interface RestServerRequest {
  method: string
  /** Path as received (percent-encoded), e.g. `/v1/namespaces/db/tables/events`. */
  path: string
  query: URLSearchParams
  body?: string
}

export interface RestServerResponse {
  status: number
  body?: string
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message)
  }
}

type Json = Record<string, unknown>

export async function serveRest(catalog: Catalog, req: RestServerRequest): Promise<RestServerResponse> {
  try {
    const out = await route(catalog, req)
    return out === undefined ? { status: 204 } : { status: 200, body: stringifyJson(out) }
  } catch (err) {
    const e = toHttpError(err)
    return { status: e.status, body: stringifyJson({ error: { message: e.message, type: e.type, code: e.status } }) }
  }
}

function toHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err
  const message = (err as Error).message ?? String(err)
  if (err instanceof RequirementFailed || err instanceof CommitConflictError) return new HttpError(409, 'CommitFailedException', message)
  if (err instanceof CommitStateUnknownError) return new HttpError(500, 'CommitStateUnknownException', message)
  if (err instanceof AlreadyExistsError) return new HttpError(409, 'AlreadyExistsException', message)
  if (err instanceof NoSuchTableError) return new HttpError(404, /namespace/i.test(message) ? 'NoSuchNamespaceException' : 'NoSuchTableException', message)
  if (err instanceof BadUpdate || err instanceof SyntaxError || (err instanceof FloeError && !err.retryable && err.name !== 'FloeError')) return new HttpError(400, 'BadRequestException', message)
  return new HttpError(500, 'ServiceFailureException', message)
}

const segments = (path: string): string[] => path.split('/').filter(Boolean).map((s) => decodeURIComponent(s))

/** A REST namespace (levels) as Floe's dotted namespace; a level with a dot cannot round-trip. */
function namespaceOf(levels: unknown): string {
  if (!Array.isArray(levels) || levels.length === 0 || levels.some((l) => typeof l !== 'string' || l === '' || l.includes('.'))) {
    throw new HttpError(400, 'BadRequestException', `namespace ${JSON.stringify(levels)} must be a non-empty list of levels without dots`)
  }
  return levels.join('.')
}

const levelsOf = (ns: string): string[] => ns.split('.')
const body = (req: RestServerRequest): Json => {
  const parsed = req.body ? parseJson(req.body) : {}
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new HttpError(400, 'BadRequestException', 'request body must be a JSON object')
  return parsed as Json
}

async function route(catalog: Catalog, req: RestServerRequest): Promise<unknown> {
  const p = segments(req.path)
  const m = req.method.toUpperCase()
  if (p[0] !== 'v1') throw new HttpError(404, 'NotFoundException', `no route ${m} ${req.path}`)
  if (p.length === 2 && p[1] === 'config' && m === 'GET') return { defaults: {}, overrides: {}, endpoints: ENDPOINTS }
  if (p[1] !== 'namespaces') throw new HttpError(404, 'NotFoundException', `no route ${m} ${req.path}`)
  if (p.length === 2 && m === 'GET') {
    const parent = req.query.get('parent')
    const all = await catalog.listNamespaces()
    const prefix = parent ? `${parent.split('\x1f').join('.')}.` : ''
    const wanted = all.filter((ns) => ns.startsWith(prefix) && !ns.slice(prefix.length).includes('.'))
    return { namespaces: wanted.map(levelsOf), 'next-page-token': null }
  }
  if (p.length === 2 && m === 'POST') {
    const b = body(req)
    const ns = namespaceOf(b.namespace)
    await catalog.createNamespace(ns, (b.properties as Record<string, string>) ?? {})
    return { namespace: levelsOf(ns), properties: b.properties ?? {} }
  }
  const ns = namespaceOf(p[2]!.split('\x1f'))
  if (p.length === 3 && (m === 'GET' || m === 'HEAD')) {
    const properties = await catalog.loadNamespace(ns)
    if (properties === undefined) throw new HttpError(404, 'NoSuchNamespaceException', `Namespace does not exist: ${ns}`)
    return m === 'HEAD' ? undefined : { namespace: levelsOf(ns), properties }
  }
  if (p[3] !== 'tables') throw new HttpError(501, 'UnsupportedOperationException', `not served: ${m} ${req.path}`)
  if (p.length === 4 && m === 'GET') {
    const tables = await catalog.listTables(ns)
    return { identifiers: tables.map((t) => ({ namespace: levelsOf(t.namespace), name: t.name })), 'next-page-token': null }
  }
  if (p.length === 4 && m === 'POST') return createTable(catalog, ns, body(req))
  if (p.length !== 5) throw new HttpError(404, 'NotFoundException', `no route ${m} ${req.path}`)
  const id: TableId = { namespace: ns, name: p[4]! }
  if (m === 'GET') return loadResult(await catalog.loadTable(id))
  if (m === 'HEAD') return void (await catalog.loadTable(id))
  if (m === 'POST') return commitTable(catalog, id, body(req))
  throw new HttpError(501, 'UnsupportedOperationException', `not served: ${m} ${req.path}`)
}

/** The endpoints this server implements (spec: ConfigResponse.endpoints), so clients do not try others. */
const ENDPOINTS = [
  'GET /v1/{prefix}/namespaces',
  'POST /v1/{prefix}/namespaces',
  'GET /v1/{prefix}/namespaces/{namespace}',
  'HEAD /v1/{prefix}/namespaces/{namespace}',
  'GET /v1/{prefix}/namespaces/{namespace}/tables',
  'POST /v1/{prefix}/namespaces/{namespace}/tables',
  'GET /v1/{prefix}/namespaces/{namespace}/tables/{table}',
  'HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}',
  'POST /v1/{prefix}/namespaces/{namespace}/tables/{table}',
]

const loadResult = (t: LoadedTable) => ({ 'metadata-location': t.metadataLocation, metadata: t.metadata, config: {} })

async function createTable(catalog: Catalog, ns: string, b: Json): Promise<unknown> {
  if (b['stage-create'] === true) throw new HttpError(501, 'UnsupportedOperationException', 'staged table creation is not served')
  if (typeof b.name !== 'string' || b.name === '' || b.name.includes('.')) throw new HttpError(400, 'BadRequestException', `table name ${JSON.stringify(b.name)} must be non-empty without dots`)
  const schema = b.schema as Schema | undefined
  if (!schema || schema.type !== 'struct') throw new HttpError(400, 'BadRequestException', 'create table needs a struct schema')
  const spec = b['partition-spec'] as PartitionSpec | undefined
  const order = b['write-order'] as SortOrder | undefined
  const properties = { ...(b.properties as Record<string, string> | undefined) }
  const t = await catalog.createTable(
    { namespace: ns, name: b.name },
    {
      schema: { ...schema, 'schema-id': schema['schema-id'] ?? 0 },
      ...(spec ? { spec: { 'spec-id': spec['spec-id'] ?? 0, fields: spec.fields.map((f, i) => ({ ...f, 'field-id': f['field-id'] ?? 1000 + i })) } } : {}),
      ...(order ? { sortOrder: { ...order, 'order-id': order['order-id'] ?? (order.fields.length ? 1 : 0) } } : {}),
      properties,
      ...(typeof b.location === 'string' ? { location: b.location } : {}),
    },
  )
  return loadResult(t)
}

async function commitTable(catalog: Catalog, id: TableId, b: Json): Promise<unknown> {
  const requirements = (b.requirements as Json[] | undefined) ?? []
  const updates = (b.updates as Json[] | undefined) ?? []
  const current = await catalog.loadTable(id)
  checkRequirements(current.metadata, requirements)
  const next = applyUpdates(current.metadata, updates)
  const out = await catalog.commit(id, { base: current.metadataLocation, metadata: next, baseMetadata: current.metadata })
  return { 'metadata-location': out.metadataLocation, metadata: out.metadata }
}
