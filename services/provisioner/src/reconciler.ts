import {
  VersionApi,
  type KubernetesObject,
  type V1Secret,
  type V1Service,
  type V1StatefulSet,
} from "@kubernetes/client-node";
import {
  API_VERSION,
  CONDITION_CONTROL_PLANE_READY,
  KIND_TENANT_CLUSTER,
  ValidationError,
  parseTenantCluster,
  type Condition,
  type TenantCluster,
  type TenantClusterStatus,
} from "@tenantplane/api";
import { kubeConfigFromString, type EventRecorder, type Objects } from "@tenantplane/kube";
import { hostNamespaceFor } from "@tenantplane/mapping";
import type { PlannedDecision } from "@tenantplane/messaging";
import { TransientError, describe as describeError, type Logger } from "@tenantplane/runtime";
import {
  applyTenantStatus,
  applyTracked as trackedApply,
  changeOf,
  tenantDecider,
  tenantRegarding,
  type Decide,
} from "@tenantplane/service";
import {
  KUBECONFIG_KEY,
  STATEFULSET_NAME,
  apiService,
  controlPlaneStatefulSet,
  endpointFor,
  externalEndpointFrom,
  headlessService,
  hostNamespaceManifest,
  immutableChanges,
  kubeconfigSecretName,
  loadBalancerAddresses,
  pkiSecretName,
} from "./control-plane.js";
import { buildKubeconfig, kubeconfigSecret } from "./kubeconfig.js";
import { InvalidPkiSecretError, generateTenantPki, signClientCertificate, type TenantPki } from "./pki.js";
import { pkiSecret, readPkiSecret } from "./pki-secret.js";
import {
  CONTROL_PLANE_REASONS,
  controlPlaneReadyInput,
  provisionerStatusFields,
  type ControlPlaneObservation,
} from "./plan-status.js";
import { decodeSecretData } from "./secret-data.js";

/** The finalizer that holds a TenantCluster until everything created for it is gone. */
export const FINALIZER = "tenantplane.io/teardown";
const ADMIN_USER = "tenantplane-admin";
const READY_PROBE_TIMEOUT_MS = 5_000;
// How often a tenant that is not Ready yet is looked at again.
const NOT_READY_POLL_MS = 3_000;

/** What the provisioner needs from the outside world. */
export interface ProvisionerDeps {
  objects: Objects;
  events: EventRecorder;
  publish: (decision: PlannedDecision) => Promise<void>;
  logger: Logger;
}

/**
 * Converges one tenant's control plane with the current TenantCluster, re-read
 * from the API on every call (the message is only a key), and is idempotent.
 * Throws TransientError while the tenant is not Ready yet, so the message is
 * redelivered with backoff until it is: readiness is polled level-triggered.
 */
export async function reconcileTenant(tenant: string, deps: ProvisionerDeps): Promise<void> {
  const raw = await deps.objects.get<KubernetesObject & { status?: TenantClusterStatus }>(
    API_VERSION,
    KIND_TENANT_CLUSTER,
    tenant,
  );
  if (!raw) {
    // Gone without our finalizer having run (e.g. force-removed): clean up anyway.
    await teardown(tenant, undefined, deps);
    return;
  }
  const conditions = raw.status?.conditions;
  if (raw.metadata?.deletionTimestamp) {
    await teardown(tenant, raw, deps);
    return;
  }

  let tc: TenantCluster;
  try {
    tc = parseTenantCluster(raw);
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    await refuse(raw, conditions, "InvalidSpec", err.message, deps);
    return;
  }
  const generation = tc.metadata.generation ?? 0;
  const namespace = hostNamespaceFor(tenant);
  const decide = tenantDecider(tenant, deps.publish);
  const applyTracked = async <T extends KubernetesObject>(desired: T, reason: string): Promise<T> => {
    const { action, object } = await trackedApply(deps.objects, desired);
    await decide(action, desired.kind!, desired.metadata!.name!, desired.metadata?.namespace ?? "", reason);
    return object;
  };

  await ensureFinalizer(raw, deps);
  await applyTracked(hostNamespaceManifest(tenant), `host namespace for TenantCluster ${tenant}`);
  let pki: TenantPki;
  try {
    pki = await ensurePki(tenant, deps, decide);
  } catch (err) {
    // A damaged PKI Secret cannot heal by retrying, and regenerating it would cut off
    // every existing credential: say so and wait for a person.
    if (!(err instanceof InvalidPkiSecretError)) throw err;
    await refuse(
      raw,
      conditions,
      CONTROL_PLANE_REASONS.invalidPkiSecret,
      `${err.message}: restore Secret ${pkiSecretName(tenant)} or delete it to issue a new PKI (existing kubeconfigs stop working)`,
      deps,
    );
    return;
  }
  const service = await applyTracked(apiService(tc), apiServiceReason(tc));
  const lbAddresses = loadBalancerAddresses(service as V1Service);
  const externalEndpoint = externalEndpointFrom(service as V1Service);
  await applyTracked(headlessService(tenant), "stable network identity for the k3s StatefulSet");

  const desiredSts = controlPlaneStatefulSet(tc, { loadBalancerAddresses: lbAddresses });
  const existingSts = await deps.objects.get<V1StatefulSet>("apps/v1", "StatefulSet", STATEFULSET_NAME, namespace);
  const refused = existingSts ? immutableChanges(existingSts, desiredSts) : [];
  let sts = existingSts;
  if (refused.length === 0) {
    sts = await deps.objects.apply(desiredSts);
    await decide(
      changeOf(existingSts, sts),
      "StatefulSet",
      STATEFULSET_NAME,
      namespace,
      `k3s control plane (${tc.spec.controlPlane.image}, ${tc.spec.controlPlane.storage.size} volume)`,
    );
  }

  const server = externalEndpoint ?? endpointFor(tenant);
  const kubeconfig = await ensureKubeconfig(tenant, server, pki, deps, decide);
  const status = async (observation: ControlPlaneObservation) => {
    const condition = controlPlaneReadyInput(observation, generation);
    const fields = provisionerStatusFields({
      tenant,
      generation,
      condition,
      current: raw.status,
      kubeconfigWritten: true,
      externalEndpoint,
    });
    await applyTenantStatus(deps.objects, tenant, conditions, condition, fields);
    return condition;
  };

  if (refused.length > 0) {
    const condition = await status({ state: "immutable-change", reasons: refused });
    await deps.events.record({
      regarding: tenantRegarding(tenant, raw.metadata?.uid),
      type: "Warning",
      reason: condition.reason,
      message: condition.message,
    });
    return;
  }
  const condition = await status(await observe(sts, kubeconfig, tc, externalEndpoint));
  if (condition.status !== "True")
    throw new TransientError(`tenant ${tenant} not ready: ${condition.message}`, {
      code: "NotReady",
      retryAfterMs: NOT_READY_POLL_MS,
    });
}

function apiServiceReason(tc: TenantCluster): string {
  const lb = tc.spec.controlPlane.expose.loadBalancer;
  return lb.enabled
    ? "tenant API exposed through a LoadBalancer (spec.controlPlane.expose.loadBalancer.enabled)"
    : "tenant API inside the host cluster";
}

async function ensureFinalizer(raw: KubernetesObject, deps: ProvisionerDeps): Promise<void> {
  if (raw.metadata?.finalizers?.includes(FINALIZER)) return;
  await deps.objects.apply({
    apiVersion: API_VERSION,
    kind: KIND_TENANT_CLUSTER,
    metadata: { name: raw.metadata!.name!, finalizers: [FINALIZER] },
  });
}

// The PKI is generated once and never replaced: replacing it would invalidate
// every credential of the running tenant. Create, not apply, so two racing
// reconciles cannot both write one.
async function ensurePki(tenant: string, deps: ProvisionerDeps, decide: Decide) {
  const namespace = hostNamespaceFor(tenant);
  const name = pkiSecretName(tenant);
  const existing = await deps.objects.get<V1Secret>("v1", "Secret", name, namespace);
  if (existing) return readPkiSecret(existing);
  const pki = await generateTenantPki(tenant);
  try {
    await deps.objects.create(pkiSecret(tenant, pki));
  } catch (err) {
    if ((err as { code?: number }).code === 409) {
      const winner = await deps.objects.get<V1Secret>("v1", "Secret", name, namespace);
      if (winner) return readPkiSecret(winner);
    }
    throw err;
  }
  await decide(
    "Create",
    "Secret",
    name,
    namespace,
    "tenant PKI: server, client and request-header CAs and the service-account key",
  );
  return pki;
}

// A new client certificate is only signed when the kubeconfig is missing or its
// server changed, so a steady state rewrites nothing.
async function ensureKubeconfig(
  tenant: string,
  server: string,
  pki: TenantPki,
  deps: ProvisionerDeps,
  decide: Decide,
): Promise<string> {
  const namespace = hostNamespaceFor(tenant);
  const name = kubeconfigSecretName(tenant);
  const existing = await deps.objects.get<V1Secret>("v1", "Secret", name, namespace);
  const current = existing ? decodeSecretData(existing)[KUBECONFIG_KEY] : undefined;
  if (current && serverOf(current) === server) return current;
  const admin = await signClientCertificate(pki.clientCa, {
    commonName: ADMIN_USER,
    organizations: ["system:masters"],
    validityDays: 365,
  });
  const kubeconfig = buildKubeconfig({
    tenant,
    server,
    caPem: pki.serverCa.certPem,
    certPem: admin.certPem,
    keyPem: admin.keyPem,
  });
  await deps.objects.apply(kubeconfigSecret({ tenant, kubeconfig }));
  await decide(existing ? "Update" : "Create", "Secret", name, namespace, `admin kubeconfig for ${server}`);
  return kubeconfig;
}

function serverOf(kubeconfig: string): string | undefined {
  try {
    return kubeConfigFromString(kubeconfig).getCurrentCluster()?.server;
  } catch {
    return undefined;
  }
}

async function observe(
  sts: V1StatefulSet | undefined,
  kubeconfig: string,
  tc: TenantCluster,
  externalEndpoint: string | undefined,
): Promise<ControlPlaneObservation> {
  const readyReplicas = sts?.status?.readyReplicas ?? 0;
  if (readyReplicas < 1) return { state: "waiting-for-pod", readyReplicas };
  if (tc.spec.controlPlane.expose.loadBalancer.enabled && !externalEndpoint)
    return { state: "waiting-for-load-balancer" };
  const kc = kubeConfigFromString(kubeconfig);
  try {
    await withTimeout(kc.makeApiClient(VersionApi).getCode(), READY_PROBE_TIMEOUT_MS);
    return { state: "ready", server: kc.getCurrentCluster()?.server ?? "" };
  } catch (err) {
    return { state: "api-unreachable", error: describeError(err) };
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

// Bad input is not retried: the condition and a Warning say what to fix, and
// the next spec change brings a new message.
async function refuse(
  raw: KubernetesObject,
  previous: readonly Condition[] | undefined,
  reason: string,
  message: string,
  deps: ProvisionerDeps,
): Promise<void> {
  const tenant = raw.metadata!.name!;
  await applyTenantStatus(
    deps.objects,
    tenant,
    previous,
    {
      type: CONDITION_CONTROL_PLANE_READY,
      status: "False",
      reason,
      message,
      observedGeneration: raw.metadata?.generation,
    },
    { phase: "Failed" },
  );
  await deps.events.record({ regarding: tenantRegarding(tenant, raw.metadata?.uid), type: "Warning", reason, message });
}

/**
 * Deletes the host namespace (and with it everything tenantplane created for the
 * tenant), waits until it is gone, then releases the finalizer.
 */
async function teardown(tenant: string, raw: KubernetesObject | undefined, deps: ProvisionerDeps): Promise<void> {
  const namespace = hostNamespaceFor(tenant);
  const ns = await deps.objects.get("v1", "Namespace", namespace);
  if (ns && ns.metadata?.labels?.["app.kubernetes.io/managed-by"] === "tenantplane") {
    if (!ns.metadata.deletionTimestamp) {
      if (raw)
        await applyTenantStatus(
          deps.objects,
          tenant,
          (raw as { status?: { conditions?: Condition[] } }).status?.conditions,
          {
            type: CONDITION_CONTROL_PLANE_READY,
            status: "False",
            reason: "Terminating",
            message: `deleting host namespace ${namespace}`,
          },
          { phase: "Terminating" },
        );
      await deps.objects.delete({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
      await deps.publish({
        tenant,
        action: "Delete",
        kind: "Namespace",
        tenantRef: { namespace: "", name: tenant },
        hostRef: { namespace: "", name: namespace },
        reason: `TenantCluster ${tenant} is being deleted; the namespace takes every host object of the tenant with it`,
      });
    }
    throw new TransientError(`waiting for host namespace ${namespace} to be deleted`, {
      code: "Terminating",
      retryAfterMs: NOT_READY_POLL_MS,
    });
  }
  if (raw?.metadata?.finalizers?.includes(FINALIZER)) {
    const remaining = raw.metadata.finalizers.filter((f) => f !== FINALIZER);
    await deps.objects.mergePatch(raw, {
      metadata: { resourceVersion: raw.metadata.resourceVersion, finalizers: remaining },
    });
    deps.logger.info({ tenant }, "teardown complete; finalizer released");
  }
}
