export { startService, type ServiceContext } from "./service.js";
export { applyTenantStatus, nextCondition, tenantRegarding, type ConditionInput } from "./tenant-status.js";
export { tenantOfSubject, warnOnRejection } from "./rejections.js";
export { applyTracked, changeOf, tenantDecider, type ApplyOutcome, type Decide } from "./object-change.js";
export { consumeTenantChanges } from "./tenant-consumer.js";
export { apiRefusalOf, describeRefusal, REASON_REJECTED_BY_API_SERVER, type ApiRefusal } from "./api-refusal.js";
export { ownedStatusFields, reportApiRefusal, type RefusalReporting } from "./refusal-status.js";
