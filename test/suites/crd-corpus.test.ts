import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { KubernetesObjectApi, type KubernetesObject } from "@kubernetes/client-node";
import { crdManifests, parseIsolationProfile, parseSyncPolicy, parseTenantCluster } from "@tenantplane/api";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JsonClient } from "@tenantplane/kube";
import { installCrds, liveProcesses, startHostCluster, trackFailures, type HostCluster } from "../harness/index.js";

const examplesDir = fileURLToPath(new URL("../../examples/", import.meta.url));
const expectErrorAnnotation = "tenantplane.io/expect-error";
const parsers: Record<string, (input: unknown) => unknown> = {
  TenantCluster: parseTenantCluster,
  IsolationProfile: parseIsolationProfile,
  SyncPolicy: parseSyncPolicy,
};

interface Example {
  file: string;
  object: KubernetesObject;
  /** The field the rejection must be about; undefined for valid examples. */
  expectError: string | undefined;
}

function readExamples(dir: string): Example[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith(".yaml"))
    .sort()
    .flatMap((name) =>
      YAML.parseAllDocuments(readFileSync(join(dir, name), "utf8")).map((doc) => {
        const object = doc.toJS() as KubernetesObject;
        return {
          file: join(dir, name).slice(examplesDir.length),
          object,
          expectError: object.metadata?.annotations?.[expectErrorAnnotation],
        };
      }),
    );
}

const valid = readExamples(examplesDir);
const invalid = readExamples(join(examplesDir, "invalid"));

let cluster: HostCluster | undefined;
let objects: KubernetesObjectApi;
const failures = trackFailures();

beforeAll(async () => {
  const started = Date.now();
  cluster = await startHostCluster({ name: "crd-corpus" });
  await installCrds(cluster.kubeConfig, crdManifests());
  // A client made after installation, so its discovery cache knows the new kinds.
  objects = KubernetesObjectApi.makeApiClient(cluster.kubeConfig);
  console.log(`[crd-corpus] host cluster with CRDs ready in ${Date.now() - started}ms`);
});

afterAll(async () => {
  await cluster?.stop({ keepLogs: failures.failed() });
  expect(liveProcesses()).toEqual([]);
});

type Verdict = { accepted: true; object: unknown } | { accepted: false; message: string };

async function apiServerVerdict(object: KubernetesObject): Promise<Verdict> {
  try {
    return { accepted: true, object: await objects.create(object, undefined, "All") };
  } catch (error) {
    const { code, body } = error as { code?: number; body?: unknown };
    // Only a validation answer counts; anything else (discovery, transport) is a broken test.
    if (code !== 422) throw error;
    const status = (typeof body === "string" ? JSON.parse(body) : body) as { message: string };
    return { accepted: false, message: status.message };
  }
}

function zodVerdict(object: KubernetesObject): Verdict {
  const parse = parsers[object.kind ?? ""];
  if (parse === undefined) throw new Error(`no parser for kind ${String(object.kind)}`);
  try {
    return { accepted: true, object: parse(object) };
  } catch (error) {
    return { accepted: false, message: (error as Error).message };
  }
}

describe("example corpus", () => {
  it("has valid and invalid examples of every kind, each invalid one naming its field", () => {
    const kinds = (examples: Example[]) => new Set(examples.map((e) => e.object.kind));
    expect(kinds(valid)).toEqual(new Set(Object.keys(parsers)));
    expect(kinds(invalid)).toEqual(new Set(Object.keys(parsers)));
    expect(valid.filter((e) => e.expectError !== undefined)).toEqual([]);
    expect(invalid.filter((e) => !e.expectError)).toEqual([]);
  });

  it.each(valid.map((e) => [e.file, e] as const))(
    "%s is accepted by the API server and the zod parser",
    async (_file, example) => {
      const api = await apiServerVerdict(example.object);
      const zod = zodVerdict(example.object);
      expect(api).toMatchObject({ accepted: true });
      expect(zod).toMatchObject({ accepted: true });
    },
  );

  it.each(invalid.map((e) => [e.file, e] as const))(
    "%s is rejected by both, each naming the expected field",
    async (_file, example) => {
      const field = example.expectError ?? "";
      const api = await apiServerVerdict(example.object);
      const zod = zodVerdict(example.object);
      expect(api.accepted, "API server verdict").toBe(false);
      expect(zod.accepted, "zod verdict").toBe(false);
      if (!api.accepted) expect(api.message).toContain(field);
      if (!zod.accepted) expect(zod.message).toContain(field);
    },
  );
});

describe("the CRDs as kubectl sees them", () => {
  // Every short name and plural the API server serves, built-in and ours, as `kubectl api-resources` lists them.
  async function servedNames(): Promise<{ group: string; names: string[] }[]> {
    const rest = new JsonClient(cluster!.kubeConfig);
    const out: { group: string; names: string[] }[] = [];
    const core = await rest.request<ResourceList>("GET", "/api/v1");
    out.push({ group: "", names: core.resources.flatMap((r) => [r.name, ...(r.shortNames ?? [])]) });
    const groups = await rest.request<{ groups: { preferredVersion: { groupVersion: string } }[] }>("GET", "/apis");
    for (const g of groups.groups) {
      const list = await rest.request<ResourceList>("GET", `/apis/${g.preferredVersion.groupVersion}`);
      out.push({
        group: g.preferredVersion.groupVersion.split("/")[0]!,
        names: list.resources.flatMap((r) => [r.name, ...(r.shortNames ?? [])]),
      });
    }
    return out;
  }

  it("gives short names that no built-in resource uses", async () => {
    const served = await servedNames();
    const others = new Set(served.filter((g) => g.group !== "tenantplane.io").flatMap((g) => g.names));
    const ours = crdManifests().flatMap(
      (crd) => (crd as unknown as { spec: { names: { shortNames?: string[] } } }).spec.names.shortNames ?? [],
    );
    expect(ours).toEqual(["tc", "isoprof", "sp"]);
    expect(ours.filter((name) => others.has(name))).toEqual([]);
    // `ip` is the built-in IPAddress kind's short name: taking it made `kubectl get ip` ambiguous.
    expect(others.has("ip")).toBe(true);
  });
});

interface ResourceList {
  resources: { name: string; shortNames?: string[] }[];
}
