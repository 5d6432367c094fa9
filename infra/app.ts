#!/usr/bin/env node
/** The CDK app: one Floe pipeline stack, configured from cdk.json context (docs/deploy.md). */
import { App, Validations } from 'aws-cdk-lib'
import { AwsSolutionsChecks } from 'cdk-nag'
import { FloeStack } from './floe-stack.js'

const app = new App()
const stackName = (app.node.tryGetContext('stackName') as string | undefined) ?? 'Floe'
// Environment-agnostic unless the CLI knows the account: `cdk synth` needs no credentials.
const env = process.env.CDK_DEFAULT_ACCOUNT ? { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION } : undefined
export const stack = new FloeStack(app, stackName, { env, description: 'Floe: Kafka topics on Amazon MSK into Apache Iceberg tables on S3' })
// cdk-nag's AwsSolutions pack runs on every synth; an unacknowledged finding fails it (`-c nag=false` skips).
if (String(app.node.tryGetContext('nag') ?? 'true') !== 'false') Validations.of(app).addPlugins(new AwsSolutionsChecks(app))
