#!/usr/bin/env node
/** The CDK app: one Floe pipeline stack, configured from cdk.json context (docs/deploy.md). */
import { App } from 'aws-cdk-lib'
import { FloeStack } from './floe-stack.js'

const app = new App()
const stackName = (app.node.tryGetContext('stackName') as string | undefined) ?? 'Floe'
// Environment-agnostic unless the CLI knows the account: `cdk synth` needs no credentials.
const env = process.env.CDK_DEFAULT_ACCOUNT ? { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION } : undefined
new FloeStack(app, stackName, { env, description: 'Floe: Kafka topics on Amazon MSK into Apache Iceberg tables on S3' })
