/**
 * vitest globalSetup: starts DynamoDB Local and s3rver ONCE per run (or uses LocalStack when
 * AWS_ENDPOINT_URL* is set) and hands the endpoints to every test worker through the environment
 * (workers are forked after this runs and inherit process.env). Teardown stops the servers; if
 * the run is killed instead, the watchdog in lib/local/watchdog.mjs stops them.
 */
import { LOCAL_CREDENTIALS, LOCAL_REGION, startLocalEndpoints, type LocalEndpoints } from '../../lib/local/endpoints.js'

let endpoints: LocalEndpoints | undefined

export async function setup(): Promise<() => Promise<void>> {
  // Node 20 is supported here; the SDK's "node 22 soon" notice would only clutter test output.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'
  endpoints = await startLocalEndpoints()
  process.env.AWS_ENDPOINT_URL_S3 = endpoints.s3
  process.env.AWS_ENDPOINT_URL_DYNAMODB = endpoints.dynamodb
  process.env.AWS_REGION ??= LOCAL_REGION
  if (endpoints.started.includes('s3')) {
    // s3rver only accepts its own key pair; DynamoDB Local accepts anything. Never real credentials.
    process.env.AWS_ACCESS_KEY_ID = LOCAL_CREDENTIALS.accessKeyId
    process.env.AWS_SECRET_ACCESS_KEY = LOCAL_CREDENTIALS.secretAccessKey
    delete process.env.AWS_SESSION_TOKEN
    delete process.env.AWS_PROFILE
  } else {
    // LocalStack accepts any credentials; keep the caller's if set.
    process.env.AWS_ACCESS_KEY_ID ??= 'test'
    process.env.AWS_SECRET_ACCESS_KEY ??= 'test'
  }
  return teardown
}

export async function teardown(): Promise<void> {
  const running = endpoints
  endpoints = undefined
  await running?.stop()
}
