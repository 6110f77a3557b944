import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { crdManifests } from "@tenantplane/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  installCrds,
  liveProcesses,
  startHostCluster,
  toolPath,
  trackFailures,
  waitFor,
  type HostCluster,
} from "../harness/index.js";

const run = promisify(execFile);
const failures = trackFailures();
let cluster: HostCluster | undefined;

interface SchemaNode {
  description?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
}

/** The description the CRD gives the field at `path` (`<plural>.<field>...`, arrays walked through as kubectl does). */
function crdDescription(path: string): string {
  const [plural, ...fields] = path.split(".");
  const crd = crdManifests().find(
    (c) => (c as { spec: { names: { plural: string } } }).spec.names.plural === plural,
  ) as { spec: { versions: { schema: { openAPIV3Schema: SchemaNode } }[] } } | undefined;
  let node = crd?.spec.versions[0]?.schema.openAPIV3Schema;
  for (const field of fields) node = (node?.items ?? node)?.properties?.[field];
  if (node?.description === undefined) throw new Error(`the CRD gives ${path} no description`);
  return node.description;
}

const words = (text: string) => text.replace(/\s+/g, " ").trim();

async function kubectlExplain(path: string): Promise<string> {
  const { stdout } = await run(toolPath("cluster"), [
    "kubectl",
    "--kubeconfig",
    cluster!.kubeconfigPath,
    "explain",
    path,
  ]);
  return stdout;
}

beforeAll(async () => {
  cluster = await startHostCluster({ name: "crd-explain" });
  await installCrds(cluster.kubeConfig, crdManifests());
});

afterAll(async () => {
  await cluster?.stop({ keepLogs: failures.failed() });
  expect(liveProcesses()).toEqual([]);
});

describe("kubectl explain on the installed CRDs", () => {
  it.each([
    "tenantclusters.status.phase",
    "tenantclusters.status.conditions",
    "tenantclusters.status.conditions.type",
    "tenantclusters.spec.controlPlane.resources",
    "tenantclusters.spec.controlPlane.resources.requests.cpu",
    "tenantclusters.spec.controlPlane.storage.size",
    "isolationprofiles.spec",
    "isolationprofiles.spec.limitRange.container.max",
    "syncpolicies.spec",
    "syncpolicies.spec.toHost.kind",
  ])("describes %s as the CRD does", async (path) => {
    const wanted = words(crdDescription(path));
    // The API server publishes a new CRD's OpenAPI a moment after it is Established.
    const printed = await waitFor(
      async () => {
        const out = await kubectlExplain(path).catch(() => "");
        return words(out).includes(wanted) ? out : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500, description: `kubectl explain ${path} prints the description` },
    );
    expect(printed).toMatch(/^DESCRIPTION:$/m);
  });

  it("lists every phase under status.phase, each explained", async () => {
    const out = words(await kubectlExplain("tenantclusters.status.phase"));
    for (const phase of ["Pending", "Provisioning", "Ready", "Failed", "Terminating"]) {
      expect(out).toContain(`${phase}:`);
    }
    expect(out).toMatch(/ENUM: Pending Provisioning Ready Failed Terminating/);
  });
});
