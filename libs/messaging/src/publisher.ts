import { randomUUID } from "node:crypto";
import type { JetStreamClient } from "@nats-io/jetstream";
import { DecisionSchema, type Decision, type PlannedDecision } from "./decision.js";
import { subjects } from "./subjects.js";
import { TenantChangeSchema, type TenantChange } from "./tenant-change.js";

/** Stamps a planned decision with a fresh id, the current time and the deciding service. */
export function stampDecision(planned: PlannedDecision, service: string, now = new Date()): Decision {
  return DecisionSchema.parse({ ...planned, id: randomUUID(), time: now.toISOString(), service });
}

/**
 * Publishes a Decision to JetStream on `tenantplane.decisions.<tenant>.<kind>.<action>`,
 * with the decision id as message id so a retried publish is stored once.
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
