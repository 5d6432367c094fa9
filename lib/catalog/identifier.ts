/**
 * Table identity: the one owner of what a table id is and how its text is parsed, formatted and
 * normalised. Every folder imports these from lib/catalog's face.
 *
 * One splitting rule for all of them (Iceberg Java's TableIdentifier.parse): the text after the
 * last `.` is the table name, the text before it the namespace, whose levels are separated by
 * dots (`a.b.events` → namespace `a.b`, table `events`). No level and no name may be empty
 * (Iceberg Java's DynamoDbCatalog.validateTableIdentifier).
 *
 * - `parseTableId` takes the text as written (case kept: a table another engine created is found
 *   by its own name); with no dot it takes `defaultNamespace`, or refuses without one.
 * - `normalizeTableId` / `normalizeTableName` are for names Floe creates (from config and from
 *   record values): every part is lowercased and each run of characters outside `[a-z0-9_]`
 *   becomes one `_` (Glue and Athena accept only these; Iceberg Java's DynamoDbCatalog accepts
 *   them too), e.g. `Orders-EU.v2` → namespace `orders_eu`, table `v2`. A part with no letter or
 *   digit left is an error (for a record value: a dead letter, never a table called "").
 *   A normalised name always parses back to the same id.
 */
import { IcebergError } from '../errors.js'

/** `namespace` is one string (Iceberg Java joins multi-level namespaces with dots); `name` has no dot. */
export interface TableId {
  namespace: string
  name: string
}

/** `namespace.name`, the text form every other function here reads back. */
export const tableName = (id: TableId): string => `${id.namespace}.${id.name}`

/** Parse `ns.table` as written (the last dot separates the name); validated. */
export function parseTableId(text: string, defaultNamespace?: string): TableId {
  const dot = text.lastIndexOf('.')
  if (dot < 0) {
    if (defaultNamespace === undefined) throw new IcebergError(`table '${text}' has no namespace (expected namespace.table)`)
    return validateTableId({ namespace: defaultNamespace, name: text })
  }
  return validateTableId({ namespace: text.slice(0, dot), name: text.slice(dot + 1) })
}

/** Iceberg Java's rules (DynamoDbCatalog.validateTableIdentifier): non-empty namespace levels, no dot in the name. */
export function validateTableId(id: TableId): TableId {
  validateNamespace(id.namespace)
  if (!id.name || id.name.includes('.')) throw new IcebergError(`table name '${id.name}' in namespace '${id.namespace}' must be non-empty and contain no dot`)
  return id
}

export function validateNamespace(namespace: string): void {
  if (!namespace || namespace.split('.').some((level) => level === '')) {
    throw new IcebergError(`namespace '${namespace}' must be non-empty with no empty levels`)
  }
}

/** Lowercase; each run of characters outside [a-z0-9_] becomes `_`. Returns '' when no letter or digit is left. */
export function sanitizeName(part: string): string {
  const s = part.toLowerCase().replace(/[^a-z0-9_]+/g, '_')
  return /[a-z0-9]/.test(s) ? s : ''
}

/** `A.b.Events` → namespace `a.b`, table `events`; `events` → the (sanitised) default namespace. Throws on a part left empty. */
export function normalizeTableId(name: string, defaultNamespace: string): TableId {
  const parts = name.split('.')
  const table = sanitizeName(parts.pop() ?? '')
  const namespace = (parts.length ? parts : defaultNamespace.split('.')).map(sanitizeName)
  if (table === '' || namespace.some((p) => p === ''))
    throw new IcebergError(`table name ${JSON.stringify(name)} has an empty part after sanitising to [a-z0-9_]`)
  return { namespace: namespace.join('.'), name: table }
}

/** normalizeTableId as text (`namespace.table`). */
export function normalizeTableName(name: string, defaultNamespace: string): string {
  return tableName(normalizeTableId(name, defaultNamespace))
}
