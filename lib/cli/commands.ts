/**
 * Every `floe` subcommand. `floe --help` lists them in this order.
 *
 * To add a subcommand:
 *   1. write lib/cli/<name>.ts exporting
 *        export const <name>Command: Command = { name: '<name>', summary, usage, run: async (argv) => 0 }
 *      (`import type { Command } from './command.js'`; parse argv with node:util parseArgs;
 *      load settings with loadConfig() from lib/config.ts; return the exit code, throw on failure:
 *      main.ts prints errors and a ConfigError's message names the bad FLOE_* variable);
 *   2. import it below and add ONE line to the list.
 */
import type { Command } from './command.js'
import { initCommand } from './init.js'
import { inspectCommand } from './inspect.js'
import { statusCommand } from './status.js'
import { commitCommand } from './commit.js'
import { startCommand } from './start.js'
import { maintainCommand } from './maintain.js'
import { deadLettersCommand } from './dead-letters.js'
import { replayCommand } from './replay.js'

export const commands: Command[] = [
  initCommand,
  startCommand,
  statusCommand,
  commitCommand,
  inspectCommand,
  maintainCommand,
  deadLettersCommand,
  replayCommand,
]

export type { Command } from './command.js'
