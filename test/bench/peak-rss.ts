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
