/**
 * One error hierarchy for Floe. Every error sets `name`, carries `cause`, and says whether
 * retrying the same work can succeed (`retryable`). Only conflicts, throttling and
 * back pressure are retryable; bad input and bad config never are.
 */
/** `scheme://user:password@host` (or `user@host`) anywhere in a text. */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>]*@/gi

/**
 * Credentials in URLs never leave Floe: `https://user:secret@registry/x` → `https://***@registry/x`.
 * Applied to every FloeError message, every log line (lib/log.ts) and every dead-letter reason.
 */
export function redactUrls(text: string): string {
  return text.includes('@') ? text.replace(URL_USERINFO, '$1***@') : text
}

export class FloeError extends Error {
  readonly retryable: boolean

  constructor(message: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super(redactUrls(message), options.cause === undefined ? undefined : { cause: options.cause })
    this.name = new.target.name
    this.retryable = options.retryable ?? false
  }
}

/** A FLOE_* setting (or CDK context key) is missing or invalid. Names the key and the value. */
export class ConfigError extends FloeError {
  constructor(readonly key: string, message: string, options: { cause?: unknown } = {}) {
    super(`${key}: ${message}`, options)
  }
}

/** The Lambda event itself is malformed (not one bad record: the whole event). */
export class EventShapeError extends FloeError {}

/** One record cannot be decoded or coerced; it becomes a dead letter with this message as reason. */
export class RecordError extends FloeError {}

/** A schema change the Iceberg spec forbids, or a schema that cannot be mapped. */
export class SchemaError extends FloeError {}

/** Table metadata, a manifest or a data file violates the Iceberg spec or cannot be read. */
export class IcebergError extends FloeError {}

/** Someone else committed first; reload, rebase and retry. */
export class CommitConflictError extends FloeError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: true })
  }
}

/**
 * The commit may or may not have happened (timeout after sending). Not retryable: retrying the
 * same swap blindly could apply it twice. The reload-and-rebase loop (lib/catalog/rebase.ts)
 * retries it only for a caller whose rebuild on the reloaded table sees whether it landed
 * (`recheckUnknown`: the committer drops batches the table's offsets summary covers, maintenance
 * re-plans against the live files); the writer's schema commit fails the batch with it.
 */
export class CommitStateUnknownError extends FloeError {}

/** An Iceberg REST catalog refused or failed a request (HTTP status, the server's error type and message); 429 and 5xx reads are retryable. */
export class CatalogRequestError extends FloeError {
  readonly status?: number
  constructor(message: string, options: { cause?: unknown; retryable?: boolean; status?: number } = {}) {
    super(message, options)
    this.status = options.status
  }
}

/** The table (or namespace) does not exist in the catalog. */
export class NoSuchTableError extends FloeError {}

/** The table (or namespace) already exists. */
export class AlreadyExistsError extends FloeError {}

/** A conditional write lost to another writer of the control table (stale offsets, lost lease). */
export class FencedError extends FloeError {}

/** The service throttled us or answered 5xx after the SDK's own retries. */
export class ThrottledError extends FloeError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: true })
  }
}

/** A table's uncommitted backlog is past FLOE_MAX_PENDING_BATCHES: fail so the mapping retries later. */
export class BackpressureError extends FloeError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: true })
  }
}

/**
 * A batch reaching more tables than FLOE_MAX_TABLES_PER_BATCH: what fit is registered, the rest
 * of the cut partitions waits for the mapping's retry (which drops what is registered).
 * `result` is the invocation's plain WriteResult (for the log).
 */
export class BatchDeferredError extends FloeError {
  constructor(message: string, readonly result?: unknown, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: true })
  }
}

/** A schema registry could not be reached (retryable), as opposed to a schema that does not exist. */
export class RegistryUnavailableError extends FloeError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: true })
  }
}

/**
 * A writer worker thread (FLOE_WRITER_WORKERS) died with work in flight: the invocation fails
 * before anything is registered and the mapping retries the batch (retryable); the pool starts
 * a new thread for the next one.
 */
export class WorkerCrashedError extends FloeError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: true })
  }
}

/** The one decision whether an error may be retried (lib/retry's loop asks nothing else). */
export function isRetryable(err: unknown): boolean {
  return err instanceof FloeError && err.retryable
}

/** A FileIO read of a file that does not exist (s3:// NoSuchKey, file:// ENOENT). Names the path. */
export class FileNotFoundError extends FloeError {
  constructor(readonly path: string, options: { cause?: unknown } = {}) {
    super(`file not found: ${path}`, options)
  }
}

/** A rewrite (compaction) would replace data files that are no longer live; `paths` names them. */
export class ReplacedFileGoneError extends IcebergError {
  constructor(message: string, readonly paths: string[]) {
    super(message)
  }
}
