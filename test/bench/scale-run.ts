/** `npm run bench -- --scale`: the load test before (unsharded, flat data paths, a count per invocation) and after (defaults). */
import { writeFileSync } from 'node:fs'
import { logger } from '../../lib/log.js'
import { localAws } from './common.js'
import { benchScale, formatScale, type ScaleOptions } from './scale.js'

/** The layout before issue 25: one pending key per table, one index key, flat data paths, back pressure by counting, the catalog pointer read on every invocation. */
export const BEFORE = { FLOE_PENDING_SHARDS: '1', FLOE_OBJECT_STORAGE_LAYOUT: 'false', FLOE_BACKLOG_FRESH_SECONDS: '1', FLOE_COMMIT_RUN_SECONDS: '0', FLOE_CATALOG_POINTER_TTL_SECONDS: '0' }

export async function runScale(out: string, size: Pick<ScaleOptions, 'workers' | 'partitionsPerWorker' | 'rounds' | 'records'> = { workers: 4, partitionsPerWorker: 8, rounds: 6, records: 200 }): Promise<void> {
  // The committer logs every table at INFO: keep the output to the tables.
  logger.setLogLevel('WARN')
  const log = (s: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${s}`)
  const { endpoints, clients } = await localAws()
  try {
    const runs = []
    runs.push(await benchScale(clients, { label: 'before (unsharded)', ...size, settings: BEFORE }, log))
    runs.push(await benchScale(clients, { label: 'after (defaults)', ...size, settings: {} }, log))
    writeFileSync(out, JSON.stringify(runs, null, 2) + '\n')
    console.log(formatScale(runs))
    console.log(`\nwrote ${out}`)
  } finally {
    await endpoints.stop()
  }
}
