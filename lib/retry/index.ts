/** Retry: the one loop and its named policies (base level: imports only lib/errors, lib/log, lib/config), and AWS error classification. */
export { backoffMs, retry, sleep, type RetryInfo, type RetryOptions, type RetryPolicy } from './policy.js'
export { COMMIT_RETRY_PROPERTIES, commitPolicy, controlReadPolicy, immediately, markPolicy, tableCommitPolicy, type TablePolicy } from './settings.js'
export { attemptsOf, definitelyRejected, errorName, isConditionFailed, isNotFound, isThrottle, isTransient, statusOf } from './aws.js'
