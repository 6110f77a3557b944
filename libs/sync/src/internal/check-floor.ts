import type { FloorLifts } from "../host-rules.js";
import type { JsonObject } from "./json.js";
import { APPARMOR_ANNOTATION, BASELINE_CAPABILITIES, SAFE_SYSCTLS } from "./pod-security.js";
import { items, MAX_TENANT_KEY, podContainers, read, strings, tenantText, type Violation } from "./violation.js";

const WORKLOADS = "IsolationProfile spec.workloads";
const SECCOMP_POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER_ANNOTATION = "container.seccomp.security.alpha.kubernetes.io/";
const PROBES = ["livenessProbe", "readinessProbe", "startupProbe"];
const HOOKS = ["postStart", "preStop"];

/**
 * What `pod` asks of the node that no tenant gets at any Pod Security level, `privileged`
 * included, unless the profile lifts that one rule: capabilities beyond baseline's list,
 * seccomp or AppArmor Unconfined (fields and legacy annotations), procMount Unmasked,
 * sysctls outside baseline's safe set, probe or lifecycle handlers naming a host, and
 * resource claims (devices the node's drivers attach).
 */
export function floorViolations(pod: JsonObject, lifts: FloorLifts): Violation[] {
  const found: Violation[] = [];
  // Lists name what is missing from them; switches name the switch that would lift the rule.
  const refuse = (field: string, what: string, lift: string) =>
    found.push({
      field,
      problem: lift.startsWith("allowed")
        ? `${what} and not in ${WORKLOADS}.${lift}`
        : `${what}, which needs ${WORKLOADS}.${lift}: true`,
    });
  const spec = read(pod, "spec");
  const podContext = read(spec, "securityContext");

  if (!lifts.allowUnconfinedSeccomp) {
    for (const [context, at] of contexts(spec)) {
      if (read(read(context, "seccompProfile"), "type") === "Unconfined")
        refuse(`${at}.seccompProfile.type`, "seccomp profile Unconfined", "allowUnconfinedSeccomp");
    }
  }
  if (!lifts.allowUnconfinedAppArmor) {
    for (const [context, at] of contexts(spec)) {
      if (read(read(context, "appArmorProfile"), "type") === "Unconfined")
        refuse(`${at}.appArmorProfile.type`, "AppArmor profile Unconfined", "allowUnconfinedAppArmor");
    }
  }
  for (const [key, value] of Object.entries(annotations(pod))) {
    if (typeof value !== "string" || value.toLowerCase() !== "unconfined") continue;
    const field = `metadata.annotations[${tenantText(key, MAX_TENANT_KEY)}]`;
    if (
      !lifts.allowUnconfinedSeccomp &&
      (key === SECCOMP_POD_ANNOTATION || key.startsWith(SECCOMP_CONTAINER_ANNOTATION))
    )
      refuse(field, "seccomp profile unconfined", "allowUnconfinedSeccomp");
    if (!lifts.allowUnconfinedAppArmor && key.startsWith(APPARMOR_ANNOTATION))
      refuse(field, "AppArmor profile unconfined", "allowUnconfinedAppArmor");
  }

  // Dynamic resource allocation has the node's drivers attach devices (GPUs, NICs) to the Pod.
  if (!lifts.allowResourceClaims) {
    for (const [claim, index] of items(read(spec, "resourceClaims"))) {
      refuse(
        `spec.resourceClaims[${index}]`,
        `claim ${tenantText(read(claim, "name"))} asks the node's drivers for devices`,
        "allowResourceClaims",
      );
    }
  }

  for (const [sysctl, index] of items(read(podContext, "sysctls"))) {
    const name = read(sysctl, "name");
    if (typeof name === "string" && !SAFE_SYSCTLS.has(name) && !lifts.allowedSysctls.includes(name))
      refuse(
        `spec.securityContext.sysctls[${index}].name`,
        `sysctl ${tenantText(name)} is outside Pod Security baseline's safe set`,
        "allowedSysctls",
      );
  }

  for (const [container, path] of podContainers(spec)) {
    const context = read(container, "securityContext");
    const at = `${path}.securityContext`;
    for (const [index, capability] of strings(read(read(context, "capabilities"), "add"))) {
      if (!BASELINE_CAPABILITIES.has(capability) && !lifts.allowedCapabilities.includes(capability))
        refuse(
          `${at}.capabilities.add[${index}]`,
          `capability ${tenantText(capability)} is beyond Pod Security baseline's list`,
          "allowedCapabilities",
        );
    }
    if (read(context, "procMount") === "Unmasked" && !lifts.allowUnmaskedProcMount)
      refuse(`${at}.procMount`, "procMount Unmasked exposes the node's /proc", "allowUnmaskedProcMount");
    if (!lifts.allowProbeHosts) {
      for (const [handler, handlerPath] of handlers(container, path)) {
        for (const action of ["httpGet", "tcpSocket"]) {
          const host = read(read(handler, action), "host");
          if (typeof host === "string" && host !== "")
            refuse(
              `${handlerPath}.${action}.host`,
              `the kubelet would connect to ${tenantText(host)} from the node's network`,
              "allowProbeHosts",
            );
        }
      }
    }
  }
  return found;
}

/** The Pod's and each container's security context with its field path. */
function contexts(spec: unknown): Array<[unknown, string]> {
  const found: Array<[unknown, string]> = [[read(spec, "securityContext"), "spec.securityContext"]];
  for (const [container, path] of podContainers(spec)) {
    found.push([read(container, "securityContext"), `${path}.securityContext`]);
  }
  return found;
}

/** A container's probes and lifecycle hooks: every handler the kubelet runs from the node. */
function handlers(container: JsonObject, path: string): Array<[unknown, string]> {
  const found: Array<[unknown, string]> = [];
  for (const probe of PROBES) {
    if (read(container, probe) !== undefined) found.push([read(container, probe), `${path}.${probe}`]);
  }
  const lifecycle = read(container, "lifecycle");
  for (const hook of HOOKS) {
    if (read(lifecycle, hook) !== undefined) found.push([read(lifecycle, hook), `${path}.lifecycle.${hook}`]);
  }
  return found;
}

function annotations(pod: JsonObject): Record<string, unknown> {
  const value = read(read(pod, "metadata"), "annotations");
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
