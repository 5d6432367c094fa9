/**
 * Which pipeline a command talks to, so `floe status`, `commit`, `inspect` and `dead-letters`
 * work as printed, with no environment to set up:
 *
 *   --stack NAME   a deployed stack: FLOE_WAREHOUSE, FLOE_DLQ, FLOE_CONTROL_TABLE and
 *                  FLOE_CATALOG_TABLE from its CloudFormation outputs (AWS credentials as usual);
 *   the environment, when it sets FLOE_WAREHOUSE or an AWS_ENDPOINT_URL*;
 *   --dir DIR      otherwise the local state `floe start` left (default ./floe-local): the
 *                  endpoints of a running `floe start --serve`, or DynamoDB Local (and s3rver)
 *                  started on that state for the command's duration.
 *
 * Settings given in the environment always win over the stack's or the local state's.
 */
import { resolve } from 'node:path'
import { createClients, destroyClients, endpointsFromEnv, type AwsClients } from '../clients.js'
import { loadConfig, type FloeConfig, type SettingName } from '../config.js'
import { ConfigError } from '../errors.js'
import { LOCAL_CREDENTIALS, LOCAL_REGION, startLocalEndpoints, readLocalState, readServeInfo } from '../local/index.js'

/** The options every command that reads a pipeline accepts. */
export const TARGET_OPTIONS = {
  dir: { type: 'string' },
  stack: { type: 'string' },
} as const

export const TARGET_USAGE = `  --stack NAME      a deployed Floe stack: settings from its CloudFormation outputs
  --dir DIR         local state of \`floe start\` (default ./floe-local), used when neither --stack
                    nor FLOE_WAREHOUSE / AWS_ENDPOINT_URL* is given`

export interface Target {
  config: FloeConfig
  clients: AwsClients
  /** Where the settings came from, for messages. */
  source: string
  close(): Promise<void>
}

/** Stack output → setting (infra/floe-stack.ts). */
const OUTPUTS: Record<string, SettingName> = {
  WarehouseUrl: 'FLOE_WAREHOUSE',
  DeadLetterUrl: 'FLOE_DLQ',
  ControlTableName: 'FLOE_CONTROL_TABLE',
  CatalogTableName: 'FLOE_CATALOG_TABLE',
}

/** The FLOE_* settings a deployed stack's outputs give. */
export async function stackSettings(stack: string, outputs: (stack: string) => Promise<Record<string, string>>): Promise<Partial<Record<SettingName, string>>> {
  const values = await outputs(stack)
  const out: Partial<Record<SettingName, string>> = {}
  for (const [output, setting] of Object.entries(OUTPUTS)) if (values[output] !== undefined) out[setting] = values[output]
  if (!out.FLOE_WAREHOUSE) throw new ConfigError('--stack', `stack ${stack} has no WarehouseUrl output (outputs: ${Object.keys(values).join(', ') || 'none'}); is it a Floe stack?`)
  return out
}

/** DescribeStacks through the AWS SDK's CloudFormation client (loaded only for --stack). */
export async function cloudFormationOutputs(stack: string): Promise<Record<string, string>> {
  const { CloudFormationClient, DescribeStacksCommand } = await import('@aws-sdk/client-cloudformation')
  const cfn = new CloudFormationClient({})
  try {
    const { Stacks } = await cfn.send(new DescribeStacksCommand({ StackName: stack }))
    return Object.fromEntries((Stacks?.[0]?.Outputs ?? []).map((o) => [o.OutputKey ?? '', o.OutputValue ?? '']))
  } finally {
    cfn.destroy()
  }
}

const envFloe = (env: NodeJS.ProcessEnv) => new Set(Object.keys(env).filter((k) => k.startsWith('FLOE_') && env[k]))

/** Keep only the settings the environment does not set itself. */
function unlessSet(env: NodeJS.ProcessEnv, settings: Record<string, string>): Partial<Record<SettingName, string>> {
  const set = envFloe(env)
  return Object.fromEntries(Object.entries(settings).filter(([k]) => !set.has(k))) as Partial<Record<SettingName, string>>
}

export async function openTarget(
  values: { dir?: string; stack?: string },
  opts: { env?: NodeJS.ProcessEnv; log?: (line: string) => void; outputs?: (stack: string) => Promise<Record<string, string>> } = {},
): Promise<Target> {
  const env = opts.env ?? process.env
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`))
  if (values.stack) {
    const settings = await stackSettings(values.stack, opts.outputs ?? cloudFormationOutputs)
    const config = loadConfig(env, unlessSet(env, settings as Record<string, string>))
    return remote(config, `stack ${values.stack}`)
  }
  const given = endpointsFromEnv(env)
  if (values.dir === undefined && (env.FLOE_WAREHOUSE || given.s3 || given.dynamodb)) {
    return remote(loadConfig(env), 'the environment')
  }
  const dir = resolve(values.dir ?? 'floe-local')
  const state = readLocalState(dir)
  if (!state) {
    throw new ConfigError(
      values.dir === undefined ? 'FLOE_WAREHOUSE' : '--dir',
      `no local state in ${dir} (run \`npm start\` first), and FLOE_WAREHOUSE is not set; for a deployed pipeline pass --stack NAME or set FLOE_WAREHOUSE and AWS credentials`,
    )
  }
  // Validate before starting anything.
  const config = loadConfig(env, unlessSet(env, { ...state.settings, FLOE_WAREHOUSE: state.warehouse }))
  const serving = readServeInfo(dir)
  let stop = async () => undefined as void
  let endpoints: { s3: string; dynamodb: string }
  if (serving) endpoints = serving
  else if (given.s3 && given.dynamodb) endpoints = { s3: given.s3, dynamodb: given.dynamodb } // a run against endpoints of the environment
  else {
    log(`starting DynamoDB Local${state.s3 ? ' and s3rver' : ''} on ${dir}…`)
    const started = await startLocalEndpoints({ dataDir: dir, env: {} })
    endpoints = started
    stop = started.stop
  }
  const ownCredentials = !serving && given.s3 && given.dynamodb && env.AWS_ACCESS_KEY_ID
  const clients = createClients({ endpoints, region: env.AWS_REGION ?? LOCAL_REGION, ...(ownCredentials ? {} : { credentials: LOCAL_CREDENTIALS }), maxAttempts: config.awsMaxAttempts })
  return {
    config: { ...config, region: config.region ?? LOCAL_REGION },
    clients,
    source: `local state in ${dir}${serving ? ` (served by pid ${serving.pid})` : ''}`,
    close: async () => {
      destroyClients(clients)
      await stop()
    },
  }
}

function remote(config: FloeConfig, source: string): Target {
  const clients = createClients({ region: config.region, maxAttempts: config.awsMaxAttempts })
  return { config, clients, source, close: async () => destroyClients(clients) }
}
