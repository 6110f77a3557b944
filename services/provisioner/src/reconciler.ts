import type {
  KubernetesObject,
  V1ObjectMeta,
  V1Pod,
  V1Secret,
  V1Service,
  V1StatefulSet,
} from "@kubernetes/client-node";
import {
  API_VERSION,
  CONDITION_CONTROL_PLANE_READY,
  CONDITION_ISOLATION_APPLIED,
  KIND_ISOLATION_PROFILE,
  KIND_TENANT_CLUSTER,
  ValidationError,
  isolationModeOf,
  type Condition,
  type TenantCluster,
  type TenantClusterStatus,
} from "@tenantplane/api";
import {
  chooseIsolationProfile,
  compileIsolation,
  describeForeign,
  namespaceOwnership,
  objectOwnership,
  type CompiledIsolation,
  type ProfileChoice,
} from "@tenantplane/isolation";
import { type EventRecorder, type NamespaceWatches, type Objects } from "@tenantplane/kube";
import { LABEL_CONTROL_PLANE, LABEL_MANAGED_BY, MANAGED_BY, hostNamespaceFor } from "@tenantplane/mapping";
import type { PlannedDecision } from "@tenantplane/messaging";
import { TransientError, describe, httpStatusOf, type Logger } from "@tenantplane/runtime";
import {
  applyTenantStatus,
  applyTracked,
  createTracked,
  deleteTracked,
  publishRecordedDecision,
  statusUpToDate,
  tenantDecider,
  tenantRegarding,
  type Decide,
  parseCachedTenantCluster,
} from "@tenantplane/service";
import { controlPlaneBlockers } from "./control-plane-admission.js";
import {
  KUBECONFIG_KEY,
  STATEFULSET_NAME,
  apiService,
  controlPlaneSelector,
  controlPlaneStatefulSet,
  endpointFor,
  externalEndpointFrom,
  headlessService,
  hostNamespaceManifest,
  immutableChanges,
  kubeconfigSecretName,
  legacyControlPlaneSelector,
  loadBalancerAddresses,
  pkiSecretName,
} from "./control-plane.js";
import { buildKubeconfig, issuedKubeconfigExpiry, judgeKubeconfig, kubeconfigSecret } from "./kubeconfig.js";
import { InvalidPkiSecretError, generateTenantPki, signClientCertificate, type TenantPki } from "./pki.js";
import { pkiFingerprint, pkiSecret, readPkiSecret, rememberPkiSecret } from "./pki-secret.js";
import {
  controlPlaneReadyInput,
  findCondition,
  firstReportHoldMs,
  heldUnreachableCondition,
  isCurrentAndTrue,
  needsAttention,
  provisionerStatusFields,
  type ControlPlaneObservation,
} from "./plan-status.js";
import { withoutCreateEntry } from "./field-ownership.js";
import { readyEvent } from "./lifecycle-events.js";
import { describePodWait } from "./pod-wait.js";
import { API_PROBE_RETRY_MS, POD_LOOK_AFTER_MS, apiProbeRetryMs } from "./pod-wake.js";
import { decodeSecretData } from "./secret-data.js";
import { ensureRoleBindings, type TenantRoleGrant } from "./role-bindings.js";
import { ApiProbes } from "./api-probes.js";
import { BootstrapTokens } from "./bootstrap-tokens.js";
import {
  BOOTSTRAP_TOKEN_NAMESPACE,
  bootstrapTokenSecretName,
  joinReasons,
  joinSecret,
  JOIN_TOKEN_TTL_MS,
  joinSecretName,
  planJoinCredential,
  type JoinCredential,
} from "./join-credential.js";
import { ProbeClients } from "./probe-clients.js";
import { teardown } from "./teardown.js";
import { dnsConfigMap, dnsDeployment, dnsService } from "./tenant-dns.js";

/** The finalizer that holds a TenantCluster until everything created for it is gone. */
export const FINALIZER = "tenantplane.io/teardown";
/** Lifetime of the admin client certificate unless configured otherwise: one year. */
export const DEFAULT_ADMIN_CERT_LIFETIME_MS = 365 * 24 * 60 * 60 * 1000;
const ADMIN_USER = "tenantplane-admin";
const READY_PROBE_TIMEOUT_MS = 5_000;
// One admin client per tenant, shared by the readiness probe and the join credential's writes.
const tenantClients = new ProbeClients(READY_PROBE_TIMEOUT_MS);
const apiProbes = new ApiProbes(tenantClients, READY_PROBE_TIMEOUT_MS);
// When a join credential the tenant API did not take is tried again.
const JOIN_RETRY_MS = 10_000;
// How often a terminating namespace is looked at again.
const NOT_READY_POLL_MS = 3_000;

/** What the provisioner needs from the outside world. */
export interface ProvisionerDeps {
  objects: Objects;
  events: EventRecorder;
  publish: (decision: PlannedDecision) => Promise<void>;
  logger: Logger;
  /** Lifetime of each admin client certificate it signs; renewed after two thirds of it. */
  adminCertLifetimeMs?: number;
  /** ClusterRoles bound to services' ServiceAccounts in every tenant namespace; none when unset. */
  roleBindings?: readonly TenantRoleGrant[];
  /** The clock; tests move it. */
  now?: () => Date;
  /** CoreDNS image of each tenant's DNS server; default {@link DEFAULT_DNS_IMAGE}. */
  dnsImage?: string | undefined;
  /** Told when a tenant namespace is bound (the services may act there) and when it is torn down. */
  namespaceWatches?: NamespaceWatches | undefined;
  /** The authenticated readiness probes; one module-wide set when not given. */
  apiProbes?: ApiProbes;
  /** Admin clients of the tenant APIs (bootstrap tokens of Private tenants); one module-wide set when not given. */
  tenantClients?: ProbeClients;
  /** Runs a pass for the tenant in its turn (a readiness probe ended). */
  wake: (tenant: string) => void;
  /**
   * Runs a pass for the tenant after `ms` in this process (no message is redelivered); the
   * one moment no watch event marks is a pod that has not become Ready within POD_LOOK_AFTER_MS.
   */
  wakeAfter?: (tenant: string, ms: number) => void;
}

const CONTROL_PLANE_POD = `${STATEFULSET_NAME}-0`;
const TENANT_DNS_REASON =
  "tenant DNS server: host copies of tenant Pods resolve their tenant's Services and API through it";

// Tenant Pods reach their API at the API Service's ClusterIP (KUBERNETES_SERVICE_HOST), so the
// serving certificate names it too.
function clusterIps(service: V1Service): string[] {
  return (service.spec?.clusterIPs ?? [service.spec?.clusterIP]).filter(
    (ip): ip is string => typeof ip === "string" && ip !== "" && ip !== "None",
  );
}

type RawTenant = KubernetesObject & { status?: TenantClusterStatus };

/**
 * Ends a reconcile pass early with what it observed: the steps after it depend on something
 * that is not there yet or that a person has to fix. The status is written from the observation.
 */
class Halt extends Error {
  constructor(readonly observation: ControlPlaneObservation) {
    super(observation.state);
  }
}

/** Ends a pass that started the tenant's readiness probe: the probe's answer wakes the next one. */
class ProbeRunning extends Error {}

/** One reconcile pass over one tenant: its inputs and what the steps observed on the way. */
interface Pass {
  tenant: string;
  namespace: string;
  raw: RawTenant;
  tc: TenantCluster;
  uid: string;
  generation: number;
  deps: ProvisionerDeps;
  decide: Decide;
  /** What the steps saw; `*Observed` says a step ran, so what it reported is current. */
  facts: {
    apiObserved?: boolean;
    externalEndpoint?: string;
    kubeconfigObserved?: boolean;
    kubeconfigExpiresAt?: Date;
    /** When a tenant API that did not answer is probed again. */
    probeAgainMs?: number;
  };
}

/** The isolation the namespace gets: the profile chosen for the tenant and what it compiles to. */
interface Isolation {
  choice: ProfileChoice;
  compiled: CompiledIsolation;
  source: string;
}

/**
 * Converges one tenant's control plane with the current TenantCluster, re-read from the API on
 * every call (the message is only a key), and is idempotent. Writes only to objects tenantplane
 * created for this tenant. A tenant that is not Ready yet is settled, not redelivered: its
 * caller wakes the next pass from watch events; only an unreachable tenant API throws
 * TransientError, to be probed again.
 */
export async function reconcileTenant(tenant: string, deps: ProvisionerDeps): Promise<void> {
  const raw = await deps.objects.get<RawTenant>(API_VERSION, KIND_TENANT_CLUSTER, tenant);
  if (!raw || raw.metadata?.deletionTimestamp) {
    // Its namespace is going (or kept for someone else's objects): nothing more to watch there.
    deps.namespaceWatches?.unwatchNamespace(hostNamespaceFor(tenant));
    (deps.apiProbes ?? apiProbes).forget(tenant);
    (deps.tenantClients ?? tenantClients).forget(tenant);
    // Gone without our finalizer having run (e.g. force-removed): clean up what is ours anyway.
    return teardown(tenant, raw, deps, FINALIZER);
  }

  let tc: TenantCluster;
  try {
    tc = parseCachedTenantCluster(raw);
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    return refuseSpec(raw, err.message, deps);
  }
  const pass: Pass = {
    tenant,
    namespace: hostNamespaceFor(tenant),
    raw,
    tc,
    uid: raw.metadata!.uid!,
    generation: tc.metadata.generation ?? 0,
    deps,
    decide: tenantDecider(tenant, deps.publish),
    facts: {},
  };
  let observation: ControlPlaneObservation;
  try {
    observation = await provision(pass);
  } catch (err) {
    // Everything before the probe is in place; the pass its answer wakes reports the status.
    if (err instanceof ProbeRunning) return;
    if (!(err instanceof Halt)) throw err;
    observation = err.observation;
  }
  await report(pass, observation);
}

// Each step reads as one sentence; a step that cannot go on halts the pass with what it saw.
async function provision(pass: Pass): Promise<ControlPlaneObservation> {
  await ensureFinalizer(pass);
  const isolation = await readIsolation(pass);
  await ensureNamespace(pass, isolation);
  await ensureServiceAccess(pass);
  checkProfileAdmitsControlPlane(pass, isolation);
  const pki = await ensurePki(pass);
  const api = await ensureOwned(pass, apiService(pass.tc), apiServiceReason(pass.tc));
  await ensureOwned(pass, headlessService(pass.tenant), "stable network identity for the k3s StatefulSet");
  const external = externalEndpointFrom(api);
  pass.facts.apiObserved = true;
  if (external !== undefined) pass.facts.externalEndpoint = external;
  await ensureOwned(pass, dnsConfigMap(pass.tenant), "Corefile of the tenant DNS server");
  await ensureOwned(pass, dnsService(pass.tenant), TENANT_DNS_REASON);
  // An exposed control plane waits for its address, so the kubeconfig is written once with the
  // URL clients use and the serving certificate names the address from the pod's first start
  // (a later address would change the certificate's names and restart the pod at birth).
  if (pass.tc.spec.controlPlane.expose.loadBalancer.enabled && external === undefined)
    throw new Halt({ state: "waiting-for-load-balancer" });
  const server = external ?? endpointFor(pass.tenant);
  const kubeconfig = await ensureKubeconfig(pass, pki, server);
  const sts = await ensureControlPlane(pass, isolation, pki, [...loadBalancerAddresses(api), ...clusterIps(api)]);
  // Like the control plane, the DNS server runs only in an isolated namespace (ensureControlPlane checked it).
  await ensureOwned(pass, dnsDeployment(pass.tenant, pass.deps.dnsImage), TENANT_DNS_REASON);
  const observation = await observeControlPlane(pass, sts, kubeconfig);
  // The join credential lives partly in the tenant API: it is written only once that API answered.
  if (observation.state !== "ready") return observation;
  const join = await ensureJoinCredential(pass, pki, server, kubeconfig);
  return join === undefined ? observation : { ...observation, join };
}

// A Private tenant's nodes join with a bootstrap token: the host Secret <tenant>-join holds it
// (written first, so it is the record of which token is current) and the tenant API authenticates
// it (kube-system/bootstrap-token-<id>, ensured from the host Secret on every pass). A tenant in
// another mode has neither: its tokens are revoked in the tenant API, then the host Secret goes.
// Returns what is still missing, for the condition; the pass retries it after JOIN_RETRY_MS.
async function ensureJoinCredential(
  pass: Pass,
  pki: TenantPki,
  server: string,
  kubeconfig: string,
): Promise<string | undefined> {
  const { deps, tenant, namespace } = pass;
  const name = joinSecretName(tenant);
  const stored = await deps.objects.get<V1Secret>("v1", "Secret", name, namespace);
  if (stored) haltIfForeign(pass, stored, "Secret");
  const now = deps.now?.() ?? new Date();
  const plan = planJoinCredential({
    mode: isolationModeOf(pass.tc.spec),
    stored,
    server,
    serverCaPem: pki.serverCa.certPem,
    now,
  });
  if (plan.action === "none") return undefined;
  const tokens = new BootstrapTokens((deps.tenantClients ?? tenantClients).for(tenant, kubeconfig).client);
  const retry = (what: string, err: unknown) => {
    deps.wakeAfter?.(tenant, JOIN_RETRY_MS);
    return `${what}: the tenant API did not take it (${describe(err)}); retrying in ${JOIN_RETRY_MS / 1000} s`;
  };

  if (plan.action === "remove") {
    let revoked: string[];
    try {
      revoked = await tokens.revokeAll();
    } catch (err) {
      return retry(
        `the join credential of Secret ${name} is not revoked yet (spec.isolation.mode is ${plan.mode})`,
        err,
      );
    }
    for (const id of revoked) await publishTokenDecision(pass, "Delete", id, joinReasons.tokenRevoked(plan.mode, id));
    await deleteTracked(
      deps.objects,
      { apiVersion: "v1", kind: "Secret", name, namespace },
      {
        decide: pass.decide,
        reason: joinReasons.removed(plan.mode),
        anchor: pass.raw,
        ifResourceVersion: stored?.metadata?.resourceVersion,
      },
    );
    return undefined;
  }

  const credential: JoinCredential = plan.credential;
  if (plan.action === "issue" || plan.action === "rewrite") {
    const desired = joinSecret(tenant, credential);
    const reason =
      plan.action === "issue" ? joinReasons.issued(credential, plan.why) : joinReasons.rewritten(credential, plan.why);
    if (stored) await updateOwned(pass, stored, desired, reason);
    else await createOrHalt(pass, desired, reason);
  }
  let action: "Create" | "Update" | undefined;
  try {
    action = await tokens.ensure(tenant, credential);
  } catch (err) {
    return retry(`bootstrap token ${credential.token.id} of Secret ${name} is not in the tenant API yet`, err);
  }
  if (action !== undefined)
    await publishTokenDecision(
      pass,
      action,
      credential.token.id,
      action === "Create" ? joinReasons.tokenCreated(tenant, credential) : joinReasons.tokenReplaced(credential),
    );
  // Rotation is the one moment no watch event marks.
  const renewAt = credential.expiresAt.getTime() - JOIN_TOKEN_TTL_MS / 2;
  deps.wakeAfter?.(tenant, Math.max(renewAt - now.getTime(), 1_000));
  return undefined;
}

// A Decision about the tenant API's bootstrap token Secret; the host object it belongs with is the join Secret.
async function publishTokenDecision(
  pass: Pass,
  action: "Create" | "Update" | "Delete",
  id: string,
  reason: string,
): Promise<void> {
  await pass.deps.publish({
    tenant: pass.tenant,
    action,
    kind: "Secret",
    tenantRef: { namespace: BOOTSTRAP_TOKEN_NAMESPACE, name: bootstrapTokenSecretName(id) },
    hostRef: { namespace: pass.namespace, name: joinSecretName(pass.tenant) },
    reason,
  });
}

async function ensureFinalizer(pass: Pass): Promise<void> {
  if (pass.raw.metadata?.finalizers?.includes(FINALIZER)) return;
  await pass.deps.objects.apply({
    apiVersion: API_VERSION,
    kind: KIND_TENANT_CLUSTER,
    metadata: { name: pass.tenant, finalizers: [FINALIZER] },
  });
}

// The provisioner reads the profile itself (rather than waiting for the isolation service) so
// the namespace is born with its Pod Security labels and the control plane can be checked
// against the profile's quota and limits before it is created.
async function readIsolation(pass: Pass): Promise<Isolation> {
  const refName = pass.tc.spec.isolationProfileRef?.name;
  const found = refName ? await pass.deps.objects.get(API_VERSION, KIND_ISOLATION_PROFILE, refName) : undefined;
  const choice = chooseIsolationProfile(refName, found);
  const compiled = compileIsolation({
    tenant: pass.tenant,
    hostNamespace: pass.namespace,
    profile: choice.profile,
    controlPlane: pass.tc.spec.controlPlane,
    ...(choice.profileName ? { profileName: choice.profileName } : {}),
  });
  const source = choice.problem
    ? "the lockdown profile"
    : refName
      ? `IsolationProfile ${refName}`
      : "the built-in isolation profile";
  return { choice, compiled, source };
}

// Created once, labelled and annotated with this TenantCluster's uid, with the profile's Pod
// Security labels already in place. An existing namespace is never written to: its Pod Security
// labels belong to the isolation service, and one that is not ours is a collision.
async function ensureNamespace(pass: Pass, isolation: Isolation): Promise<void> {
  const existing = await pass.deps.objects.get("v1", "Namespace", pass.namespace);
  if (existing) {
    const ownership = namespaceOwnership(existing, pass.tenant, pass.uid);
    if (ownership.owner === "foreign") {
      throw new Halt({
        state: "foreign-object",
        message: describeForeign({ kind: "Namespace", name: pass.namespace }, ownership.why),
      });
    }
    if (existing.metadata?.deletionTimestamp) {
      throw new TransientError(`host namespace ${pass.namespace} is still being deleted`, {
        code: "NamespaceTerminating",
        retryAfterMs: NOT_READY_POLL_MS,
      });
    }
    // A Create recorded on it by a pass that died before publishing goes out now.
    await publishRecordedDecision(pass.deps.objects, existing, pass.decide);
    return;
  }
  await createOrHalt(
    pass,
    hostNamespaceManifest(pass.tenant, pass.uid, isolation.compiled.namespaceLabels),
    `host namespace for TenantCluster ${pass.tenant}, with Pod Security labels from ${isolation.source}`,
  );
}

// Right after the namespace, so the services (this one included) may act in it.
async function ensureServiceAccess(pass: Pass): Promise<void> {
  const foreign = await ensureRoleBindings({
    objects: pass.deps.objects,
    decide: pass.decide,
    tenant: pass.tenant,
    tenantCluster: pass.raw,
    grants: pass.deps.roleBindings ?? [],
  });
  if (foreign !== undefined) throw new Halt({ state: "foreign-object", message: foreign });
  // From here on the provisioner may list and watch in the namespace: its reads there come from caches.
  pass.deps.namespaceWatches?.watchNamespace(pass.namespace);
}

// Checked before anything runs in the namespace, so a profile that would refuse the control
// plane (or its Services) is named instead of failing writes being retried without a word.
function checkProfileAdmitsControlPlane(pass: Pass, isolation: Isolation): void {
  const rules = controlPlaneBlockers(isolation.choice.profile, controlPlaneStatefulSet(pass.tc));
  if (rules.length > 0) throw new Halt({ state: "blocked-by-isolation", source: isolation.source, rules });
}

// The PKI is generated once and never replaced by the provisioner: replacing it would
// invalidate every credential of the running tenant. A person deletes the Secret to get a new one.
async function ensurePki(pass: Pass): Promise<TenantPki> {
  const name = pkiSecretName(pass.tenant);
  const existing = await pass.deps.objects.get<V1Secret>("v1", "Secret", name, pass.namespace);
  if (existing) {
    haltIfForeign(pass, existing, "Secret");
    await publishRecordedDecision(pass.deps.objects, existing, pass.decide);
    try {
      return readPkiSecret(existing);
    } catch (err) {
      // A damaged PKI Secret cannot heal by retrying, and regenerating it would cut off
      // every existing credential: say so and wait for a person.
      if (!(err instanceof InvalidPkiSecretError)) throw err;
      throw new Halt({
        state: "invalid-pki",
        error: `${err.message}: restore Secret ${name} or delete it to issue a new PKI (existing kubeconfigs stop working)`,
      });
    }
  }
  const pki = await generateTenantPki(pass.tenant);
  const secret = pkiSecret(pass.tenant, pki);
  await createOrHalt(pass, secret, "tenant PKI: server, client and request-header CAs and the service-account key");
  rememberPkiSecret(secret, pki);
  return pki;
}

// The admin kubeconfig is re-signed when it is missing, points elsewhere, was issued under a
// PKI that has since been replaced, or has lived two thirds of its certificate's lifetime; a
// steady state rewrites nothing.
async function ensureKubeconfig(pass: Pass, pki: TenantPki, server: string): Promise<string> {
  const { deps } = pass;
  pass.facts.kubeconfigObserved = true;
  const name = kubeconfigSecretName(pass.tenant);
  const existing = await deps.objects.get<V1Secret>("v1", "Secret", name, pass.namespace);
  if (existing) haltIfForeign(pass, existing, "Secret");
  const current = existing ? decodeSecretData(existing)[KUBECONFIG_KEY] : undefined;
  const now = deps.now?.() ?? new Date();
  const verdict = judgeKubeconfig(current, {
    server,
    serverCaPem: pki.serverCa.certPem,
    clientCaPem: pki.clientCa.certPem,
    now,
  });
  if (!verdict.renew && current !== undefined) {
    pass.facts.kubeconfigExpiresAt = verdict.expiresAt;
    return current;
  }
  const admin = await signClientCertificate(
    pki.clientCa,
    {
      commonName: ADMIN_USER,
      organizations: ["system:masters"],
      lifetimeMs: deps.adminCertLifetimeMs ?? DEFAULT_ADMIN_CERT_LIFETIME_MS,
    },
    now,
  );
  const kubeconfig = buildKubeconfig({
    tenant: pass.tenant,
    server,
    caPem: pki.serverCa.certPem,
    certPem: admin.certPem,
    keyPem: admin.keyPem,
  });
  const why = verdict.renew ? verdict.why : "no kubeconfig yet";
  const desired = kubeconfigSecret({ tenant: pass.tenant, kubeconfig });
  if (existing) {
    await updateOwned(pass, existing, desired, `admin kubeconfig for ${server} (${why})`);
  } else {
    await createOrHalt(pass, desired, `admin kubeconfig for ${server}`);
  }
  pass.facts.kubeconfigExpiresAt = issuedKubeconfigExpiry(kubeconfig, admin, {
    server,
    serverCaPem: pki.serverCa.certPem,
    clientCaPem: pki.clientCa.certPem,
  });
  return kubeconfig;
}

// The StatefulSet is created only once the namespace is isolated for the current spec, so no
// control-plane pod ever runs there before the profile's quota, limits and policies.
async function ensureControlPlane(
  pass: Pass,
  isolation: Isolation,
  pki: TenantPki,
  lbAddresses: readonly string[],
): Promise<V1StatefulSet> {
  const existing = await pass.deps.objects.get<V1StatefulSet>(
    "apps/v1",
    "StatefulSet",
    STATEFULSET_NAME,
    pass.namespace,
  );
  if (existing) haltIfForeign(pass, existing, "StatefulSet");
  const legacy = legacyControlPlaneSelector(pass.tenant);
  const keepLegacy = existing !== undefined && sameLabels(existing.spec?.selector?.matchLabels, legacy);
  const desired = controlPlaneStatefulSet(pass.tc, {
    loadBalancerAddresses: lbAddresses,
    pkiFingerprint: pkiFingerprint(pki),
    ...(keepLegacy ? { selector: legacy } : {}),
  });
  const reason = `k3s control plane (${pass.tc.spec.controlPlane.image}, ${pass.tc.spec.controlPlane.storage.size} volume)`;
  if (!existing) {
    const isolated = findCondition(pass.raw.status?.conditions, CONDITION_ISOLATION_APPLIED);
    if (!isCurrentAndTrue(isolated, pass.generation)) {
      throw new Halt({
        state: "waiting-for-isolation",
        detail: isolated ? `${isolated.reason}: ${isolated.message}` : "the isolation service has not reported yet",
      });
    }
    return createOrHalt(pass, desired, reason);
  }
  const refused = immutableChanges(existing, desired);
  if (refused.length > 0) throw new Halt({ state: "immutable-change", reasons: refused });
  return updateOwned(pass, existing, desired, reason);
}

async function observeControlPlane(
  pass: Pass,
  sts: V1StatefulSet,
  kubeconfig: string,
): Promise<ControlPlaneObservation> {
  const readyReplicas = sts.status?.readyReplicas ?? 0;
  if (readyReplicas < 1) return waitingForPod(pass, sts, readyReplicas);
  if (pass.tc.spec.controlPlane.expose.loadBalancer.enabled && !pass.facts.externalEndpoint)
    return { state: "waiting-for-load-balancer" };
  const answer = (pass.deps.apiProbes ?? apiProbes).take(pass.tenant, kubeconfig, pass.deps.wake);
  // The probe runs beside the passes; its end wakes the next one, which takes the answer.
  if (answer === undefined) throw new ProbeRunning();
  if (answer.ok) return { state: "ready", server: answer.server };
  // Only the tenant's API is asked again; the pod comes from the cache.
  const pod = (await controlPlanePods(pass, sts)).find((p) => p.metadata?.name === CONTROL_PLANE_POD);
  pass.facts.probeAgainMs = apiProbeRetryMs(pod, (pass.deps.now?.() ?? new Date()).getTime());
  return { state: "api-unreachable", error: answer.error };
}

async function waitingForPod(pass: Pass, sts: V1StatefulSet, readyReplicas: number): Promise<ControlPlaneObservation> {
  const age = Date.now() - new Date(sts.metadata?.creationTimestamp ?? Date.now()).getTime();
  if (age < POD_LOOK_AFTER_MS) {
    pass.deps.wakeAfter?.(pass.tenant, POD_LOOK_AFTER_MS - age);
    return { state: "waiting-for-pod", readyReplicas };
  }
  const pods = await controlPlanePods(pass, sts);
  return { state: "waiting-for-pod", readyReplicas, pod: describePodWait(pods, CONTROL_PLANE_POD) };
}

// Listed, not read by name: the cache answers a list that carries its own selector terms, and
// the provisioner may list pods but not get them.
async function controlPlanePods(pass: Pass, sts: V1StatefulSet): Promise<V1Pod[]> {
  const selector = Object.entries({
    ...(sts.spec?.selector?.matchLabels ?? controlPlaneSelector(pass.tenant)),
    [LABEL_MANAGED_BY]: MANAGED_BY,
    [LABEL_CONTROL_PLANE]: "true",
  })
    .map(([key, value]) => `${key}=${value}`)
    .join(",");
  return pass.deps.objects.list<V1Pod>("v1", "Pod", { namespace: pass.namespace, labelSelector: selector });
}

// Writes the status from the observation (nothing when it already shows it); a person's problem
// is also a Warning. A tenant that is merely not ready yet is not looked at again on a timer:
// the watch on its StatefulSet, Services and TenantCluster wakes the next pass (see main.ts),
// and only an unreachable tenant API, which no host watch can see, is probed again later.
async function report(pass: Pass, observation: ControlPlaneObservation): Promise<void> {
  const { deps, tenant } = pass;
  const nowMs = (deps.now?.() ?? new Date()).getTime();
  // Held only where a timer can write it later: a condition is never left out for good.
  const holdFor = deps.wakeAfter ? firstReportHoldMs(observation, pass.raw, nowMs) : 0;
  if (holdFor > 0) {
    deps.wakeAfter?.(tenant, holdFor);
    return;
  }
  const condition = heldUnreachableCondition(
    controlPlaneReadyInput(observation, pass.generation),
    pass.raw,
    deps.objects.fieldManager,
    nowMs,
  );
  const current = pass.raw.status;
  const fields = provisionerStatusFields({
    tenant,
    generation: pass.generation,
    condition,
    current,
    // A pass halted before a step keeps what the last pass that ran it reported.
    kubeconfigWritten: pass.facts.kubeconfigObserved
      ? pass.facts.kubeconfigExpiresAt !== undefined
      : current?.kubeconfigSecretRef !== undefined,
    kubeconfigExpiresAt: pass.facts.kubeconfigObserved
      ? pass.facts.kubeconfigExpiresAt
      : current?.kubeconfigExpiresAt
        ? new Date(current.kubeconfigExpiresAt)
        : undefined,
    externalEndpoint: pass.facts.apiObserved ? pass.facts.externalEndpoint : current?.externalEndpoint,
  });
  const unchanged = statusUpToDate(pass.raw, deps.objects.fieldManager, condition, fields);
  if (!unchanged) await applyTenantStatus(deps.objects, tenant, pass.raw.status?.conditions, condition, fields);
  if (observation.state === "ready" && fields.phase === "Ready" && current?.phase !== "Ready")
    await deps.events.record(readyEvent(tenant, pass.uid, observation.server, endpointFor(tenant)));
  if (needsAttention(observation)) {
    // Said once per change of what is wrong; the Event recorder folds repeats anyway.
    if (!unchanged)
      await deps.events.record({
        regarding: tenantRegarding(tenant, pass.uid),
        type: "Warning",
        reason: condition.reason,
        message: condition.message,
      });
    return;
  }
  if (observation.state === "api-unreachable")
    throw new TransientError(`tenant ${tenant} not ready: ${condition.message}`, {
      code: "NotReady",
      retryAfterMs: pass.facts.probeAgainMs ?? API_PROBE_RETRY_MS,
    });
}

// Creates or updates an object in the host namespace that must be ours.
async function ensureOwned<T extends KubernetesObject>(pass: Pass, desired: T, reason: string): Promise<T> {
  const meta = desired.metadata!;
  const existing = await pass.deps.objects.get<T>(desired.apiVersion!, desired.kind!, meta.name!, meta.namespace);
  if (!existing) return createOrHalt(pass, desired, reason);
  haltIfForeign(pass, existing, desired.kind!);
  return updateOwned(pass, existing, desired, reason);
}

function haltIfForeign(pass: Pass, existing: KubernetesObject, kind: string): void {
  const ownership = objectOwnership(existing, pass.tenant);
  if (ownership.owner === "ours") return;
  throw new Halt({
    state: "foreign-object",
    message: describeForeign(
      { kind, name: existing.metadata?.name ?? "?", namespace: existing.metadata?.namespace },
      ownership.why,
    ),
  });
}

// Create, never apply, for an object that was absent: a create fails if anything took the name
// in the meantime, so tenantplane never writes into an object that someone else just made.
async function createOrHalt<T extends KubernetesObject>(pass: Pass, desired: T, reason: string): Promise<T> {
  const { objects } = pass.deps;
  // The object carries its Create Decision, so a crash between the write and the publish is
  // caught up by the next pass (publishRecordedDecision).
  // Created with its create entry; the first apply that changes it hands the fields over
  // (updateOwned), so the many objects that never change cost one write, not two.
  const created = await createTracked(objects, desired, { decide: pass.decide, reason });
  if (!created) {
    // The caches hold only tenantplane's objects, so a name held by something else reads as
    // absent: the create's 409 says otherwise, and a fresh read tells whose it is.
    const meta = desired.metadata!;
    const held = await objects.get(desired.apiVersion!, desired.kind!, meta.name!, meta.namespace, { fresh: true });
    if (held && desired.kind === "Namespace") {
      const ownership = namespaceOwnership(held, pass.tenant, pass.uid);
      if (ownership.owner === "foreign")
        throw new Halt({
          state: "foreign-object",
          message: describeForeign({ kind: "Namespace", name: meta.name! }, ownership.why),
        });
    } else if (held) {
      haltIfForeign(pass, held, desired.kind!);
    }
    throw new TransientError(`${desired.kind} ${desired.metadata?.name} appeared while being created; looking again`, {
      code: "Conflict",
      retryAfterMs: 500,
    });
  }
  return created;
}

// Each attempt rewrites managedFields as last read, pinned to that version; a controller's
// write in between means reading again.
async function dropCreateEntry<T extends KubernetesObject>(objects: Objects, object: T): Promise<T> {
  let current: T | undefined = object;
  for (let attempt = 0; attempt < 3 && current; attempt++) {
    const kept = withoutCreateEntry(current.metadata?.managedFields, objects.fieldManager);
    if (!kept) return current;
    const meta: V1ObjectMeta = current.metadata ?? {};
    const { name, namespace, resourceVersion } = meta;
    try {
      return await objects.mergePatch<T>(
        { apiVersion: object.apiVersion, kind: object.kind, metadata: { name, ...(namespace ? { namespace } : {}) } },
        { metadata: { resourceVersion, managedFields: kept } },
      );
    } catch (err) {
      if (httpStatusOf(err) !== 409) throw err;
      current = await objects.get<T>(object.apiVersion!, object.kind!, name!, namespace, { fresh: true });
    }
  }
  return current ?? object;
}

// Server-side apply pinned to the version that was read and judged ours: if the object changed
// since (another owner took the name, someone edited it) the write fails with a conflict and
// the pass starts over, instead of landing on an object nobody checked.
async function updateOwned<T extends KubernetesObject>(
  pass: Pass,
  existing: T,
  desired: T,
  reason: string,
): Promise<T> {
  let after: T;
  try {
    // Tracked: the write records its Decision on the object and publishes it (nothing when the
    // apply changes none of the fields this manager owns). An object still carrying its create's
    // entry is handed over to apply first, so the apply owns what the create set and removes
    // what it no longer sends; if the cache has moved past the version judged here, the
    // pinned apply fails with a conflict and the pass starts over.
    ({ object: after } = await applyTracked(pass.deps.objects, desired, {
      decide: pass.decide,
      reason,
      ifResourceVersion: existing.metadata?.resourceVersion,
    }));
  } catch (err) {
    if (httpStatusOf(err) !== 409) throw err;
    throw new TransientError(`${desired.kind} ${desired.metadata?.name} changed while being updated; looking again`, {
      code: "Conflict",
      retryAfterMs: 500,
      cause: err,
    });
  }
  if (withoutCreateEntry(after.metadata?.managedFields, pass.deps.objects.fieldManager)) {
    // Written by an older version as both a create entry and an apply entry: the apply's
    // alone owns the fields from now on.
    const applied = after;
    after = await dropCreateEntry(pass.deps.objects, applied).catch((err: unknown) => {
      if (httpStatusOf(err) === 409) return applied;
      throw err;
    });
  }
  return after;
}

function apiServiceReason(tc: TenantCluster): string {
  const lb = tc.spec.controlPlane.expose.loadBalancer;
  return lb.enabled
    ? "tenant API exposed through a LoadBalancer (spec.controlPlane.expose.loadBalancer.enabled)"
    : "tenant API inside the host cluster";
}

function sameLabels(a: Record<string, string> | undefined, b: Record<string, string>): boolean {
  const entries = Object.entries(a ?? {});
  return entries.length === Object.keys(b).length && entries.every(([k, v]) => b[k] === v);
}

// Bad input is not retried: the condition and a Warning say what to fix, and the next spec
// change brings a new message.
async function refuseSpec(raw: RawTenant, message: string, deps: ProvisionerDeps): Promise<void> {
  const tenant = raw.metadata!.name!;
  const reason = "InvalidSpec";
  await applyTenantStatus(
    deps.objects,
    tenant,
    raw.status?.conditions as Condition[] | undefined,
    {
      type: CONDITION_CONTROL_PLANE_READY,
      status: "False",
      reason,
      message,
      observedGeneration: raw.metadata?.generation,
    },
    { phase: "Failed" },
    raw,
  );
  await deps.events.record({ regarding: tenantRegarding(tenant, raw.metadata?.uid), type: "Warning", reason, message });
}
