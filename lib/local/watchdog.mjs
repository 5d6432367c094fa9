#!/usr/bin/env node
/**
 * Runs one command and guarantees it does not outlive the process that started us.
 *
 * Usage: node watchdog.mjs <command> [args...]
 *
 * The parent keeps our stdin open as a pipe. When the parent exits for any reason — normal
 * exit, Ctrl-C, an uncaught error, even SIGKILL — the kernel closes the pipe, stdin ends, and we
 * kill the child (SIGTERM, then SIGKILL after 3 s). As a second line of defence we also poll the
 * parent pid. The child's stdout/stderr are passed through; our exit code is the child's.
 * If WATCHDOG_RMDIR is set, that directory (a server's scratch data) is removed once the
 * child has exited.
 *
 * Plain JavaScript (no tsx) so it starts fast and depends on nothing.
 */
import { spawn } from 'node:child_process'
import { rmSync } from 'node:fs'

const [command, ...args] = process.argv.slice(2)
if (!command) {
  process.stderr.write('usage: watchdog.mjs <command> [args...]\n')
  process.exit(2)
}

const parentPid = process.ppid
const scratch = process.env.WATCHDOG_RMDIR
const childEnv = { ...process.env }
delete childEnv.WATCHDOG_RMDIR
const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'], env: childEnv })
let stopping = false

function stop(signal = 'SIGTERM') {
  if (stopping) return
  stopping = true
  if (child.exitCode === null && child.signalCode === null) {
    child.kill(signal)
    setTimeout(() => child.kill('SIGKILL'), 3_000).unref()
  }
}

child.on('error', (err) => {
  process.stderr.write(`watchdog: cannot start ${command}: ${err.message}\n`)
  process.exit(127)
})
child.on('exit', (code, signal) => {
  if (scratch) rmSync(scratch, { recursive: true, force: true })
  process.exit(code ?? (signal ? 128 : 1))
})

process.stdin.on('end', () => stop())
process.stdin.on('close', () => stop())
process.stdin.on('error', () => stop())
process.stdin.resume()

for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => stop())

setInterval(() => {
  try {
    process.kill(parentPid, 0)
    if (process.ppid !== parentPid) stop()
  } catch {
    stop()
  }
}, 500).unref()
