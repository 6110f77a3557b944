import type { HostRules } from "./host-rules.js";
import { podViolations } from "./internal/check-pod.js";
import { serviceViolations } from "./internal/check-service.js";
import type { JsonObject } from "./internal/json.js";
import { describeViolations, type Violation } from "./internal/violation.js";
import type { KubeObject } from "./kube-object.js";

/**
 * Why `obj` may not reach `tenant`'s host namespace under `rules`, naming each field and
 * the rule or Pod Security level it breaks; undefined when it may. Only Pods and
 * Services can affect the host beyond their namespace, so other kinds always pass.
 */
export function hostRulesReason(obj: KubeObject, rules: HostRules, tenant: string): string | undefined {
  const body = obj as JsonObject;
  let violations: Violation[] = [];
  if (obj.kind === "Pod") violations = podViolations(body, rules);
  if (obj.kind === "Service") violations = serviceViolations(body, rules, tenant);
  return violations.length === 0 ? undefined : `refused by host rules: ${describeViolations(violations)}`;
}
