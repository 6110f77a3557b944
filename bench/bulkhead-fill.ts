// The big tenant's own client in bench:bulkhead, run as its own process (bench/bulkhead.ts forks
// it): a tenant's kubectl or CI job is not the program timing the other tenants, and a megabyte
// object's serialising and encrypting on the bench's event loop would delay the very watch
// events the bench times. Fills the tenant's `bench` namespace and tells its parent when done.
import { KubeConfig } from "@kubernetes/client-node";
import { resourcePath, type JsonClient } from "@tenantplane/kube";
import { tenantJsonClient } from "../test/harness/index.js";
import { pool } from "./stats.js";

/** What to fill the tenant with: megabyte ConfigMaps, or headless Services and Pods named in them. */
export type FillJob =
  | { kind: "configmaps"; kubeconfigPath: string; tenant: string; count: number; objectBytes: number }
  | { kind: "dns"; kubeconfigPath: string; tenant: string; services: number; pods: number };

const job = JSON.parse(process.argv[2] ?? "") as FillJob;
const kc = new KubeConfig();
kc.loadFromFile(job.kubeconfigPath);
const client = await tenantJsonClient(kc, job.tenant);
if (job.kind === "dns") {
  const services = job.services;
  await pool(
    Array.from({ length: services }, (_, i) => () => createWithRetry(client, "services", headless(i))),
    8,
  );
  await pool(
    Array.from({ length: job.pods }, (_, i) => () => createWithRetry(client, "pods", peerPod(i, services))),
    8,
  );
} else {
  const payload = "x".repeat(job.objectBytes);
  await pool(
    Array.from({ length: job.count }, (_, i) => () => createWithRetry(client, "configmaps", bigConfigMap(i, payload))),
    4,
  );
}
process.send?.("filled");
process.exit(0);

function bigConfigMap(i: number, payload: string): object {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `big-${i}`, namespace: "bench" }, data: { payload } };
}

function headless(i: number): object {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: `s-${i}`, namespace: "bench" },
    spec: { clusterIP: "None", selector: { app: `s-${i}` }, ports: [{ port: 7000 }] },
  };
}

/** Pod i, behind headless Service i mod `services` and named in it by hostname. */
function peerPod(i: number, services: number): object {
  const service = `s-${i % services}`;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: `p-${i}`, namespace: "bench", labels: { app: service } },
    spec: {
      hostname: `p-${i}`,
      subdomain: service,
      automountServiceAccountToken: false,
      // Small enough that the tenant's host quota (limits.cpu and memory) holds every copy.
      containers: [
        {
          name: "app",
          image: "busybox:1.37",
          resources: { requests: { cpu: "1m", memory: "1Mi" }, limits: { cpu: "1m", memory: "1Mi" } },
        },
      ],
    },
  };
}

async function createWithRetry(c: JsonClient, plural: string, body: object): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await c.request("POST", resourcePath("v1", plural, "bench"), { body });
      return;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (attempt > 0 && code === 409) return;
      if ((typeof code === "number" && code < 500 && code !== 429) || attempt >= 8) throw err;
      await new Promise((r) => setTimeout(r, 250 * 2 ** Math.min(attempt, 4)));
    }
  }
}
