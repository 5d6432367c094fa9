/**
 * Where a pass allocates: V8's sampling heap profiler (node:inspector, objects later collected by
 * minor and major GCs included) over `f`, bytes by allocating function. A builtin (`keys`,
 * `next`, `join`…) is named with its nearest caller, which is the code to change.
 */
import { Session } from 'node:inspector/promises'

interface SampleNode {
  callFrame: { functionName: string; url: string; lineNumber: number }
  selfSize: number
  children: SampleNode[]
}

const frameName = (n: SampleNode): string => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber + 1}`
const isBuiltin = (n: SampleNode): boolean => n.callFrame.url === '' || n.callFrame.url.startsWith('node:')

export async function allocations<T>(f: () => Promise<T>, samplingInterval = 4096): Promise<[T, Map<string, number>]> {
  const session = new Session()
  session.connect()
  try {
    await session.post('HeapProfiler.startSampling', { samplingInterval, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as never)
    const result = await f()
    const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: { head: SampleNode } }
    const bytes = new Map<string, number>()
    const walk = (n: SampleNode, caller: string): void => {
      const name = frameName(n)
      const key = isBuiltin(n) && caller !== '' ? `${name} <- ${caller}` : name
      bytes.set(key, (bytes.get(key) ?? 0) + n.selfSize)
      for (const c of n.children) walk(c, isBuiltin(n) ? caller : name)
    }
    walk(profile.head, '')
    return [result, bytes]
  } finally {
    session.disconnect()
  }
}
