import { createHash } from "node:crypto";
import type { JetStreamClient } from "@nats-io/jetstream";
import { DecisionSchema, type Decision, type PlannedDecision } from "./decision.js";
import { subjects } from "./subjects.js";
import { TenantChangeSchema, type TenantChange } from "./tenant-change.js";

/**
 * An id derived from what was decided: the deciding service, tenant, action, kind,
 * both references and the reason, plus `instance` (what tells two otherwise equal
 * facts apart, e.g. the host object's uid and the version a write replaced). The same
 * Decision published again after a redelivery gets the same id, so the stream's
 * duplicate window and any subscriber can drop the repeat.
 */
export function decisionId(planned: PlannedDecision, service: string, instance = ""): string {
  const identity = [
    service,
    planned.tenant,
    planned.action,
    planned.kind,
    planned.tenantRef.namespace,
    planned.tenantRef.name,
    planned.hostRef.namespace,
    planned.hostRef.name,
    planned.reason,
    instance,
    // Only a Fail carries an error; leaving it out otherwise keeps every other id as it was.
    ...(planned.error ? [planned.error.code, planned.error.reason, planned.error.message] : []),
  ];
  const hex = createHash("sha256").update(JSON.stringify(identity)).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/**
 * Stamps a planned decision with the deciding service, keeping an id and time it
 * already carries (a recorded Decision being republished) and otherwise deriving
 * the id with decisionId and taking the current time.
 */
export function stampDecision(planned: PlannedDecision, service: string, now = new Date()): Decision {
  return DecisionSchema.parse({
    ...planned,
    id: planned.id ?? decisionId(planned, service),
    time: planned.time ?? now.toISOString(),
    service,
  });
}

/**
 * Publishes a Decision to JetStream on `tenantplane.decisions.<tenant>.<kind>.<action>`,
 * with the decision id as message id so a retried publish is stored once.
 */
export async function publishDecision(js: JetStreamClient, decision: Decision): Promise<void> {
  await publishStampedDecision(js, DecisionSchema.parse(decision));
}

/**
 * publishDecision for a Decision that stampDecision returned (and so validated): a service
 * publishing thousands of them parses each once, not twice.
 */
export async function publishStampedDecision(js: JetStreamClient, decision: Decision): Promise<void> {
  await js.publish(subjects.decision(decision.tenant, decision.kind, decision.action), JSON.stringify(decision), {
    msgID: decision.id,
  });
}

/** Publishes a tenant-change key; consumers re-read the TenantCluster themselves. */
export async function publishTenantChange(js: JetStreamClient, change: TenantChange): Promise<void> {
  const valid = TenantChangeSchema.parse(change);
  await js.publish(subjects.tenantChanged(valid.tenant), JSON.stringify(valid));
}
