import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../lib/errors.js'
import { helpText, main, type Output } from '../../lib/cli/main.js'
import { commands } from '../../lib/cli/commands.js'
import type { Command } from '../../lib/cli/command.js'

function capture(): Output & { stdout: string; stderr: string } {
  const o = {
    stdout: '',
    stderr: '',
    out: (t: string) => void (o.stdout += t),
    err: (t: string) => void (o.stderr += t),
  }
  return o
}

const calls: string[][] = []
const fake: Command[] = [
  { name: 'echo', summary: 'Echo its arguments', usage: 'Usage: floe echo [args]', run: async (argv) => (calls.push(argv), 0) },
  {
    name: 'broken',
    summary: 'Fails with a config error',
    usage: 'Usage: floe broken',
    run: async () => {
      throw new ConfigError('FLOE_TARGET_FILE_MB', 'expected a number; got "big"')
    },
  },
]

describe('floe main', () => {
  it('lists every registered command with its summary in --help', async () => {
    const o = capture()
    expect(await main(['--help'], o)).toBe(0)
    for (const c of commands) expect(o.stdout).toMatch(new RegExp(`^  ${c.name} +${c.summary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'))
    expect(o.stdout).toContain('init')
  })

  it('runs the named command with the remaining arguments', async () => {
    const o = capture()
    expect(await main(['echo', 'a', '--b'], o, fake)).toBe(0)
    expect(calls.at(-1)).toEqual(['a', '--b'])
  })

  it('rejects an unknown command with exit code 2 and the help text', async () => {
    const o = capture()
    expect(await main(['ecoh'], o, fake)).toBe(2)
    expect(o.stderr).toContain("unknown command 'ecoh'")
    expect(o.stderr).toContain(helpText(fake))
  })

  it('prints a command’s usage for `<command> --help` without running it', async () => {
    const o = capture()
    const before = calls.length
    expect(await main(['echo', '--help'], o, fake)).toBe(0)
    expect(o.stdout).toContain('Usage: floe echo [args]')
    expect(calls.length).toBe(before)
  })

  it('turns a thrown ConfigError into exit code 2 (bad settings) and a message naming the variable', async () => {
    const o = capture()
    expect(await main(['broken'], o, fake)).toBe(2)
    expect(o.stderr).toContain('FLOE_TARGET_FILE_MB')
  })
})

describe('bin/floe.mjs', () => {
  it('starts through tsx and prints the help', () => {
    const r = spawnSync(process.execPath, ['bin/floe.mjs', '--help'], { encoding: 'utf8' })
    expect(r.status).toBe(0)
    expect(r.stdout).toContain('Commands:')
  })

  it('exits 2 on an unknown command', () => {
    const r = spawnSync(process.execPath, ['bin/floe.mjs', 'no-such-command'], { encoding: 'utf8' })
    expect(r.status).toBe(2)
    expect(r.stderr).toContain("unknown command 'no-such-command'")
  })
})
