/**
 * Shared fixtures live outside the repo, in `shared/fixtures/<kind>` next to (or above) the
 * clone: `/work/shared` beside `/work/main` here, and beside the fresh clone in CI. A clone made
 * from a local checkout (`git clone /path/to/main ci`) also finds them beside the checkout it was
 * cloned from. Tests must copy fixtures before writing (fs.cpSync to a temp dir).
 */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** The checkout this clone was made from, when that is a local folder (`git clone . ci`). */
function localOrigin(): string | undefined {
  try {
    const url = execFileSync('git', ['-C', repoRoot, 'config', '--get', 'remote.origin.url'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    const path = url.startsWith('file://') ? fileURLToPath(url) : url
    return path.startsWith('/') && existsSync(path) ? resolve(path) : undefined
  } catch {
    return undefined
  }
}

/**
 * Absolute path of `shared/fixtures/<kind>` (e.g. 'iceberg', 'msk-events'), searched upward from
 * the repo root, then upward from the local checkout it was cloned from.
 */
export function fixturesDir(kind: string): string {
  const tried: string[] = []
  for (const start of [repoRoot, localOrigin()]) {
    for (let dir = start; dir !== undefined; dir = dirname(dir) === dir ? undefined : dirname(dir)) {
      const candidate = join(dir, 'shared', 'fixtures', kind)
      tried.push(candidate)
      if (existsSync(candidate)) return candidate
    }
  }
  throw new Error(`fixtures '${kind}' not found; looked in:\n  ${tried.join('\n  ')}\n(put the shared/ folder beside the repository clone)`)
}
