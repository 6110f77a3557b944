export { fnv1a32, partitionOf, assertPartitionCount } from "./partition-of.js";
export { DEFAULT_TTL_MS, resolveTimings, type LeaseTimings } from "./timings.js";
export {
  DEFAULT_LEASE_BUCKET,
  DEFAULT_PARTITIONS,
  PartitionLeases,
  defaultWorkerId,
  type LeaseLogger,
  type LossReason,
  type PartitionLeasesOptions,
} from "./partition-leases.js";
export type { LeaseMetrics } from "./metrics.js";
export {
  DEFAULT_CRASH_POLICY,
  countCrash,
  crashRecordSchema,
  emptyRecord,
  onProbation,
  parseRecord,
  probationUntil,
  recentCrashes,
  release,
  type Crash,
  type CrashPolicy,
  type CrashRecord,
} from "./crash-policy.js";
export {
  CrashLedger,
  DEFAULT_CRASH_BUCKET,
  type Admission,
  type CrashLedgerOptions,
  type Counted,
} from "./crash-ledger.js";
