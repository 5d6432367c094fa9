/**
 * What `floe start` prints: the progress line (rate, ETA), the summary (whose numbers add up and
 * say where every dead letter went) and the commands to look at the result — each of them works
 * as printed from the directory `npm start` ran in.
 */
import type { FloeConfig } from '../config.js'
import { LOCAL_REGION, type Progress, type DeadLetterCounts, type TableSummary } from '../local/index.js'

/** `1,234` — one number format everywhere. */
export const n = (x: number) => x.toLocaleString('en-US')
/** `1 commit`, `2 commits`. */
export const count = (x: number, one: string, many = `${one}s`) => `${n(x)} ${x === 1 ? one : many}`

const duration = (ms: number) => (ms < 90_000 ? `${Math.round(ms / 1000)} s` : `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`)

export function progressLine(p: Progress): string {
  const rate = p.elapsedMs > 0 ? (p.delivered / p.elapsedMs) * 1000 : 0
  const left = p.total - p.delivered
  const eta = left <= 0 ? 'settling' : rate > 0 ? `ETA ${duration((left / rate) * 1000)}` : 'ETA –'
  return `${n(p.delivered)}/${n(p.total)} records · ${n(Math.round(rate))} rec/s · ${eta} · ${count(p.batches, 'batch', 'batches')} · ${count(p.files, 'file')} · ${count(p.commits, 'commit')} · ${count(p.deadLetters, 'dead letter')}`
}

/** In place on a terminal, one line every 2 s otherwise (CI logs). */
export function progressPrinter(out: (line: string) => void, tty = process.stdout.isTTY === true) {
  let last = 0
  const line = (p: Progress) => {
    if (!tty) return progressLine(p)
    const width = 24
    const filled = p.total > 0 ? Math.min(width, Math.round((p.delivered / p.total) * width)) : width
    return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${progressLine(p)}`
  }
  return {
    update: (p: Progress) => {
      if (tty) process.stdout.write(`\r${line(p)}\u001b[K`)
      else if (p.elapsedMs - last >= 2_000) {
        last = p.elapsedMs
        out(line(p))
      }
    },
    done: (p: Progress) => {
      if (tty) process.stdout.write(`\r${line(p)}\u001b[K\n`)
      else out(line(p))
    },
  }
}

export interface RunFacts {
  source: string
  produced: number
  /** Demo poison records, or malformed input lines. */
  bad: { count: number; what: string }
  result: Progress
  deadBefore: number
  dead: DeadLetterCounts
  /** How the user runs the CLI from here (`npx floe`), and the --dir flag it needs (or ''). */
  cli: string
  dirFlag: string
  /** `--serve`: the engine configuration follows, so the summary does not point at it. */
  serving: boolean
}

export function printSummary(out: (line: string) => void, config: FloeConfig, tables: TableSummary[], before: TableSummary[], run: RunFacts): void {
  const prior = new Map(before.map((t) => [t.table, t]))
  out('')
  out(`done in ${(run.result.elapsedMs / 1000).toFixed(1)} s: ${count(run.result.batches, 'writer invocation')}, ${count(run.result.commits, 'commit')}`)
  out('')
  const row = (name: string, rows: string, files: string, snaps: string, parts: string, dead: string) =>
    out(`${name.padEnd(30)} ${rows.padEnd(24)} ${files.padStart(6)} ${snaps.padStart(10)} ${parts.padStart(11)} ${dead.padStart(13)}`)
  row('table', 'rows (+this run)', 'files', 'snapshots', 'partitions', 'dead letters')
  for (const t of tables) {
    const added = t.rows - (prior.get(t.table)?.rows ?? 0)
    row(t.table, `${n(t.rows)} (+${n(added)})`, n(t.files), n(t.snapshots), n(t.partitions), n(t.deadLetters))
  }
  const inTables = tables.reduce((s, t) => s + t.deadLetters, 0)
  const noTable = run.dead.total - inTables
  if (noTable > 0) row('(no table)', '', '', '', '', n(noTable))
  const reasons = [...run.dead.byReason].map(([stage, k]) => `${n(k)} ${stage}`).join(', ')
  out('')
  const addedRows = tables.reduce((s, t) => s + t.rows - (prior.get(t.table)?.rows ?? 0), 0)
  const newDead = run.dead.total - run.deadBefore
  out(`this run: ${count(run.produced, 'record')} ${run.source}${run.bad.count ? `, ${n(run.bad.count)} ${run.bad.what}` : ''} → ${count(addedRows, 'row')} added to tables, ${count(newDead, 'new dead letter')}`)
  out(
    `dead-letter store (${config.dlq}): ${count(run.dead.total, 'dead letter')} in all${run.dead.total ? ` — ${n(inTables)} for a table, ${n(noTable)} for no table (could not be decoded or routed); by stage: ${reasons}` : ''}`,
  )
  if (tables.length === 0) return
  const first = tables[0]!
  const localPath = (p: string) => p.replace(/^file:\/\//, '')
  out('')
  out('look at the result (from this directory):')
  out(`  ${run.cli} status${run.dirFlag}`)
  out(`  ${run.cli} inspect ${first.table}${run.dirFlag}`)
  if (run.dead.total) out(`  ${run.cli} dead-letters --group-by reason${run.dirFlag}`)
  if (first.metadataLocation.startsWith('file://')) {
    out(`  duckdb -c "INSTALL iceberg; LOAD iceberg; SELECT count(*) FROM iceberg_scan('${localPath(first.metadataLocation)}');"`)
  }
  if (!run.serving) out(`  Spark or PyIceberg against the same catalog: run \`npm start -- --serve --records 0${run.dirFlag}\` and follow what it prints`)
}

/** Copy-paste configuration for engines while `floe start --serve` keeps the endpoints up. */
export function serveInstructions(config: FloeConfig, endpoints: { dynamodb: string; s3: string }, firstTable?: TableSummary): string[] {
  const region = config.region ?? LOCAL_REGION
  const table = firstTable?.table ?? 'demo.clicks'
  const s3 = config.warehouse.startsWith('s3://')
  const lines = [
    '',
    `endpoints are running: DynamoDB ${endpoints.dynamodb}, S3 ${endpoints.s3} (credentials S3RVER / S3RVER, region ${region})`,
    '',
    'Spark (Iceberg DynamoDbCatalog on the same catalog table):',
    '  AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER AWS_REGION=' + region + ' spark-sql \\',
    '    --packages org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.10.0,org.apache.iceberg:iceberg-aws-bundle:1.10.0 \\',
    '    --conf spark.sql.catalog.floe=org.apache.iceberg.spark.SparkCatalog \\',
    '    --conf spark.sql.catalog.floe.catalog-impl=org.apache.iceberg.aws.dynamodb.DynamoDbCatalog \\',
    `    --conf spark.sql.catalog.floe.dynamodb.table-name=${config.catalogTable} \\`,
    `    --conf spark.sql.catalog.floe.dynamodb.endpoint=${endpoints.dynamodb} \\`,
    ...(s3 ? [`    --conf spark.sql.catalog.floe.s3.endpoint=${endpoints.s3} --conf spark.sql.catalog.floe.s3.path-style-access=true \\`] : []),
    `    --conf spark.sql.catalog.floe.warehouse=${config.warehouse} \\`,
    `    -e "SELECT count(*) FROM floe.${table}"`,
    '',
    'PyIceberg:',
    `  from pyiceberg.catalog import load_catalog`,
    `  cat = load_catalog("floe", **{"type": "dynamodb", "table-name": "${config.catalogTable}", "dynamodb.endpoint": "${endpoints.dynamodb}", "dynamodb.region": "${region}", "dynamodb.access-key-id": "S3RVER", "dynamodb.secret-access-key": "S3RVER"${s3 ? `, "s3.endpoint": "${endpoints.s3}", "s3.access-key-id": "S3RVER", "s3.secret-access-key": "S3RVER"` : ''}})`,
    `  print(cat.load_table("${table}").scan().to_arrow().num_rows)`,
    '',
    ...(firstTable && !s3
      ? ['DuckDB:', `  duckdb -c "INSTALL iceberg; LOAD iceberg; SELECT count(*) FROM iceberg_scan('${firstTable.metadataLocation.replace(/^file:\/\//, '')}');"`, '']
      : []),
    'floe status, inspect and dead-letters in another terminal use these endpoints.',
    'Ctrl-C to stop.',
  ]
  return lines
}
