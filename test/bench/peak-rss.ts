/**
 * This process's peak RSS in bytes. On Linux it is VmHWM from /proc/self/status: the high-water
 * mark of the running image alone. `process.resourceUsage().maxRSS` is not that in a child
 * process: Linux carries the forked parent's RSS into the child's ru_maxrss across execve, so a
 * child of the bench (≈ 880 MB after its throughput section) reported 879 MB whatever it used.
 * Elsewhere (no /proc), maxRSS.
 */
import { readFileSync } from 'node:fs'

const VM_HWM = /^VmHWM:\s+(\d+) kB$/m

export function peakRssBytes(): number {
  try {
    const kb = VM_HWM.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]
    if (kb !== undefined) return Number(kb) * 1024
  } catch {
    // No procfs (macOS): the kernel's maxRSS, which is this process's own there.
  }
  return process.resourceUsage().maxRSS * 1024
}

/**
 * This process's resident memory by the kind of mapping it is in, in MB, from /proc/self/smaps
 * (undefined without procfs): `files` (node's binary and shared libraries), `malloc` (glibc's
 * `[heap]`), anonymous regions by size — on Node 20 x64, V8's heap pages are 256 KB regions
 * (`anon256K`); parquet-wasm's linear memory is one region of its size among those of 1 MB and
 * more (`anonLarge`, whose five largest are listed as [size, resident] MB) — and the rest
 * (`anonSmall`: stacks, small regions).
 */
export function residentByMapping(): Record<string, number | number[][]> | undefined {
  let text: string
  try {
    text = readFileSync('/proc/self/smaps', 'utf8')
  } catch {
    return undefined
  }
  const kinds: Record<string, number> = { files: 0, malloc: 0, anon256K: 0, anonLarge: 0, anonSmall: 0 }
  const large: number[][] = []
  let kind = 'anonSmall'
  let sizeKb = 0
  for (const line of text.split('\n')) {
    const head = MAPPING.exec(line)
    if (head !== null) {
      sizeKb = (parseInt(head[2]!, 16) - parseInt(head[1]!, 16)) / 1024
      const name = head[3]!
      kind = name.startsWith('/') ? 'files' : name === '[heap]' ? 'malloc' : name !== '' ? 'anonSmall' : sizeKb >= 1024 ? 'anonLarge' : sizeKb >= 256 ? 'anon256K' : 'anonSmall'
      continue
    }
    const rss = RSS_LINE.exec(line)
    if (rss === null) continue
    kinds[kind]! += Number(rss[1])
    if (kind === 'anonLarge') large.push([sizeKb, Number(rss[1])])
  }
  const mb = (kb: number) => Math.round(kb / 1024)
  const top = large.sort((a, b) => b[1]! - a[1]!).slice(0, 5).map(([size, rss]) => [mb(size!), mb(rss!)])
  return { ...Object.fromEntries(Object.entries(kinds).map(([k, v]) => [k, mb(v)])), largest: top }
}

const MAPPING = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/
const RSS_LINE = /^Rss:\s+(\d+) kB$/
