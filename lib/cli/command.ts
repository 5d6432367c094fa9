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
