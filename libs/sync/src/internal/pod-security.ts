import type { PodSecurityLevel } from "@tenantplane/api";
import type { JsonObject } from "./json.js";
import { items, MAX_TENANT_KEY, podContainers, read, strings, tenantText, type Violation } from "./violation.js";

// The Pod Security Standards (kubernetes.io/docs/concepts/security/pod-security-standards),
// checked the way the host namespace's `enforce` label would check them, so a Pod the
// host would refuse is reported before any write.

/** Capabilities Pod Security baseline lets a container add. */
export const BASELINE_CAPABILITIES: ReadonlySet<string> = new Set([
  "AUDIT_WRITE",
  "CHOWN",
  "DAC_OVERRIDE",
  "FOWNER",
  "FSETID",
  "KILL",
  "MKNOD",
  "NET_BIND_SERVICE",
  "SETFCAP",
  "SETGID",
  "SETPCAP",
  "SETUID",
  "SYS_CHROOT",
]);
const SELINUX_TYPES = new Set(["", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"]);
/** Sysctls Pod Security baseline lets a Pod set. */
export const SAFE_SYSCTLS: ReadonlySet<string> = new Set([
  "kernel.shm_rmid_forced",
  "net.ipv4.ip_local_port_range",
  "net.ipv4.ip_unprivileged_port_start",
  "net.ipv4.tcp_syncookies",
  "net.ipv4.ping_group_range",
  "net.ipv4.ip_local_reserved_ports",
  "net.ipv4.tcp_keepalive_time",
  "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl",
  "net.ipv4.tcp_keepalive_probes",
]);
const RESTRICTED_VOLUME_TYPES = new Set([
  "configMap",
  "csi",
  "downwardAPI",
  "emptyDir",
  "ephemeral",
  "persistentVolumeClaim",
  "projected",
  "secret",
]);
/** The prefix of the legacy per-container AppArmor annotations. */
export const APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/";

/**
 * What the Pod Security `level` forbids in `pod`, each naming the field; empty for
 * `privileged` and for a Pod the level admits.
 */
export function podSecurityViolations(pod: JsonObject, level: PodSecurityLevel): Violation[] {
  if (level === "privileged") return [];
  const found: Violation[] = [];
  const forbid = (field: string, problem: string) =>
    found.push({ field, problem: `${problem} (Pod Security ${level})` });
  baseline(pod, forbid);
  if (level === "restricted") restricted(pod, forbid);
  return found;
}

type Forbid = (field: string, problem: string) => void;

function baseline(pod: JsonObject, forbid: Forbid): void {
  const spec = read(pod, "spec");
  const podContext = read(spec, "securityContext");
  for (const key of ["hostNetwork", "hostPID", "hostIPC"]) {
    if (read(spec, key) === true) forbid(`spec.${key}`, "host namespaces are forbidden");
  }
  for (const [volume, index] of items(read(spec, "volumes"))) {
    if (volume["hostPath"] !== undefined) forbid(`spec.volumes[${index}].hostPath`, "hostPath volumes are forbidden");
  }
  checkCommonContext(podContext, "spec.securityContext", forbid);
  for (const [sysctl, index] of items(read(podContext, "sysctls"))) {
    const name = read(sysctl, "name");
    if (typeof name === "string" && !SAFE_SYSCTLS.has(name)) {
      forbid(`spec.securityContext.sysctls[${index}].name`, `sysctl ${tenantText(name)} is not in the safe set`);
    }
  }
  const annotations = read(read(pod, "metadata"), "annotations");
  if (typeof annotations === "object" && annotations !== null) {
    for (const [key, value] of Object.entries(annotations)) {
      if (key.startsWith(APPARMOR_ANNOTATION) && !isAllowedAppArmorAnnotation(value)) {
        forbid(
          `metadata.annotations[${tenantText(key, MAX_TENANT_KEY)}]`,
          `AppArmor profile ${tenantText(value)} is forbidden`,
        );
      }
    }
  }
  for (const [container, path] of podContainers(spec)) {
    const context = read(container, "securityContext");
    const at = `${path}.securityContext`;
    if (read(context, "privileged") === true) forbid(`${at}.privileged`, "privileged containers are forbidden");
    for (const [index, capability] of strings(read(read(context, "capabilities"), "add"))) {
      if (!BASELINE_CAPABILITIES.has(capability)) {
        forbid(`${at}.capabilities.add[${index}]`, `capability ${tenantText(capability)} is forbidden`);
      }
    }
    const procMount = read(context, "procMount");
    if (procMount !== undefined && procMount !== "Default") forbid(`${at}.procMount`, "procMount must be Default");
    checkCommonContext(context, at, forbid);
    for (const [port, index] of items(read(container, "ports"))) {
      const hostPort = read(port, "hostPort");
      if (hostPort !== undefined && hostPort !== 0)
        forbid(`${path}.ports[${index}].hostPort`, "host ports are forbidden");
    }
  }
}

/** Checks a Pod or container security context has in common at the baseline level. */
function checkCommonContext(context: unknown, at: string, forbid: Forbid): void {
  if (read(read(context, "windowsOptions"), "hostProcess") === true) {
    forbid(`${at}.windowsOptions.hostProcess`, "Windows host processes are forbidden");
  }
  const appArmor = read(read(context, "appArmorProfile"), "type");
  if (appArmor !== undefined && appArmor !== "RuntimeDefault" && appArmor !== "Localhost") {
    forbid(`${at}.appArmorProfile.type`, `AppArmor profile ${tenantText(appArmor)} is forbidden`);
  }
  const seLinux = read(context, "seLinuxOptions");
  const seLinuxType = read(seLinux, "type");
  if (typeof seLinuxType === "string" && !SELINUX_TYPES.has(seLinuxType)) {
    forbid(`${at}.seLinuxOptions.type`, `SELinux type ${tenantText(seLinuxType)} is forbidden`);
  }
  for (const key of ["user", "role"]) {
    const value = read(seLinux, key);
    if (value !== undefined && value !== "")
      forbid(`${at}.seLinuxOptions.${key}`, `a custom SELinux ${key} is forbidden`);
  }
  if (read(read(context, "seccompProfile"), "type") === "Unconfined") {
    forbid(`${at}.seccompProfile.type`, "seccomp profile Unconfined is forbidden");
  }
}

function restricted(pod: JsonObject, forbid: Forbid): void {
  const spec = read(pod, "spec");
  const podContext = read(spec, "securityContext");
  for (const [volume, index] of items(read(spec, "volumes"))) {
    const type = Object.keys(volume).find((key) => key !== "name");
    if (type !== undefined && !RESTRICTED_VOLUME_TYPES.has(type) && type !== "hostPath") {
      forbid(`spec.volumes[${index}].${tenantText(type)}`, `${tenantText(type)} volumes are forbidden`);
    }
  }
  const podNonRoot = read(podContext, "runAsNonRoot");
  if (podNonRoot === false) forbid("spec.securityContext.runAsNonRoot", "must not be false");
  if (read(podContext, "runAsUser") === 0) forbid("spec.securityContext.runAsUser", "running as root (0) is forbidden");
  const podSeccomp = read(read(podContext, "seccompProfile"), "type");
  for (const [container, path] of podContainers(spec)) {
    const context = read(container, "securityContext");
    const at = `${path}.securityContext`;
    if (read(context, "allowPrivilegeEscalation") !== false) {
      forbid(`${at}.allowPrivilegeEscalation`, "must be false");
    }
    const nonRoot = read(context, "runAsNonRoot");
    if (nonRoot === false || (nonRoot === undefined && podNonRoot !== true)) {
      forbid(`${at}.runAsNonRoot`, "must be true (here or in spec.securityContext)");
    }
    if (read(context, "runAsUser") === 0) forbid(`${at}.runAsUser`, "running as root (0) is forbidden");
    const seccomp = read(read(context, "seccompProfile"), "type") ?? podSeccomp;
    if (seccomp !== "RuntimeDefault" && seccomp !== "Localhost" && seccomp !== "Unconfined") {
      forbid(`${at}.seccompProfile.type`, "must be RuntimeDefault or Localhost (here or in spec.securityContext)");
    }
    const capabilities = read(context, "capabilities");
    if (!strings(read(capabilities, "drop")).some(([, name]) => name === "ALL")) {
      forbid(`${at}.capabilities.drop`, "must include ALL");
    }
    for (const [index, capability] of strings(read(capabilities, "add"))) {
      if (capability !== "NET_BIND_SERVICE" && BASELINE_CAPABILITIES.has(capability)) {
        forbid(
          `${at}.capabilities.add[${index}]`,
          `capability ${tenantText(capability)} is forbidden; only NET_BIND_SERVICE may be added`,
        );
      }
    }
  }
}

function isAllowedAppArmorAnnotation(value: unknown): boolean {
  return value === "runtime/default" || (typeof value === "string" && value.startsWith("localhost/"));
}
