/**
 * What `floe start` leaves in its directory for the other commands: `state.json` (the warehouse
 * and the FLOE_* settings the run used, so `floe status` / `commit` / `inspect` / `dead-letters`
 * find the same tables without any environment) and, while `floe start --serve` runs,
 * `serve.json` (its endpoints and pid, so those commands use the running endpoints instead of
 * starting a second DynamoDB Local on the same files).
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export interface LocalState {
  warehouse: string
  /** The warehouse is in the embedded S3 server (`floe start --s3`). */
  s3: boolean
  /** FLOE_* settings of the run (environment and the start command's own). */
  settings: Record<string, string>
}

export interface ServeInfo {
  pid: number
  dynamodb: string
  s3: string
  /** The Iceberg REST catalog `--serve` serves. */
  rest?: string
}

export function saveLocalState(dir: string, state: LocalState): void {
  writeFileSync(join(dir, 'state.json'), `${JSON.stringify(state, null, 2)}\n`)
}

export function readLocalState(dir: string): LocalState | undefined {
  const file = join(dir, 'state.json')
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as LocalState) : undefined
}

export function writeServeInfo(dir: string, info: ServeInfo): void {
  writeFileSync(join(dir, 'serve.json'), `${JSON.stringify(info)}\n`)
}

export function removeServeInfo(dir: string): void {
  rmSync(join(dir, 'serve.json'), { force: true })
}

/** The running `--serve` process's endpoints, if it is still alive. */
export function readServeInfo(dir: string): ServeInfo | undefined {
  const file = join(dir, 'serve.json')
  if (!existsSync(file)) return undefined
  const info = JSON.parse(readFileSync(file, 'utf8')) as ServeInfo
  try {
    process.kill(info.pid, 0)
    return info
  } catch {
    return undefined
  }
}
