/**
 * cdk-nag acknowledgements (cdk-nag v3: CDK's `Validations.of().acknowledge()`). Each finding is
 * acknowledged individually with its reason; nothing is acknowledged by rule id alone where the
 * rule reports per-resource findings.
 */
import { Stack, Validations } from 'aws-cdk-lib'
import type { IConstruct } from 'constructs'
import { flattenCfnReference } from 'cdk-nag/lib/utils/flatten-cfn-reference.js'

/**
 * Acknowledge AwsSolutions-IAM5 (wildcard) for these resource ARNs in policies at or below
 * `scope`. The finding id is the resolved ARN flattened the way cdk-nag flattens it.
 */
export function acknowledgeWildcardResources(scope: IConstruct, resources: string[], reason: string): void {
  const stack = Stack.of(scope)
  for (const resource of resources) {
    const flat = flattenCfnReference(stack.resolve(resource))
    Validations.of(scope).acknowledge({ id: `AwsSolutions-IAM5[Resource::${flat}]`, reason })
  }
}

/** The construct that holds a grantee's policies (a function's role), for acknowledgements. */
export function policyScope(grantee: { grantPrincipal: unknown }): IConstruct {
  const principal = grantee.grantPrincipal as IConstruct
  if (!principal || typeof principal !== 'object' || !('node' in principal)) throw new Error('grantee principal is not a construct')
  return principal
}
