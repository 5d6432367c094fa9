/**
 * One HTTP exchange with an Iceberg REST catalog: JSON in and out losslessly (64-bit ids stay
 * bigint both ways), authentication headers from RestAuth, a timeout per request. Transport
 * failures (connection refused, reset, timeout) throw CatalogRequestError without a status; any
 * HTTP answer is returned, and callers decide what its status means.
 */
import { CatalogRequestError } from '../../errors.js'
import { parseJson, stringifyJson } from '../../iceberg/index.js'
import type { RestAuth } from './auth.js'

export interface RestReply {
  status: number
  /** Parsed JSON (lossless), or undefined for an empty body. */
  body: unknown
  text: string
}

export interface RestHttpOptions {
  auth: RestAuth
  timeoutMs: number
  /** Extra headers on every request (`header.*` catalog properties). */
  headers?: Record<string, string>
}

export class RestHttp {
  constructor(private readonly opts: RestHttpOptions) {}

  async send(method: 'GET' | 'POST' | 'DELETE' | 'HEAD', url: URL, body?: unknown, contentType = 'application/json'): Promise<RestReply> {
    const text = body === undefined ? undefined : typeof body === 'string' ? body : stringifyJson(body)
    const headers: Record<string, string> = { accept: 'application/json', ...this.opts.headers }
    if (text !== undefined) headers['content-type'] = contentType
    const signed = await this.opts.auth.headers({ method, url, headers, body: text })
    let res: Response
    let replyText: string
    try {
      res = await fetch(url, { method, headers: signed, body: text, signal: AbortSignal.timeout(this.opts.timeoutMs) })
      replyText = await res.text()
    } catch (err) {
      const e = err as Error
      const what = e.name === 'TimeoutError' ? `timed out after ${this.opts.timeoutMs} ms (FLOE_REST_TIMEOUT_MS)` : `failed: ${e.message}${causeText(e)}`
      throw new CatalogRequestError(`REST catalog ${method} ${url.pathname} ${what}`, { cause: err, retryable: true })
    }
    let parsed: unknown
    if (replyText.trim() !== '') {
      try {
        parsed = parseJson(replyText)
      } catch {
        parsed = undefined
      }
    }
    return { status: res.status, body: parsed, text: replyText }
  }
}

const causeText = (e: Error): string => (e.cause instanceof Error ? ` (${e.cause.message})` : '')

/** The REST spec's ErrorModel (`{"error": {message, type, code}}`) as one line, or the raw body. */
export function errorText(reply: RestReply): string {
  const err = (reply.body as { error?: { message?: unknown; type?: unknown } } | undefined)?.error
  if (err && typeof err === 'object') return `${String(err.type ?? 'error')}: ${String(err.message ?? '')}`
  return reply.text.slice(0, 300) || '(empty body)'
}
