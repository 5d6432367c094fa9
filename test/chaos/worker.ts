/**
 * A child process playing one Lambda container: it loads the REAL writer or committer handler
 * (its module scope runs once, like a cold start) and then runs invocations sent over IPC, one at
 * a time, like a warm container. The harness SIGKILLs it to simulate a crash at a chosen moment;
 * the next invocation then gets a fresh container.
 *
 * Messages: parent → { id, event } ; child → { id, ok, result? , error? , retryable? }.
 */
const kind = process.argv[2]
if (kind !== 'writer' && kind !== 'committer' && kind !== 'maintenance' && kind !== 'replay') {
  console.error(`usage: worker.ts writer|committer|maintenance|replay (got ${kind})`)
  process.exit(2)
}

const mod =
  kind === 'writer'
    ? await import('../../functions/writer.js')
    : kind === 'committer'
      ? await import('../../functions/committer.js')
      : kind === 'replay'
        ? await import('../../functions/replay.js')
        : await import('../../functions/maintenance.js')
const handler = mod.handler as (event: unknown, context: unknown) => Promise<unknown>

let seq = 0
function context() {
  const started = Date.now()
  return {
    functionName: `floe-${kind}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:floe-${kind}`,
    memoryLimitInMB: '1024',
    awsRequestId: `${process.pid}-${++seq}`,
    logGroupName: `/aws/lambda/floe-${kind}`,
    logStreamName: 'chaos',
    callbackWaitsForEmptyEventLoop: false,
    getRemainingTimeInMillis: () => Math.max(0, 60_000 - (Date.now() - started)),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  }
}

const safe = (value: unknown) => JSON.parse(JSON.stringify(value ?? null, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)))

process.on('message', async (msg: { id: number; event: unknown }) => {
  try {
    const result = await handler(msg.event, context())
    process.send!({ id: msg.id, ok: true, result: safe(result) })
  } catch (err) {
    const e = err as Error & { retryable?: boolean }
    process.send!({ id: msg.id, ok: false, error: `${e.name}: ${e.message}`, retryable: e.retryable === true })
  }
})
process.send!({ ready: true })
