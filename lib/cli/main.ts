/** `floe <command> [args]`: dispatch to the registered subcommands, print help and errors. */
import { readFileSync } from 'node:fs'
import { ConfigError, FloeError } from '../errors.js'
import { commands } from './commands.js'
import type { Command } from './command.js'

export interface Output {
  out: (text: string) => void
  err: (text: string) => void
}

const stdio: Output = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
}

export function helpText(list: Command[] = commands): string {
  const width = Math.max(0, ...list.map((c) => c.name.length))
  return [
    'Usage: floe <command> [options]',
    '',
    'Floe turns Kafka topics on Amazon MSK into Apache Iceberg tables on S3.',
    'Settings come from FLOE_* environment variables (see README "Settings");',
    'AWS endpoints from AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL_DYNAMODB.',
    '',
    'Commands:',
    ...list.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `floe <command> --help` for a command\'s options.',
    '',
    'Exit codes: 0 done; 1 failed while running (a table failed, an endpoint did not answer);',
    '2 bad usage or settings (unknown command or option, invalid FLOE_* variable, routes or input',
    'file) — reported before anything starts or is deleted.',
    '',
  ].join('\n')
}

/** Returns the exit code: 0 ok, 1 failure while running, 2 usage or configuration error (see helpText). */
export async function main(argv: string[], output: Output = stdio, list: Command[] = commands): Promise<number> {
  const [name, ...rest] = argv
  if (name === undefined) {
    output.err(helpText(list))
    return 2
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? list.find((c) => c.name === rest[0]) : undefined
    output.out(topic ? commandHelp(topic) : helpText(list))
    return 0
  }
  if (name === '--version' || name === '-v') {
    output.out(`floe ${version()}\n`)
    return 0
  }
  const command = list.find((c) => c.name === name)
  if (!command) {
    output.err(`floe: unknown command '${name}'\n\n${helpText(list)}`)
    return 2
  }
  const beforeDashDash = rest.indexOf('--') === -1 ? rest : rest.slice(0, rest.indexOf('--'))
  if (beforeDashDash.includes('--help') || beforeDashDash.includes('-h')) {
    output.out(commandHelp(command))
    return 0
  }
  try {
    return await command.run(rest)
  } catch (err) {
    output.err(`floe ${command.name}: ${describe(err)}\n`)
    // Argument errors from node:util parseArgs and bad settings are usage errors.
    return err instanceof ConfigError || (err as { code?: string })?.code?.startsWith('ERR_PARSE_ARGS') ? 2 : 1
  }
}

function commandHelp(c: Command): string {
  return `${c.summary}\n\n${c.usage.trimEnd()}\n`
}

function describe(err: unknown): string {
  if (err instanceof Error && causes(err).some((e) => e.name === 'CredentialsProviderError' || /CredentialsProviderError/.test(e.message)))
    return `no AWS credentials (${err.message}). For the local pipeline run the command without FLOE_WAREHOUSE / AWS_ENDPOINT_URL (it finds ./floe-local, or pass --dir); for a deployed stack configure AWS credentials and pass --stack NAME`
  if (err instanceof ConfigError) return `invalid setting ${err.message}`
  if (err instanceof FloeError) return err.message
  if (err instanceof Error) {
    if ((err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) return err.message
    const name = err.name && err.name !== 'Error' ? `${err.name}: ` : ''
    return process.env.DEBUG ? (err.stack ?? `${name}${err.message}`) : `${name}${err.message}`
  }
  return String(err)
}

/** The error and its causes, outermost first. */
function causes(err: Error): Error[] {
  const out: Error[] = []
  for (let e: unknown = err; e instanceof Error && out.length < 10; e = e.cause) out.push(e)
  return out
}

function version(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version
  } catch {
    return 'unknown'
  }
}
