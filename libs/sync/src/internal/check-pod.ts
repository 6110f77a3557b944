import type { HostRules } from "../host-rules.js";
import { floorViolations } from "./check-floor.js";
import { listed, volumeViolations } from "./check-volumes.js";
import { isJsonObject, type JsonObject } from "./json.js";
import { podSecurityViolations } from "./pod-security.js";
import { enforcedNodeSelector } from "../placement.js";
import { items, podContainers, read, tenantText, type Violation } from "./violation.js";

const WORKLOADS = "IsolationProfile spec.workloads";
/** Where a profile's node selector is set, for reasons. */
export const PROFILE_SELECTOR_FIELD = `${WORKLOADS}.nodeSelector`;
const HOST_ACCESS = "rule: tenant Pods never get host access";
/** The scheduler the host's API server names when a Pod names none. */
const DEFAULT_SCHEDULER = "default-scheduler";

/**
 * What keeps `pod` off the host: host access (host namespaces, hostPath, privileged
 * containers, host ports, whatever the profile says), volume types and the node floor
 * (capabilities, seccomp, AppArmor, procMount, sysctls, probe hosts) the profile does not
 * allow, names outside the profile's allowed priority classes, runtime classes and
 * schedulers, node selector values that conflict with the profile's, and anything the
 * host namespace's Pod Security level would refuse.
 * Tolerations the profile does not grant are no reason: the translator removes them.
 */
export function podViolations(pod: JsonObject, rules: HostRules): Violation[] {
  const found: Violation[] = [];
  const spec = read(pod, "spec");
  for (const key of ["hostNetwork", "hostPID", "hostIPC"]) {
    if (read(spec, key) === true)
      found.push({ field: `spec.${key}`, problem: `shares the host's namespaces (${HOST_ACCESS})` });
  }
  for (const [volume, index] of items(read(spec, "volumes"))) {
    if (volume["hostPath"] !== undefined) {
      found.push({ field: `spec.volumes[${index}].hostPath`, problem: `mounts a host path (${HOST_ACCESS})` });
    }
  }
  for (const [container, path] of podContainers(spec)) {
    if (read(read(container, "securityContext"), "privileged") === true) {
      found.push({ field: `${path}.securityContext.privileged`, problem: `privileged container (${HOST_ACCESS})` });
    }
    for (const [port, index] of items(read(container, "ports"))) {
      const hostPort = read(port, "hostPort");
      if (hostPort !== undefined && hostPort !== 0) {
        found.push({ field: `${path}.ports[${index}].hostPort`, problem: `binds a host port (${HOST_ACCESS})` });
      }
    }
  }

  found.push(...volumeViolations(pod, rules.volumes), ...floorViolations(pod, rules.floor));

  const priorityClass = read(spec, "priorityClassName");
  if (
    typeof priorityClass === "string" &&
    priorityClass !== "" &&
    !rules.allowedPriorityClasses.includes(priorityClass)
  ) {
    found.push({
      field: "spec.priorityClassName",
      problem: `${tenantText(priorityClass)} is not in ${WORKLOADS}.allowedPriorityClasses (${listed(rules.allowedPriorityClasses)})`,
    });
  }
  const runtimeClass = read(spec, "runtimeClassName");
  if (typeof runtimeClass === "string" && runtimeClass !== "" && !rules.allowedRuntimeClasses.includes(runtimeClass)) {
    found.push({
      field: "spec.runtimeClassName",
      problem: `${tenantText(runtimeClass)} is not in ${WORKLOADS}.allowedRuntimeClasses (${listed(rules.allowedRuntimeClasses)})`,
    });
  }
  const scheduler = read(spec, "schedulerName");
  if (
    typeof scheduler === "string" &&
    scheduler !== "" &&
    scheduler !== DEFAULT_SCHEDULER &&
    !rules.schedulers.includes(scheduler)
  ) {
    found.push({
      field: "spec.schedulerName",
      problem: `scheduler ${tenantText(scheduler)} is not in ${WORKLOADS}.schedulers (${listed(rules.schedulers)} besides the host's ${DEFAULT_SCHEDULER})`,
    });
  }
  const nodeSelector = read(spec, "nodeSelector");
  if (isJsonObject(nodeSelector)) {
    for (const [key, wanted] of enforcedNodeSelector(rules.nodeSelector, rules.placement, PROFILE_SELECTOR_FIELD)) {
      const value = nodeSelector[key];
      if (value !== undefined && value !== wanted.value) {
        found.push({
          field: `spec.nodeSelector[${key}]`,
          problem: `${tenantText(value)} conflicts with ${wanted.field}, which enforces ${wanted.value}`,
        });
      }
    }
  }

  const reported = new Set(found.map((v) => v.field));
  for (const violation of podSecurityViolations(pod, rules.podSecurity)) {
    if (!reported.has(violation.field)) found.push(violation);
  }
  return found;
}
