/**
 * Cost model: AWS cost per GB of JSON ingested, from the measured writer CPU time and request
 * counts and the measured commit cost, beside Amazon Data Firehose's per-GB price for Iceberg
 * destinations. Every price is a constant here (us-east-1, looked up 2026-11-29; sources in
 * docs/benchmarks.md): edit them to re-price a run from bench-results.json.
 */
import type { CommitResult } from './commit.js'
import type { ThroughputResult } from './throughput.js'
import { round } from './common.js'

export const PRICES = {
  region: 'us-east-1',
  asOf: '2026-11-29',
  /** Lambda arm64 duration, first 7.5B GB-s/month tier (aws.amazon.com/lambda/pricing via third-party summaries). */
  lambdaArmPerGbSecond: 0.0000133334,
  /** Lambda requests, per request ($0.20 per million). */
  lambdaPerRequest: 0.2 / 1e6,
  /** S3 Standard PUT/COPY/POST/LIST, per request ($0.005 per 1,000). Not verified with the search tools. */
  s3PutPerRequest: 0.005 / 1000,
  /** S3 Standard GET/SELECT/HEAD, per request ($0.0004 per 1,000). Not verified with the search tools. */
  s3GetPerRequest: 0.0004 / 1000,
  /** DynamoDB on-demand write request unit ($0.625 per million since Nov 2024). */
  ddbPerWriteUnit: 0.625 / 1e6,
  /** DynamoDB on-demand read request unit ($0.125 per million since Nov 2024). */
  ddbPerReadUnit: 0.125 / 1e6,
  /** Firehose to Apache Iceberg Tables, per GB, first 250 TB/month (quoted for Direct PUT / KDS sources; the MSK-source rate is unverified). */
  firehoseIcebergPerGb: 0.075,
} as const

/** Lambda gives one full vCPU at 1,769 MB and CPU in proportion below: GB-s per CPU-second at ≤ 1,769 MB. */
export const GB_SECONDS_PER_CPU_SECOND = 1.769

export interface CostModel {
  assumptions: Record<string, string | number>
  perGb: Record<string, number>
  totalPerGb: number
  firehosePerGb: number
  floeToFirehose: number
}

const GiB = 2 ** 30

/**
 * `tp`: the narrow throughput run; `commit`: the commit bench (the row closest to the batches one
 * commit takes at `gbPerHour`, with the SHORTEST history: the committer merges small manifests,
 * so a steady-state table has a bounded manifest count — the long crafted histories measure a
 * one-time merge backlog); the committer runs once a minute per table.
 */
export function costModel(tp: ThroughputResult, commits: CommitResult[], opts: { gbPerHour?: number; writerMemoryMb?: number; committerMemoryMb?: number } = {}): CostModel {
  const gbPerHour = opts.gbPerHour ?? 10
  const writerMemGb = (opts.writerMemoryMb ?? 1024) / 1024
  const committerMemGb = (opts.committerMemoryMb ?? 1024) / 1024
  const inv = tp.perInvocation
  const invocationsPerGb = GiB / inv.jsonBytes
  // CPU-bound: Lambda at ≤ 1,769 MB runs the measured CPU time stretched by 1769/memory.
  const cpuSecPerInvocation = tp.floe.cpuMs / 1000 / tp.events
  const writerGbSecPerGb = invocationsPerGb * cpuSecPerInvocation * Math.max(GB_SECONDS_PER_CPU_SECOND, writerMemGb)
  const commitsPerGb = 60 / gbPerHour
  const batchesPerCommit = invocationsPerGb / commitsPerGb
  const near = [...commits].sort((a, b) => Math.abs(Math.log(a.batches / batchesPerCommit)) - Math.abs(Math.log(b.batches / batchesPerCommit)) || a.snapshots - b.snapshots)[0]
  const s3Put = (c: CommitResult) => (c.s3.PutObject ?? 0) + (c.s3.ListObjectsV2 ?? 0) + (c.s3.CopyObject ?? 0)
  const s3Get = (c: CommitResult) => (c.s3.GetObject ?? 0) + (c.s3.HeadObject ?? 0)
  // Write units scale with batches (one mark per batch); the rest is per commit.
  const commitWcu = near ? (near.wcu / near.batches) * batchesPerCommit : 0
  const commitRcu = near ? (near.rcu / near.batches) * batchesPerCommit : 0
  const p = PRICES
  const perGb: Record<string, number> = {
    writerLambdaDuration: writerGbSecPerGb * p.lambdaArmPerGbSecond,
    writerLambdaRequests: invocationsPerGb * p.lambdaPerRequest,
    writerS3: invocationsPerGb * ((inv.s3.PUT + inv.s3.LIST) * p.s3PutPerRequest + (inv.s3.GET + inv.s3.HEAD) * p.s3GetPerRequest),
    writerDynamoDb: invocationsPerGb * (inv.wcu * p.ddbPerWriteUnit + inv.rcu * p.ddbPerReadUnit),
    committerLambda: near ? commitsPerGb * ((near.ms / 1000) * committerMemGb * p.lambdaArmPerGbSecond + p.lambdaPerRequest) : 0,
    committerS3: near ? commitsPerGb * (s3Put(near) * p.s3PutPerRequest + s3Get(near) * p.s3GetPerRequest) : 0,
    committerDynamoDb: near ? commitsPerGb * (commitWcu * p.ddbPerWriteUnit + commitRcu * p.ddbPerReadUnit) : 0,
  }
  const total = Object.values(perGb).reduce((a, b) => a + b, 0)
  return {
    assumptions: {
      ingestGbPerHour: gbPerHour,
      writerMemoryMb: writerMemGb * 1024,
      committerMemoryMb: committerMemGb * 1024,
      jsonBytesPerInvocation: inv.jsonBytes,
      invocationsPerGb: round(invocationsPerGb, 1),
      writerCpuSecondsPerInvocation: round(cpuSecPerInvocation, 3),
      writerGbSecondsPerGb: round(writerGbSecPerGb, 2),
      commitsPerGb: round(commitsPerGb, 2),
      batchesPerCommit: round(batchesPerCommit, 1),
      commitMeasurementUsed: near ? `${near.batches} batches into ${near.snapshots} snapshots, ${near.ms} ms` : 'none',
    },
    perGb: Object.fromEntries(Object.entries(perGb).map(([k, v]) => [k, round(v, 6)])),
    totalPerGb: round(total, 5),
    firehosePerGb: p.firehoseIcebergPerGb,
    floeToFirehose: round(total / p.firehoseIcebergPerGb, 3),
  }
}
