/**
 * `floe inspect <metadata.json | table location> [--path-map FROM=TO ...]`: a table's metadata
 * summary and, for the current snapshot, file and record counts read from its manifests.
 */
import { parseArgs } from 'node:util'
import { createClients, destroyClients } from '../clients.js'
import { createFileIO, withPathMap, type FileIO } from '../io/index.js'
import { stringifyJson, findCurrentMetadataPath, readTableMetadata, currentSchema, currentSnapshot } from '../iceberg/index.js'
import { liveEntries } from '../iceberg/manifests.js'
import { existsSync } from 'node:fs'
import { createCatalog, parseTableId } from '../catalog/index.js'
import type { Command } from './command.js'
import { openTarget, TARGET_OPTIONS, TARGET_USAGE } from './target.js'

export interface InspectResult {
  metadataLocation: string
  formatVersion: number
  tableUuid: string | undefined
  location: string
  currentSnapshotId: string | null
  currentSchema: unknown
  partitionSpecs: unknown
  defaultSpecId: number
  snapshotCount: number
  /** Counts of the current snapshot; zeros (and a null operation) for a table without one. */
  currentSnapshot: {
    operation: string | null
    dataFiles: number
    deleteFiles: number
    positionDeleteFiles: number
    equalityDeleteFiles: number
    records: number
  }
}

/** Reads the table at `target` (a metadata file or a table location) through `io`. */
export async function inspectTable(io: FileIO, target: string): Promise<InspectResult> {
  const metadataLocation = target.replace(/\/+$/, '').endsWith('.metadata.json') ? target : await findCurrentMetadataPath(io, target)
  const md = await readTableMetadata(io, metadataLocation)
  const snap = currentSnapshot(md)
  let current: InspectResult['currentSnapshot'] = { operation: null, dataFiles: 0, deleteFiles: 0, positionDeleteFiles: 0, equalityDeleteFiles: 0, records: 0 }
  if (snap) {
    const entries = await liveEntries(io, md, { snapshotId: snap['snapshot-id'] })
    const data = entries.filter((e) => e.dataFile.content === 0)
    const deletes = entries.filter((e) => e.dataFile.content !== 0)
    current = {
      operation: snap.summary.operation,
      dataFiles: data.length,
      deleteFiles: deletes.length,
      positionDeleteFiles: deletes.filter((e) => e.dataFile.content === 1).length,
      equalityDeleteFiles: deletes.filter((e) => e.dataFile.content === 2).length,
      records: data.reduce((a, e) => a + e.dataFile.recordCount, 0),
    }
  }
  return {
    metadataLocation,
    formatVersion: md['format-version'],
    tableUuid: md['table-uuid'],
    location: md.location,
    currentSnapshotId: snap ? snap['snapshot-id'].toString() : null,
    currentSchema: currentSchema(md),
    partitionSpecs: md['partition-specs'],
    defaultSpecId: md['default-spec-id'],
    snapshotCount: md.snapshots.length,
    currentSnapshot: current,
  }
}

/** `FROM=TO` pairs, longest FROM first so nested prefixes map correctly. */
export function parsePathMap(values: string[]): [string, string][] {
  return values
    .map((v): [string, string] => {
      const i = v.indexOf('=')
      if (i <= 0) throw new Error(`--path-map expects FROM=TO, got '${v}'`)
      return [v.slice(0, i), v.slice(i + 1)]
    })
    .sort((a, b) => b[0].length - a[0].length)
}

export const inspectCommand: Command = {
  name: 'inspect',
  summary: 'Print an Iceberg table\'s metadata summary and current file/record counts as JSON',
  usage: `Usage: floe inspect <namespace.table | metadata.json path | table location> [--path-map FROM=TO ...]

A table name (demo.clicks) is looked up in the catalog of the pipeline --stack, the environment
or the local state (--dir, default ./floe-local) points at.

Reads table metadata (a *.metadata.json file, or the current one under <location>/metadata/
via version-hint.text or the highest version) and the current snapshot's manifests, and prints
JSON: format version, table uuid, current snapshot id (a string), current schema, partition
specs, snapshot count, and the current snapshot's data files, delete files and records
(all 0 for a table without snapshots).

  --path-map FROM=TO   rewrite paths starting with FROM to TO (repeatable), to read a table
                       copied from elsewhere, e.g. --path-map s3://warehouse/t=/tmp/t

Paths: s3://, s3a://, file:// or local paths; S3 endpoint from AWS_ENDPOINT_URL(_S3).
${TARGET_USAGE}`,
  async run(argv) {
    const { values, positionals } = parseArgs({
      args: argv,
      options: { 'path-map': { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h' }, ...TARGET_OPTIONS },
      strict: true,
      allowPositionals: true,
    })
    if (values.help) {
      process.stdout.write(`${this.usage}\n`)
      return 0
    }
    if (positionals.length !== 1) {
      process.stderr.write(`${this.usage}\n`)
      return 2
    }
    const target = positionals[0]!
    if (isTableName(target)) return inspectByName(target, values)
    const clients = createClients()
    try {
      const io = withPathMap(createFileIO(clients), parsePathMap(values['path-map'] ?? []))
      const result = await inspectTable(io, target)
      process.stdout.write(`${stringifyJson(result, 2)}\n`)
      return 0
    } finally {
      destroyClients(clients)
    }
  },
}

/** `demo.clicks`: a catalog table name, not a path or URL (and no such file here). */
const isTableName = (text: string) => /^[^/\\:]+\.[^/\\:]+$/.test(text) && !text.endsWith('.json') && !existsSync(text)

/** Inspect a table by its catalog name, in the pipeline `--stack`, the environment or `--dir` point at. */
async function inspectByName(name: string, values: { dir?: string; stack?: string; 'path-map'?: string[] }): Promise<number> {
  const target = await openTarget(values)
  try {
    const io = withPathMap(createFileIO(target.clients), parsePathMap(values['path-map'] ?? []))
    const { metadataLocation } = await createCatalog(target.config, target.clients, io).loadTable(parseTableId(name, target.config.routes.defaultNamespace))
    process.stdout.write(`${stringifyJson(await inspectTable(io, metadataLocation), 2)}\n`)
    return 0
  } finally {
    await target.close()
  }
}
