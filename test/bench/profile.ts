/**
 * CPU profile of the writer path: the V8 sampling profiler (what `node --cpu-prof` uses, here
 * through node:inspector so it covers exactly the measured pass) over the real writer path, then
 * self time by module and by function. The raw .cpuprofile is kept for Chrome DevTools.
 */
import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  hitCount?: number
}
interface CpuProfile {
  nodes: ProfileNode[]
  startTime: number
  endTime: number
  samples: number[]
}

export interface ProfileSummary {
  totalMs: number
  byModule: { module: string; selfMs: number; share: number }[]
  byFunction: { fn: string; module: string; selfMs: number; share: number }[]
  file?: string
}

export async function profile<T>(f: () => Promise<T>, file?: string): Promise<[T, ProfileSummary]> {
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: 500 })
  await session.post('Profiler.start')
  let out: T
  let prof: CpuProfile
  try {
    out = await f()
  } finally {
    prof = ((await session.post('Profiler.stop')) as { profile: CpuProfile }).profile
    session.disconnect()
  }
  if (file) writeFileSync(file, JSON.stringify(prof))
  return [out, { ...summarize(prof), file }]
}

/** `node_modules/<pkg>`, `lib/<dir>`, `node:<builtin>`, or the V8 pseudo-frames ((garbage collector), (program), (idle)). */
export function moduleOf(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)'
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (nm) return nm[1]!
  const lib = /\/(lib|functions|test)\/([^/]+)\/(?:([^/]+)\/)?/.exec(url)
  if (lib) return lib[3] && !lib[3].includes('.') ? `${lib[1]}/${lib[2]}/${lib[3]}` : `${lib[1]}/${lib[2]}`
  if (url.startsWith('node:')) return 'node'
  return url.replace(/^file:\/\//, '').split('/').slice(-2).join('/')
}

export function summarize(prof: CpuProfile): Omit<ProfileSummary, 'file'> {
  const totalMs = (prof.endTime - prof.startTime) / 1000
  const samples = prof.samples.length || 1
  const msPerSample = totalMs / samples
  const hits = new Map<number, number>()
  for (const id of prof.samples) hits.set(id, (hits.get(id) ?? 0) + 1)
  const byModule = new Map<string, number>()
  const byFunction = new Map<string, { module: string; ms: number }>()
  for (const node of prof.nodes) {
    const n = hits.get(node.id) ?? node.hitCount ?? 0
    if (!n) continue
    const { functionName, url, lineNumber } = node.callFrame
    const mod = moduleOf(url, functionName)
    const ms = n * msPerSample
    byModule.set(mod, (byModule.get(mod) ?? 0) + ms)
    const key = `${functionName || '(anonymous)'} ${url ? `${url.split('/').slice(-1)[0]}:${lineNumber + 1}` : ''}`.trim()
    const e = byFunction.get(key) ?? { module: mod, ms: 0 }
    e.ms += ms
    byFunction.set(key, e)
  }
  const share = (ms: number) => Math.round((ms / totalMs) * 1000) / 10
  return {
    totalMs: Math.round(totalMs),
    byModule: [...byModule].sort((a, b) => b[1] - a[1]).slice(0, 20).map(([module, ms]) => ({ module, selfMs: Math.round(ms), share: share(ms) })),
    byFunction: [...byFunction].sort((a, b) => b[1].ms - a[1].ms).slice(0, 25).map(([fn, e]) => ({ fn, module: e.module, selfMs: Math.round(e.ms), share: share(e.ms) })),
  }
}
