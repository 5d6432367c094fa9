/**
 * Floe's catalog interface over the Iceberg REST protocol (open-api/rest-catalog-open-api.yaml):
 * S3 Tables, Glue's Iceberg endpoint, Polaris, Lakekeeper, Nessie, and Floe's own endpoint.
 *
 * The first call asks GET /v1/config (with `warehouse`) for the catalog's defaults, overrides and
 * path prefix. Tables are created by the server (it decides the location: S3 Tables manages it)
 * and commits send requirements + updates (updates.ts) instead of a metadata file: the server
 * writes the metadata. Status handling follows the spec's CommitTableResponse: 409 means the
 * requirements failed (CommitConflictError: reload, rebase, retry); 500, 502, 503, 504, any
 * other 5xx and a timeout or broken connection after sending mean the commit may have landed
 * (CommitStateUnknownError: the committer reloads and checks before anything else).
 */
import { AlreadyExistsError, CatalogRequestError, CommitConflictError, CommitStateUnknownError, IcebergError, NoSuchTableError } from '../../errors.js'
import { parseTableMetadata, stringifyJson, type TableMetadata } from '../../iceberg/index.js'
import { type TableId, tableName, validateNamespace, validateTableId } from '../identifier.js'
import type { Catalog, CommitRequest, CreateTableOptions, LoadedTable } from '../types.js'
import type { RestAuth } from './auth.js'
import { errorText, type RestReply, RestHttp } from './http.js'
import { diffMetadata } from './updates.js'

export interface RestCatalogOptions {
  /** Base URI, e.g. `https://s3tables.us-east-1.amazonaws.com/iceberg` (no `/v1`). */
  uri: string
  /** `warehouse` for GET /v1/config: the table-bucket ARN (S3 Tables), the account id (Glue), a catalog name (Polaris). */
  warehouse?: string
  auth: RestAuth
  timeoutMs: number
  /** Loads metadata for `commit` when the caller has no base metadata. */
  loadBase?: (id: TableId, base: string) => Promise<TableMetadata | undefined>
}

interface Session {
  http: RestHttp
  root: URL
  prefix: string
  properties: Record<string, string>
}

/** REST namespaces are lists of levels; Floe's are dotted strings (as Iceberg Java prints them). */
const levels = (namespace: string): string[] => namespace.split('.')
/** A namespace in a path: levels joined by the unit separator 0x1F, then percent-encoded (spec: `namespace` parameter). */
const nsPath = (namespace: string): string => encodeURIComponent(levels(namespace).join('\x1f'))

export class RestCatalog implements Catalog {
  private session?: Promise<Session>

  constructor(private readonly opts: RestCatalogOptions) {}

  /** The merged catalog properties (defaults < client < overrides) the server's config endpoint returned. */
  async properties(): Promise<Record<string, string>> {
    return (await this.connect()).properties
  }

  private connect(): Promise<Session> {
    this.session ??= this.configure().catch((err: unknown) => {
      this.session = undefined
      throw err
    })
    return this.session
  }

  private async configure(): Promise<Session> {
    const http = new RestHttp({ auth: this.opts.auth, timeoutMs: this.opts.timeoutMs })
    const base = new URL(this.opts.uri.replace(/\/+$/, '') + '/')
    const url = new URL('v1/config', base)
    if (this.opts.warehouse) url.searchParams.set('warehouse', this.opts.warehouse)
    const reply = await http.send('GET', url)
    if (reply.status !== 200) throw requestError('GET /v1/config', reply, this.opts.uri)
    const body = reply.body as { defaults?: Record<string, string>; overrides?: Record<string, string> }
    const client: Record<string, string> = this.opts.warehouse ? { warehouse: this.opts.warehouse } : {}
    const properties: Record<string, string> = { ...body.defaults, ...client, ...body.overrides }
    const root = properties.uri ? new URL(properties.uri.replace(/\/+$/, '') + '/') : base
    const headers = Object.fromEntries(Object.entries(properties).filter(([k]) => k.startsWith('header.')).map(([k, v]) => [k.slice('header.'.length), v]))
    const prefix = (properties.prefix ?? '').replace(/^\/+|\/+$/g, '')
    return { http: new RestHttp({ auth: this.opts.auth, timeoutMs: this.opts.timeoutMs, headers }), root, prefix, properties }
  }

  private async call(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, query?: Record<string, string>): Promise<RestReply> {
    const s = await this.connect()
    const url = new URL(`v1/${s.prefix ? `${s.prefix}/` : ''}${path}`, s.root)
    for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, v)
    return s.http.send(method, url, body)
  }

  async createNamespace(namespace: string, properties: Record<string, string> = {}): Promise<void> {
    validateNamespace(namespace)
    const reply = await this.call('POST', 'namespaces', { namespace: levels(namespace), properties })
    if (reply.status === 409) throw new AlreadyExistsError(`namespace '${namespace}' already exists in REST catalog ${this.opts.uri}: ${errorText(reply)}`)
    if (reply.status !== 200) throw requestError(`creating namespace '${namespace}'`, reply, this.opts.uri)
  }

  async listNamespaces(): Promise<string[]> {
    const out: string[] = []
    for await (const page of this.pages('namespaces', 'namespaces')) for (const ns of page as string[][]) out.push(ns.join('.'))
    return out
  }

  async loadNamespace(namespace: string): Promise<Record<string, string> | undefined> {
    validateNamespace(namespace)
    const reply = await this.call('GET', `namespaces/${nsPath(namespace)}`)
    if (reply.status === 404) return undefined
    if (reply.status !== 200) throw requestError(`loading namespace '${namespace}'`, reply, this.opts.uri)
    return ((reply.body as { properties?: Record<string, string> }).properties ?? {}) as Record<string, string>
  }

  async listTables(namespace: string): Promise<TableId[]> {
    const out: TableId[] = []
    for await (const page of this.pages(`namespaces/${nsPath(namespace)}/tables`, 'identifiers')) {
      for (const id of page as { namespace: string[]; name: string }[]) out.push({ namespace: id.namespace.join('.'), name: id.name })
    }
    return out
  }

  /** Pages of a list endpoint (`page-token` / `next-page-token`). */
  private async *pages(path: string, key: string): AsyncGenerator<unknown[]> {
    let token: string | undefined
    do {
      const reply = await this.call('GET', path, undefined, token ? { pageToken: token } : {})
      if (reply.status === 404) throw new NoSuchTableError(`REST catalog ${this.opts.uri}: GET ${path}: ${errorText(reply)}`)
      if (reply.status !== 200) throw requestError(`GET ${path}`, reply, this.opts.uri)
      const body = reply.body as Record<string, unknown>
      yield (body[key] as unknown[] | undefined) ?? []
      token = (body['next-page-token'] as string | null | undefined) ?? undefined
    } while (token)
  }

  async loadTable(id: TableId): Promise<LoadedTable> {
    validateTableId(id)
    const reply = await this.call('GET', this.tablePath(id))
    if (reply.status === 404) throw new NoSuchTableError(`table ${tableName(id)} does not exist in REST catalog ${this.opts.uri}: ${errorText(reply)}`)
    if (reply.status !== 200) throw requestError(`loading table ${tableName(id)}`, reply, this.opts.uri)
    return loaded(reply, tableName(id))
  }

  async createTable(id: TableId, opts: CreateTableOptions): Promise<LoadedTable> {
    validateTableId(id)
    const request: Record<string, unknown> = { name: id.name, schema: opts.schema, 'stage-create': false, properties: opts.properties ?? {} }
    if (opts.location) request.location = opts.location
    if (opts.spec) request['partition-spec'] = opts.spec
    if (opts.sortOrder) request['write-order'] = opts.sortOrder
    const reply = await this.call('POST', `namespaces/${nsPath(id.namespace)}/tables`, request)
    if (reply.status === 409) throw new AlreadyExistsError(`table ${tableName(id)} already exists in REST catalog ${this.opts.uri}: ${errorText(reply)}`)
    if (reply.status === 404) throw new NoSuchTableError(`cannot create table ${tableName(id)}: namespace '${id.namespace}' does not exist in REST catalog ${this.opts.uri}: ${errorText(reply)}`)
    if (reply.status !== 200) throw requestError(`creating table ${tableName(id)}`, reply, this.opts.uri)
    return loaded(reply, tableName(id))
  }

  async commit(id: TableId, req: CommitRequest): Promise<{ metadataLocation: string; metadata: TableMetadata }> {
    const table = tableName(id)
    const base = req.baseMetadata ?? (await this.opts.loadBase?.(id, req.base)) ?? (await this.currentAt(id, req.base))
    const { requirements, updates } = diffMetadata(base, req.metadata)
    const body = { identifier: { namespace: levels(id.namespace), name: id.name }, requirements, updates }
    let reply: RestReply
    try {
      reply = await this.call('POST', this.tablePath(id), body)
    } catch (err) {
      if (err instanceof CatalogRequestError && err.status === undefined && !neverSent(err)) {
        throw new CommitStateUnknownError(`table ${table}: commit outcome unknown: ${err.message}`, { cause: err })
      }
      throw err
    }
    if (reply.status === 200) return loaded(reply, table)
    const why = `REST catalog ${this.opts.uri} answered HTTP ${reply.status} (${errorText(reply)})`
    if (reply.status === 409) throw new CommitConflictError(`table ${table}: commit requirements failed, the table moved on since ${req.base}: ${why}`)
    if (reply.status >= 500) throw new CommitStateUnknownError(`table ${table}: commit outcome unknown: ${why}`)
    if (reply.status === 404) throw new NoSuchTableError(`table ${table}: commit refused: ${why}`)
    throw requestError(`committing table ${table}`, reply, this.opts.uri)
  }

  /** The base metadata by reloading: only valid if the table still is at `base` (else the commit would conflict anyway). */
  private async currentAt(id: TableId, base: string): Promise<TableMetadata> {
    const current = await this.loadTable(id)
    if (current.metadataLocation !== base) throw new CommitConflictError(`table ${tableName(id)}: base metadata ${base} is no longer current (the catalog points at ${current.metadataLocation})`)
    return current.metadata
  }

  private tablePath(id: TableId): string {
    return `namespaces/${nsPath(id.namespace)}/tables/${encodeURIComponent(id.name)}`
  }
}

/** A LoadTableResult / CommitTableResponse as Floe's LoadedTable. */
function loaded(reply: RestReply, table: string): LoadedTable {
  const body = reply.body as { 'metadata-location'?: string; metadata?: unknown }
  if (!body?.metadata || !body['metadata-location']) throw new IcebergError(`table ${table}: REST catalog response has no metadata or metadata-location: ${reply.text.slice(0, 300)}`)
  return { metadata: parseTableMetadata(stringifyJson(body.metadata)), metadataLocation: body['metadata-location'] }
}

/** A connection that was never made (refused, unknown host) carried no commit: a plain retryable failure. */
function neverSent(err: CatalogRequestError): boolean {
  const code = ((err.cause as Error | undefined)?.cause as { code?: string } | undefined)?.code
  return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN'
}

function requestError(what: string, reply: RestReply, uri: string): CatalogRequestError {
  const retryable = reply.status === 429 || reply.status >= 500
  return new CatalogRequestError(`REST catalog ${uri}: ${what} answered HTTP ${reply.status} (${errorText(reply)})`, { status: reply.status, retryable })
}
