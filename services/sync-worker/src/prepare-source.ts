import { prepareSource, type PlanInput } from "@tenantplane/sync";
import type { TenantPlanContext } from "./key-plan.js";
import type { TimeSlicer } from "./time-slice.js";

/**
 * Fills the context's memo with what planning tenant object `source` costs (its checks,
 * translation and content hash), serving the event loop between slices of the hash once
 * `slicer`'s slice is used: a megabyte object is hashed in steps of well under a millisecond,
 * and the plan that follows takes its translation from the memo. Stops early (the memo left
 * without it) when `stopped` turns true; does nothing without a memo.
 */
export async function prepareSliced(
  context: TenantPlanContext,
  source: unknown,
  slicer: TimeSlicer,
  stopped: () => boolean,
): Promise<void> {
  if (context.memo === undefined) return;
  for (const _ of prepareSource(planInput(context), source)) {
    await slicer.yieldIfDue();
    if (stopped()) return;
  }
}

/** The planner's input for one context (as key-plan.ts gives it), with no objects. */
function planInput(context: TenantPlanContext): PlanInput {
  return {
    tenant: context.tenant,
    policy: context.policy,
    completeKinds: context.completeKinds,
    rules: context.rules,
    tenantObjects: [],
    hostObjects: [],
    ...(context.hashKey === undefined ? {} : { hashKey: context.hashKey }),
    ...(context.memo === undefined ? {} : { memo: context.memo }),
    ...(context.podEnvironment === undefined ? {} : { podEnvironment: context.podEnvironment }),
    ...(context.privateNodes === undefined ? {} : { privateNodes: context.privateNodes }),
  };
}
