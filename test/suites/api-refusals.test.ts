import type { KubernetesObject } from "@kubernetes/client-node";
import { crdManifests } from "@tenantplane/api";
import { Objects } from "@tenantplane/kube";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ServiceFleet,
  installCrds,
  startHostCluster,
  startNats,
  trackFailures,
  waitFor,
  type HostCluster,
  type NatsServer,
} from "../harness/index.js";

// Inputs the CRD schemas accept but the API server refuses once tenantplane turns them into
// host objects. Each must end as a condition False with the server's words, phase Failed and
// a Warning on the TenantCluster, not only as a rejected message in a service log.

const failures = trackFailures();
let host: HostCluster;
let nats: NatsServer;
let fleet: ServiceFleet;
let objects: Objects;

type Condition = { type: string; status: string; reason: string; message: string };
type Tc = KubernetesObject & {
  status?: { phase?: string; hostNamespace?: string; endpoint?: string; conditions?: Condition[] };
};
type Event = KubernetesObject & {
  involvedObject: { kind: string; name: string };
  type: string;
  reason: string;
  message: string;
};

const profile = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: "tenantplane.io/v1alpha1",
  kind: "IsolationProfile",
  metadata: { name },
  spec,
});
const tenantCluster = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: "tenantplane.io/v1alpha1",
  kind: "TenantCluster",
  metadata: { name },
  spec,
});

const readTc = (name: string) => objects.get<Tc>("tenantplane.io/v1alpha1", "TenantCluster", name);

async function waitForCondition(tenant: string, type: string, status: string, reason: string) {
  return waitFor(
    async () => {
      const c = (await readTc(tenant))?.status?.conditions?.find((x) => x.type === type);
      return c?.status === status && c.reason === reason ? c : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 500, description: `${tenant} ${type}=${status} (${reason})` },
  );
}

async function waitForWarning(tenant: string, reason: string, text: string): Promise<Event> {
  return waitFor(
    async () =>
      (await objects.list<Event>("v1", "Event")).find(
        (e) =>
          e.involvedObject.kind === "TenantCluster" &&
          e.involvedObject.name === tenant &&
          e.type === "Warning" &&
          e.reason === reason &&
          e.message.includes(text),
      ),
    { timeoutMs: 60_000, intervalMs: 500, description: `${tenant} Warning ${reason} mentioning ${text}` },
  );
}

beforeAll(async () => {
  [host, nats] = await Promise.all([startHostCluster({ name: "api-refusals" }), startNats()]);
  await installCrds(host.kubeConfig, crdManifests());
  objects = new Objects(host.kubeConfig, "e2e");
  await objects.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: "tenantplane-system" } });
  fleet = new ServiceFleet({
    kubeconfigPath: host.kubeconfigPath,
    natsUrl: nats.url,
    env: { RESYNC_INTERVAL_SECONDS: "30", LEASE_DURATION_SECONDS: "6", POD_NAMESPACE: "tenantplane-system" },
  });
  await Promise.all([fleet.start("watcher"), fleet.start("provisioner"), fleet.start("isolation")]);
});

afterAll(async () => {
  const keepLogs = failures.failed();
  await fleet?.stop({ keepLogs });
  await nats?.stop({ keepLogs });
  await host?.stop({ keepLogs });
});

describe("a write the API server refuses shows on the TenantCluster", () => {
  it("isolation: a LimitRange the API server refuses sets IsolationApplied False, phase Failed and a Warning naming the field", async () => {
    const tenant = "refused-limits";
    // Accepted by the CRD: defaultRequest is below default. Refused by the API server:
    // an extended resource cannot be overcommitted, so the two must be equal.
    const gpu = (request: string) =>
      profile("gpu-overcommit", {
        limitRange: {
          container: {
            default: { cpu: "1", memory: "1Gi", "nvidia.com/gpu": "2" },
            defaultRequest: { cpu: "100m", memory: "128Mi", "nvidia.com/gpu": request },
          },
        },
      });
    await objects.apply(gpu("1"));
    await objects.apply(tenantCluster(tenant, { isolationProfileRef: { name: "gpu-overcommit" } }));

    const field = "spec.limits[0].defaultRequest[nvidia.com/gpu]";
    const condition = await waitForCondition(tenant, "IsolationApplied", "False", "RejectedByApiServer");
    expect(condition.message).toContain(`LimitRange tp-${tenant}/tenantplane-limits`);
    expect(condition.message).toContain(field);
    expect(condition.message).toContain("must equal to defaultRequest value");
    expect(condition.message).toContain("spec.isolationProfileRef");
    await waitFor(async () => (await readTc(tenant))?.status?.phase === "Failed", {
      timeoutMs: 30_000,
      description: `${tenant} phase Failed`,
    });
    const warning = await waitForWarning(tenant, "RejectedByApiServer", field);
    expect(warning.message).toContain("LimitRange");

    // Fixing the profile heals the tenant: the profile change reaches the isolation service.
    await objects.apply(gpu("2"));
    await waitForCondition(tenant, "IsolationApplied", "True", "Applied");
    const stored = await objects.get<KubernetesObject & { spec: { limits: Array<Record<string, unknown>> } }>(
      "v1",
      "LimitRange",
      "tenantplane-limits",
      `tp-${tenant}`,
    );
    expect(stored?.spec.limits[0]).toMatchObject({ defaultRequest: { "nvidia.com/gpu": "2" } });
    // The phase leaves Failed once no condition reports a refusal (the control plane is still starting).
    await waitFor(async () => (await readTc(tenant))?.status?.phase === "Provisioning", {
      timeoutMs: 60_000,
      description: `${tenant} phase back to Provisioning`,
    });
  });

  it("provisioner: a StatefulSet a host quota refuses sets ControlPlaneReady False, phase Failed and a Warning naming the quota", async () => {
    const tenant = "refused-sts";
    // tenantplane's own quota always has room for the control plane (its share comes on top of
    // the profile's numbers); a quota the host's operators keep in the namespace need not. The
    // tenant waits, locked down, for a profile that does not exist yet while that quota goes in.
    await objects.apply(tenantCluster(tenant, { isolationProfileRef: { name: "after-the-ops-quota" } }));
    await waitForCondition(tenant, "IsolationApplied", "False", "ProfileNotFound");
    await objects.apply({
      apiVersion: "v1",
      kind: "ResourceQuota",
      metadata: { name: "ops", namespace: `tp-${tenant}` },
      spec: { hard: { "count/statefulsets.apps": "0" } },
    });
    // Until the quota controller has counted, admission answers "status unknown", not "exceeded".
    await waitFor(
      async () =>
        (
          await objects.get<KubernetesObject & { status?: { hard?: object } }>(
            "v1",
            "ResourceQuota",
            "ops",
            `tp-${tenant}`,
          )
        )?.status?.hard,
      { timeoutMs: 30_000, description: "quota ops counted" },
    );
    await objects.apply(profile("after-the-ops-quota", {}));

    const condition = await waitForCondition(tenant, "ControlPlaneReady", "False", "RejectedByApiServer");
    expect(condition.message).toContain(`StatefulSet tp-${tenant}/k3s`);
    expect(condition.message).toContain("exceeded quota");
    expect(condition.message).toContain("exceeded quota: ops");
    expect(condition.message).toContain("count/statefulsets.apps");
    expect(condition.message).toContain("ResourceQuota ops is not tenantplane's but the host's own");
    const tc = await waitFor(
      async () => {
        const t = await readTc(tenant);
        return t?.status?.phase === "Failed" ? t : undefined;
      },
      { timeoutMs: 30_000, description: `${tenant} phase Failed` },
    );
    // The provisioner's other status fields come with the refusal report, also when it is the
    // provisioner's first (a new tenant's first condition waits for the isolation service).
    expect(tc.status?.hostNamespace).toBe(`tp-${tenant}`);
    expect(tc.status?.endpoint).toBe(`https://k3s.tp-${tenant}.svc:6443`);
    await waitForWarning(tenant, "RejectedByApiServer", "exceeded quota");
  });
});

describe("a control-plane pod that cannot run", () => {
  it("is named in ControlPlaneReady with the scheduler's words, until it runs", async () => {
    const tenant = "unscheduled";
    const node = { apiVersion: "v1", kind: "Node", metadata: { name: host.nodeNames[0] } };
    await objects.mergePatch(node, { spec: { unschedulable: true } });
    try {
      await objects.apply(tenantCluster(tenant, {}));
      const stuck = await waitFor(
        async () => {
          const c = (await readTc(tenant))?.status?.conditions?.find((x) => x.type === "ControlPlaneReady");
          return c?.reason === "WaitingForPod" && c.message.includes("is not scheduled") ? c : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 500, description: `${tenant} ControlPlaneReady naming the unscheduled pod` },
      );
      expect(stuck.status).toBe("False");
      expect(stuck.message).toMatch(
        /^waiting for StatefulSet k3s: 0\/1 pods ready; pod k3s-0 is not scheduled: Unschedulable: .*unschedulable/,
      );
    } finally {
      await objects.mergePatch(node, { spec: { unschedulable: null } });
    }
    // Once the pod runs, the condition moves on to the tenant API (no stand-in answers here).
    await waitForCondition(tenant, "ControlPlaneReady", "False", "ApiServerUnreachable");
  });
});
