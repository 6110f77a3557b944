export { startService, type ServiceContext } from "./service.js";
export {
  applyTenantStatus,
  nextCondition,
  statusUpToDate,
  tenantRegarding,
  type ConditionInput,
  type StatusHolder,
} from "./tenant-status.js";
export { APPLIED_HASH_ANNOTATION, appliedHashAnnotation, appliedUpToDate, withAppliedHash } from "./applied-hash.js";
export { hostKinds, tenantToWake, type HostKind } from "./host-cache.js";
export { tenantOfSubject, warnOnRejection } from "./rejections.js";
export {
  applyTracked,
  changeOf,
  createEntryAsApply,
  createTracked,
  handOverToApply,
  publishRecordedDecision,
  tenantDecider,
  type ApplyOutcome,
  type Decide,
  type TrackedDecision,
} from "./object-change.js";
export {
  DECISION_RECORD_ANNOTATION,
  decisionRecordAnnotation,
  decisionRecords,
  recordedDecisionOf,
  type RecordedDecision,
} from "./decision-record.js";
export { ownedFieldsChanged } from "./owned-fields.js";
export { faults } from "./faults.js";
export {
  PENDING_DELETE_PREFIX,
  deleteTracked,
  publishPendingDeletes,
  type DeleteTarget,
  type RecordedDelete,
} from "./delete-tracked.js";
export { consumeTenantChanges } from "./tenant-consumer.js";
export {
  isMeaningfulUpdate,
  profileReferrersOf,
  referrersOf,
  tenantKeyOf,
  tenantSpecChangeOf,
  type TenantKey,
} from "./tenant-key.js";
export { parseCachedTenantCluster } from "./cached-tenant.js";
export {
  accessDenialOf,
  apiRefusalOf,
  describeRefusal,
  REASON_REJECTED_BY_API_SERVER,
  type AccessDenial,
  type ApiRefusal,
} from "./api-refusal.js";
export { ownedStatusFields, reportApiRefusal, type RefusalReporting } from "./refusal-status.js";
