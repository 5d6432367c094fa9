/** The two ways in: `floe replay …` (lib/cli/replay.ts) and the replay Lambda (functions/replay.ts). */
import type { Context } from 'aws-lambda'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createReplayHandler } from '../../functions/replay.js'
import { replay } from '../../lib/cli/replay.js'
import { onFailureRecord } from '../../lib/local/esm.js'
import { buildEvent } from '../../lib/local/kafka-log.js'
import { commitAll, produce, replaySetup, tableRows, type ReplaySetup } from './support.js'

describe('replay entry points', () => {
  let s: ReplaySetup
  beforeAll(async () => {
    s = await replaySetup()
  }, 60_000)
  afterAll(async () => s?.stop())

  it('floe replay failed-batches --json replays a parked batch; the Lambda action then finds it replayed', async () => {
    const { log, ids } = produce('cli', 1, 8)
    await s.direct.io.write(`${s.config.failedBatches}/aws/lambda/x/${crypto.randomUUID()}`, JSON.stringify(onFailureRecord(buildEvent([...log.records('cli-0')]), 11)))
    let text = ''
    const code = await replay(['failed-batches', '--json'], async () => s.direct, (t) => (text += t), 'usage')
    expect(code).toBe(0)
    expect(JSON.parse(text)).toMatchObject({ kind: 'failed-batches', replayed: 1, records: 8, rows: 8, failures: 0 })
    await commitAll(s)
    const rows = (await tableRows(s, 'cli'))!.rows
    expect(ids.filter((id) => rows.get(id) !== 1)).toEqual([])

    const handler = createReplayHandler(s.direct)
    const run = await handler({ action: 'replay', replay: 'failed-batches' }, { awsRequestId: 'r1' } as Context)
    expect(run).toMatchObject({ replayed: 0, alreadyReplayed: 1 })
  }, 60_000)

  it('rejects options that do not apply, by name, and asks what to replay', async () => {
    let text = ''
    const deps = async () => s.direct
    await expect(replay(['failed-batches', '--topic', 't'], deps, (t) => (text += t), 'usage')).rejects.toThrow(/--topic/)
    await expect(replay(['dead-letters', '--partition', '1'], deps, (t) => (text += t), 'usage')).rejects.toThrow(/--partition.*needs --topic/)
    await expect(replay(['dead-letters', '--reason-match', '('], deps, (t) => (text += t), 'usage')).rejects.toThrow(/--reason-match.*not a regular expression/)
    await expect(replay(['failed-batches', '--since', 'yesterday'], deps, (t) => (text += t), 'usage')).rejects.toThrow(/--since.*"yesterday"/)
    expect(await replay([], deps, (t) => (text += t), 'usage')).toBe(2)
    const handler = createReplayHandler(s.direct)
    await expect(handler({ replay: 'everything' }, { awsRequestId: 'r2' } as Context)).rejects.toThrow(/replay.*"everything"/)
    await expect(handler({ replay: 'dead-letters', reasonMatch: '[' }, { awsRequestId: 'r3' } as Context)).rejects.toThrow(/reasonMatch.*not a regular expression/)
    expect(text).toContain('say what to replay')
  })
})
