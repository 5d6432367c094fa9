/**
 * Shared fixtures live outside the repo, in `shared/fixtures/<kind>` next to (or above) the
 * clone: `/work/shared` beside `/work/main` here, and beside the fresh clone in CI. Tests must
 * copy fixtures before writing (fs.cpSync to a temp dir).
 */
import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** Absolute path of `shared/fixtures/<kind>` (e.g. 'iceberg', 'msk-events'), searched upward from the repo root. */
export function fixturesDir(kind: string): string {
  const tried: string[] = []
  for (let dir = repoRoot; ; dir = dirname(dir)) {
    const candidate = join(dir, 'shared', 'fixtures', kind)
    tried.push(candidate)
    if (existsSync(candidate)) return candidate
    if (dirname(dir) === dir) break
  }
  throw new Error(`fixtures '${kind}' not found; looked in:\n  ${tried.join('\n  ')}\n(put the shared/ folder beside the repository clone)`)
}
