/** The shape of a `floe` subcommand (registered in lib/cli/commands.ts). */
export interface Command {
  /** What the user types: `floe <name>`. */
  name: string
  /** One line for `floe --help`. */
  summary: string
  /** Full usage text for `floe <name> --help` (options, environment it reads). */
  usage: string
  /** Runs with the arguments after the name; resolves to the process exit code. */
  run(argv: string[]): Promise<number>
}

/** The options `floe commit` and `floe status` share: `--table ns.name` (repeatable), `--json`, `--help`. */
export const TABLE_OPTIONS = {
  table: { type: 'string', multiple: true },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

/** Indented JSON for `--json` output, 64-bit ids and offsets as decimal strings. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? v.toString() : v), 2)}\n`
}
