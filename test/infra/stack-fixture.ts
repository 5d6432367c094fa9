/**
 * Stacks for the infra tests. Asset bundling is skipped (`aws:cdk:bundling-stacks` = []) so a
 * stack synthesizes in a second; test/infra/bundle.test.ts is the one test that bundles for real.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { App } from 'aws-cdk-lib'
import { Template } from 'aws-cdk-lib/assertions'
import { FloeStack } from '../../infra/floe-stack.js'
import type { FloeContextInput } from '../../infra/config.js'
import { PROJECT_ROOT } from '../../infra/constructs/floe-function.js'

export const MSK_ARN = 'arn:aws:kafka:eu-west-1:111122223333:cluster/events/6f1c2a3b-1111-2222-3333-444455556666-2'

/** The smallest valid configuration: an MSK cluster and topics. */
export const MINIMAL: Partial<FloeContextInput> = { mskClusterArn: MSK_ARN, topics: ['orders', 'clicks'] }

/** The example context of cdk.json, which `npm run synth` uses. */
export function cdkJsonContext(): Record<string, unknown> {
  return (JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context
}

export interface Synthesized {
  stack: FloeStack
  template: Template
}

/** A FloeStack from props (`config`) and/or app context, without bundling. */
export function synth(config: Partial<FloeContextInput> = MINIMAL, context: Record<string, unknown> = {}): Synthesized {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } })
  const stack = new FloeStack(app, 'FloeTest', { config, env: { account: '111122223333', region: 'eu-west-1' } })
  return { stack, template: Template.fromStack(stack) }
}

type Json = unknown

/**
 * Replace CloudFormation intrinsics by plausible literal values (Ref → a lowercase name derived
 * from the logical id, GetAtt → an ARN, Join → the joined parts) so environment values can be
 * checked with the functions' own config parser.
 */
export function resolveIntrinsics(value: Json): Json {
  if (Array.isArray(value)) return value.map(resolveIntrinsics)
  if (value && typeof value === 'object') {
    const o = value as Record<string, Json>
    if ('Ref' in o) return `ref-${String(o.Ref).toLowerCase()}`
    if ('Fn::GetAtt' in o) return `arn:aws:test:::${String((o['Fn::GetAtt'] as string[])[0]).toLowerCase()}`
    if ('Fn::Join' in o) {
      const [sep, parts] = o['Fn::Join'] as [string, Json[]]
      return parts.map((p) => String(resolveIntrinsics(p))).join(sep)
    }
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, resolveIntrinsics(v)]))
  }
  return value
}
