import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { KubernetesObject } from "@kubernetes/client-node";
import { JsonClient, KubeApiError, loadKubeConfig, Objects, runWithLeaderElection } from "@tenantplane/kube";
import { createLogger } from "@tenantplane/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import {
  kubeConfigFrom,
  kubeconfigYaml,
  liveProcesses,
  signLeaf,
  startHostCluster,
  trackFailures,
  waitFor,
  type HostCluster,
} from "../harness/index.js";

// A client certificate rotated under a running client. What really rotates: KubeConfig reads a
// kubeconfig file once (loadKubeConfig), so credentials embedded in it never change for a loaded
// client; certificate and key files the kubeconfig names (`client-certificate`, `client-key`,
// like the CA file of the in-cluster config) are read again for every request. The client must
// follow them: new connections with the new identity, the old pool retired.

const failures = trackFailures();
const NAMESPACE = "rotation";
const ALICE = "rotation-alice";
const BOB = "rotation-bob";

let host: HostCluster;
let admin: Objects;
let dir: string;

beforeAll(async () => {
  host = await startHostCluster({ name: "client-rotation" });
  dir = join(host.logsDir, "client-rotation");
  mkdirSync(dir, { recursive: true });
  admin = new Objects(host.kubeConfig, "e2e");
  await admin.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NAMESPACE } });
  await admin.apply({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: "rotation", namespace: NAMESPACE },
    rules: [
      { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch", "create", "patch", "update"] },
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] },
    ],
  } as KubernetesObject);
  for (const user of [ALICE, BOB]) {
    await admin.apply({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: user, namespace: NAMESPACE },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "rotation" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: user }],
    } as KubernetesObject);
  }
});

afterAll(async () => {
  await host?.stop({ keepLogs: failures.failed() });
  expect(liveProcesses()).toEqual([]);
});

/** The user name the API server authenticated the client's request as. */
async function whoami(client: JsonClient): Promise<string | undefined> {
  const review = await client.request<{ status?: { userInfo?: { username?: string } } }>(
    "POST",
    "/apis/authentication.k8s.io/v1/selfsubjectreviews",
    { body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" } },
  );
  return review.status?.userInfo?.username;
}

/** Writes `text` to `path` in one step, as a rotating issuer (kubelet, cert-manager's CSI driver) does. */
function replaceFile(path: string, text: string): void {
  writeFileSync(`${path}.new`, text, { mode: 0o600 });
  renameSync(`${path}.new`, path);
}

/** A client certificate for `user`, signed by the cluster's client CA. */
function clientCertificate(user: string) {
  return signLeaf(host.ca, { commonName: user, usage: "client" });
}

/** The names of the ConfigMaps a watch reports added, as they arrive. */
function addedNames(events: AsyncGenerator<unknown>): { names: string[]; ended: Promise<void> } {
  const names: string[] = [];
  const ended = (async () => {
    for await (const e of events) {
      const event = e as { type?: string; object?: { metadata?: { name?: string } } };
      if (event.type === "ADDED" && event.object?.metadata?.name) names.push(event.object.metadata.name);
    }
  })();
  return { names, ended };
}

const configMap = (name: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: NAMESPACE },
  data: { by: name },
});

const watchPath = `/api/v1/namespaces/${NAMESPACE}/configmaps`;

describe("a client certificate rotated under a running client", () => {
  it("is presented from the next request on by JsonClient, Objects, watches and the leader elector; a watch opened before keeps going", async () => {
    const certFile = join(dir, "client.crt");
    const keyFile = join(dir, "client.key");
    const issue = async (user: string) => {
      const { certPem, keyPem } = await clientCertificate(user);
      // The key first: a request between the two renames fails once (the pair does not match)
      // rather than authenticating with a certificate whose key is gone.
      replaceFile(keyFile, keyPem);
      replaceFile(certFile, certPem);
    };
    await issue(ALICE);
    // Relative file names, resolved against the kubeconfig's directory.
    const kubeconfigPath = join(dir, "kubeconfig");
    writeFileSync(
      kubeconfigPath,
      YAML.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [
          {
            name: "host",
            cluster: {
              server: host.server,
              "certificate-authority-data": Buffer.from(host.caPem).toString("base64"),
            },
          },
        ],
        users: [{ name: "rotating", user: { "client-certificate": "client.crt", "client-key": "client.key" } }],
        contexts: [{ name: "rotating", context: { cluster: "host", user: "rotating" } }],
        "current-context": "rotating",
      }),
      { mode: 0o600 },
    );
    const kc = loadKubeConfig(kubeconfigPath);
    const client = new JsonClient(kc, { userAgent: "client-rotation/1", timeoutMs: 10_000 });
    const objects = new Objects(kc, "client-rotation", { userAgent: "client-rotation/1" });

    expect(await whoami(client)).toBe(ALICE);
    await objects.apply(configMap("by-alice"));

    const stop = new AbortController();
    let leading!: () => void;
    const led = new Promise<void>((resolve) => (leading = resolve));
    const election = runWithLeaderElection(
      {
        kc,
        namespace: NAMESPACE,
        name: "rotation",
        identity: "candidate",
        leaseDurationMs: 4_000,
        renewDeadlineMs: 3_000,
        retryPeriodMs: 250,
        logger: createLogger("client-rotation", "silent"),
      },
      stop.signal,
      async (lost) => {
        leading();
        await new Promise((resolve) => lost.addEventListener("abort", resolve));
      },
    );
    // A leadership lost early fails the wait at once instead of after its timeout.
    const electionEnded = election.then(
      () => "ended",
      (err: unknown) => err,
    );
    await Promise.race([led, electionEnded.then((e) => Promise.reject(e as Error))]);

    const watches = new AbortController();
    const before = addedNames(client.stream(watchPath, { watch: true }, watches.signal));
    await waitFor(() => before.names.includes("by-alice"), { description: "the first watch open" });
    await admin.create(configMap("before"));
    await waitFor(() => before.names.includes("before"), { description: "the first watch to see ConfigMap before" });

    // Rotation: Bob's certificate in the same files, and Alice loses every right in the namespace,
    // so each request that succeeds from here on was made as Bob.
    await issue(BOB);
    const rotatedAt = Date.now();
    await admin.delete({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: ALICE, namespace: NAMESPACE },
    });
    const { certPem, keyPem } = await clientCertificate(ALICE);
    const alice = new JsonClient(kubeConfigFrom({ server: host.server, caPem: host.caPem, certPem, keyPem }));
    const refused = await waitFor(
      () =>
        alice.request("GET", watchPath).then(
          () => false,
          (err: unknown) => err,
        ),
      { description: "Alice's binding gone from the authorizer" },
    );
    expect(refused).toBeInstanceOf(KubeApiError);
    expect((refused as KubeApiError).code).toBe(403);
    expect((refused as KubeApiError).message).toMatch(
      new RegExp(`^GET ${watchPath}: HTTP 403: configmaps is forbidden: User "${ALICE}" cannot list`),
    );
    alice.close();

    expect(await whoami(client)).toBe(BOB);
    await objects.apply(configMap("by-bob"));
    expect((await objects.get("v1", "ConfigMap", "by-bob", NAMESPACE))?.metadata?.name).toBe("by-bob");

    const after = addedNames(client.stream(watchPath, { watch: true }, watches.signal));
    await waitFor(() => after.names.includes("by-bob"), { description: "the second watch open" });
    await admin.create(configMap("after"));
    // The watch opened before the rotation keeps its (Alice's) connection and still delivers.
    await waitFor(() => before.names.includes("after") && after.names.includes("after"), {
      description: "both watches to see ConfigMap after",
    });
    // (kube-root-ca.crt is the controller manager's, in every namespace.)
    expect(before.names.filter((n) => n !== "kube-root-ca.crt")).toEqual(["by-alice", "before", "by-bob", "after"]);

    // The elector renewed as Bob for longer than its renew deadline: as Alice every renewal
    // would have been refused, and leadership lost within 3 s.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const lease = await admin.get<KubernetesObject & { spec?: { holderIdentity?: string; renewTime?: string } }>(
      "coordination.k8s.io/v1",
      "Lease",
      "rotation",
      NAMESPACE,
    );
    expect(lease?.spec?.holderIdentity).toBe("candidate");
    expect(Date.parse(lease?.spec?.renewTime ?? "")).toBeGreaterThan(rotatedAt + 2_000);
    stop.abort();
    expect(await electionEnded).toBe("ended");

    watches.abort();
    await Promise.all([before.ended, after.ended]);
    client.close();
  });

  it("embedded in the kubeconfig is read once: rewriting the file changes nothing for a loaded client", async () => {
    const path = join(dir, "embedded-kubeconfig");
    const write = async (user: string) =>
      replaceFile(path, kubeconfigYaml({ server: host.server, caPem: host.caPem, ...(await clientCertificate(user)) }));
    await write(ALICE);
    const client = new JsonClient(loadKubeConfig(path));
    expect(await whoami(client)).toBe(ALICE);
    await write(BOB);
    expect(await whoami(client)).toBe(ALICE);
    // Loaded again (a restart), the file says Bob.
    expect(await whoami(new JsonClient(loadKubeConfig(path)))).toBe(BOB);
    client.close();
  });
});
