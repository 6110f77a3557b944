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

declare const stamped: unique symbol;
/**
 * A Decision that stampDecision parsed (its text bounded, its fields checked): the only kind a
 * `DecisionPipeline` publishes, so each Decision is validated once however it is sent.
 */
export type StampedDecision = Decision & { readonly [stamped]: true };

/**
 * Stamps a planned decision with the deciding service, keeping an id and time it
 * already carries (a recorded Decision being republished) and otherwise deriving
 * the id with decisionId and taking the current time. Parsing bounds its free text
 * (MAX_DECISION_TEXT).
 */
export function stampDecision(planned: PlannedDecision, service: string, now = new Date()): StampedDecision {
  return DecisionSchema.parse({
    ...planned,
    id: planned.id ?? decisionId(planned, service),
    time: planned.time ?? now.toISOString(),
    service,
  }) as StampedDecision;
}

/**
 * Publishes one Decision to JetStream on `tenantplane.decisions.<tenant>.<kind>.<action>`,
 * with the decision id as message id so a retried publish is stored once: one round trip, for
 * tools and tests. Services publish through a `DecisionPipeline`.
 */
export async function publishDecision(js: JetStreamClient, decision: Decision): Promise<void> {
  const valid = DecisionSchema.parse(decision);
  await js.publish(subjects.decision(valid.tenant, valid.kind, valid.action), JSON.stringify(valid), {
    msgID: valid.id,
  });
}

/** Publishes a tenant-change key; consumers re-read the TenantCluster themselves. */
export async function publishTenantChange(js: JetStreamClient, change: TenantChange): Promise<void> {
  const valid = TenantChangeSchema.parse(change);
  await js.publish(subjects.tenantChanged(valid.tenant), JSON.stringify(valid));
}
