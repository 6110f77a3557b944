import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { DecisionSchema } from "@tenantplane/messaging";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { runCli } from "./cli.js";
import { defaultSyncPolicySpec } from "@tenantplane/api";
import { defaultHostRules, plan, PRIVATE_PLACEMENT, privateModeReason, withPlacement } from "@tenantplane/sync";
import { notReadyNote, podNetworkWrites } from "./explain-sync.js";
import type { CliIo } from "./cli-io.js";

const examples = fileURLToPath(new URL("../../../examples/tenant/", import.meta.url));
const NOW = new Date("2026-05-01T12:00:00.000Z");

/** Runs the CLI in memory: files come from `files` first, then the disk; `-` reads `stdin`. */
async function cli(argv: string[], files: Record<string, string> = {}, stdin = "") {
  let stdout = "";
  let stderr = "";
  const io: CliIo = {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    readFile: async (path) => (path === "-" ? stdin : (files[path] ?? (await readFile(path, "utf8")))),
    now: () => NOW,
  };
  const code = await runCli(argv, io);
  return { code, stdout, stderr };
}

const explain = (...args: string[]) => cli(["explain-sync", "--offline", "--tenant", "dev", ...args]);
const workloads = `${examples}workloads.yaml`;

describe("explain-sync on examples/tenant/workloads.yaml", () => {
  it("prints a table with a row per object", async () => {
    const { code, stdout, stderr } = await explain("-f", workloads);
    expect(code).toBe(0);
    expect(stderr).toBe("");
    const lines = stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^KIND +VIRTUAL +HOST +HASHED +ACTION +REASON$/);
    // Every object, and the Pods (and the StatefulSet's claim) of the Deployment, StatefulSet and Job.
    expect(lines).toHaveLength(23);
    expect(stdout).toMatch(
      /^Pod +shop\/web +tp-dev\/web-x-shop-x-dev +no +Create +host Pod tp-dev\/web-x-shop-x-dev absent; tenant API tp-dev\/k3s at <k3s ClusterIP>:6443 in KUBERNETES_\* env; .*DNS tp-dev\/tenant-dns at <tenant-dns ClusterIP>/m,
    );
    expect(stdout).toMatch(/^ConfigMap +kube-system\/coredns +\S+ +no +Skip +namespace kube-system belongs/m);
  });

  it("prints Decisions matching the public schema with -o json", async () => {
    const { code, stdout } = await explain("-f", workloads, "-o", "json");
    expect(code).toBe(0);
    const decisions = DecisionSchema.array().parse(JSON.parse(stdout));
    expect(decisions).toHaveLength(22);
    expect(
      decisions.every((d) => d.service === "explain-sync" && d.time === NOW.toISOString() && d.tenant === "dev"),
    ).toBe(true);
    expect(new Set(decisions.map((d) => d.id)).size).toBe(22);
    expect(decisions.filter((d) => d.action === "Create")).toHaveLength(18);
    // kube-system's ConfigMap, and the Deployment, StatefulSet and Job (their Pods are synced, not they).
    expect(decisions.filter((d) => d.action === "Skip")).toHaveLength(4);
    const long = decisions.find((d) => d.tenantRef.name === "ledger-reconciliation-settings-for-quarterly-close");
    expect(long?.hostRef.name).toMatch(/^ledger-reconciliation-settings-for-quarterly-c-[0-9a-f]{16}$/);
  });

  it("gives the same ids on every run and the same content as YAML", async () => {
    const first = JSON.parse((await explain("-f", workloads, "-o", "json")).stdout);
    const second = YAML.parse((await explain("-f", workloads, "-o", "yaml")).stdout);
    expect(second).toEqual(first);
  });

  it("leaves kinds outside a --policy as Skips", async () => {
    const { code, stdout } = await explain("-f", workloads, "--policy", `${examples}sync-policy.yaml`);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^ServiceAccount +shop\/web .* Skip +kind ServiceAccount not in SyncPolicy toHost$/m);
    expect(stdout).toMatch(
      /^PersistentVolumeClaim +shop\/web-cache .* Skip +kind PersistentVolumeClaim not in SyncPolicy toHost$/m,
    );
  });

  it("plans the rest of examples/tenant/bad.yaml, names the broken document and exits 1", async () => {
    const { code, stdout, stderr } = await explain("-f", `${examples}bad.yaml`);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^ConfigMap +shop\/fine .* Create /m);
    expect(stderr).toMatch(/^tenantplane explain-sync: .*bad\.yaml: document 2: .*line 14, column 1\n$/);
  });

  it("refuses examples/tenant/bad-policy.yaml, naming the document and field", async () => {
    const { code, stderr } = await explain("-f", workloads, "--policy", `${examples}bad-policy.yaml`);
    expect(code).toBe(1);
    expect(stderr).toContain(
      'bad-policy.yaml: document 1: SyncPolicy "too-much" is invalid: spec.toHost[1].kind: unknown kind "Deployment"',
    );
  });
});

describe("explain-sync input handling", () => {
  it("reads stdin for -f -, places objects without a namespace in default, and flattens Lists", async () => {
    const list = {
      apiVersion: "v1",
      kind: "List",
      items: [{ apiVersion: "v1", kind: "Secret", metadata: { name: "s" } }],
    };
    const { code, stdout } = await cli(
      ["explain-sync", "--offline", "--tenant", "dev", "-f", "-", "-o", "json"],
      {},
      JSON.stringify(list),
    );
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject([
      { action: "Create", tenantRef: { namespace: "default", name: "s" }, hostRef: { name: "s-x-default-x-dev" } },
    ]);
  });

  it("reports malformed objects as Skips, carries on, and exits 1", async () => {
    const text =
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n";
    const { code, stdout, stderr } = await cli(
      ["explain-sync", "--offline", "--tenant", "dev", "-f", "in.yaml", "-o", "json"],
      { "in.yaml": text },
    );
    expect(code).toBe(1);
    expect(stderr).toBe("tenantplane explain-sync: in.yaml: 1 malformed object (Skip rows citing 'item N')\n");
    expect(
      JSON.parse(stdout).map((d: { action: string; reason: string }) => [d.action, d.reason.split(":")[0]]),
    ).toEqual([
      ["Skip", "malformed ConfigMap (item 1)"],
      ["Create", "host ConfigMap tp-dev/ok-x-default-x-dev absent"],
    ]);
  });

  const fine = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fine\n";
  const run = (text: string, ...args: string[]) =>
    cli(["explain-sync", "--offline", "--tenant", "dev", "-f", "in.yaml", ...args], { "in.yaml": text });

  it.each([
    ["a name that is not a DNS subdomain", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: Not_Valid\n"],
    ["no name", "apiVersion: v1\nkind: Secret\nmetadata: {}\n"],
    ["no metadata", "apiVersion: v1\nkind: Secret\n"],
    ["metadata that is a string", "apiVersion: v1\nkind: Secret\nmetadata: x\n"],
    ["no kind", "apiVersion: v1\nmetadata:\n  name: a\n"],
    ["a kind that is a number", "apiVersion: v1\nkind: 5\nmetadata:\n  name: a\n"],
    ["no apiVersion", "kind: Secret\nmetadata:\n  name: a\n"],
    ["the wrong apiVersion", "apiVersion: apps/v1\nkind: Secret\nmetadata:\n  name: a\n"],
    ["a namespace that is not a DNS label", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: a\n  namespace: Shop\n"],
    ["a label value that is not a string", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: a\n  labels: {n: 1}\n"],
    ["an annotation that is a list", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: a\n  annotations: {n: [1]}\n"],
    ["Secret data that is not base64", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: a\ndata: {k: hunter2}\n"],
    ["ConfigMap data that is a number", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata: {k: 1}\n"],
    ["a Service of an unknown type", "apiVersion: v1\nkind: Service\nmetadata:\n  name: a\nspec: {type: Internal}\n"],
    ["a Service name with a dot", "apiVersion: v1\nkind: Service\nmetadata:\n  name: a.b\n"],
    ["Pod volumes that are not a list", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec: {volumes: 3}\n"],
    ["a Pod spec that is a string", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec: x\n"],
    [
      "a Service selector with a number",
      "apiVersion: v1\nkind: Service\nmetadata:\n  name: a\nspec: {selector: {app: 1}}\n",
    ],
    ["a list item that is a number", "apiVersion: v1\nkind: List\nitems: [1]\n"],
    ["a document that is a string", "just text\n"],
    ["a document that is a list of strings", "- a\n- b\n"],
  ])("plans the rest and exits 1 for %s", async (_what, bad) => {
    for (const output of ["table", "json"]) {
      const { code, stdout, stderr } = await run(`${fine}---\n${bad}`, "-o", output);
      expect(code).toBe(1);
      expect(stdout).toContain("fine-x-default-x-dev");
      expect(stdout).toMatch(/malformed|cannot translate/);
      expect(stderr).toMatch(
        /^tenantplane explain-sync: in\.yaml: \d malformed objects? \(Skip rows citing 'item N'\)\n$/,
      );
    }
  });

  it("says a non-object document is not an object", async () => {
    const { stdout } = await run(`${fine}---\n42\n`);
    expect(stdout).toMatch(/Skip +malformed object \(item 2\): expected a Kubernetes object, found a number$/m);
  });

  it("refuses a YAML alias bomb with one line naming the document, and plans the rest", async () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x","x"]',
      "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]",
      "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]",
      "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]",
      "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]",
      "f: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]",
    ].join("\n");
    const { code, stdout, stderr } = await run(`${fine}---\n${bomb}\n`);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^ConfigMap +default\/fine .* Create /m);
    expect(stderr).toMatch(/^tenantplane explain-sync: in\.yaml: document 2: Excessive alias count[^\n]*\n$/);
  });

  it.each([
    ["an unclosed flow mapping", "labels: {app: web\n"],
    ["a tab indentation", "a:\n\tb: 1\n"],
    ["duplicate keys", "a: 1\na: 2\n"],
    ["an undefined alias", "a: *nowhere\n"],
  ])("reports %s as one line naming the document, never a stack trace", async (_what, bad) => {
    const { code, stderr } = await run(`${fine}---\n${bad}---\n${fine.replace("fine", "after")}`);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^tenantplane explain-sync: in\.yaml: document 2: [^\n]+\n$/);
  });

  it('reads namespace "" as default, as kubectl does', async () => {
    const { code, stdout } = await run("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: ''\n");
    expect(code).toBe(0);
    expect(stdout).toMatch(/^ConfigMap +default\/c +tp-dev\/c-x-default-x-dev +no +Create /m);
  });

  it("shows host-rule refusals and Pod Security predictions, with the built-in profile or --profile", async () => {
    const pods = [
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: netns\nspec:\n  hostNetwork: true\n  containers: [{name: c}]\n",
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: admin\nspec:\n  containers: [{name: c, securityContext: {capabilities: {add: [SYS_ADMIN]}}}]\n",
      "apiVersion: v1\nkind: Service\nmetadata:\n  name: steal\nspec:\n  type: ExternalName\n  externalName: k3s.tp-victim.svc.cluster.local\n",
      "apiVersion: v1\nkind: Service\nmetadata:\n  name: lb\nspec:\n  type: LoadBalancer\n",
    ].join("---\n");
    const { code, stdout } = await run(pods);
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /^Pod +default\/netns .* Skip +refused by host rules: spec\.hostNetwork: shares the host's namespaces/m,
    );
    expect(stdout).toMatch(
      /^Pod +default\/admin .* Skip +refused by host rules: spec\.containers\[0\]\.securityContext\.capabilities\.add\[0\]: capability SYS_ADMIN is beyond Pod Security baseline's list and not in IsolationProfile spec\.workloads\.allowedCapabilities$/m,
    );
    expect(stdout).toMatch(/^Service +default\/steal .* Skip +.*points at tenant victim's host namespace tp-victim/m);
    expect(stdout).toMatch(/^Service +default\/lb .* Skip +.*LoadBalancer Services are not allowed/m);

    const profile = `${fileURLToPath(new URL("../../../examples/", import.meta.url))}isolationprofile.yaml`;
    const withProfile = await run(pods, "--profile", profile);
    expect(withProfile.stdout).toMatch(/^Service +default\/lb .* Create /m);
    const privileged =
      "apiVersion: tenantplane.io/v1alpha1\nkind: IsolationProfile\nmetadata:\n  name: p\nspec:\n  podSecurity: {enforce: privileged}\n";
    const withPrivileged = (profile: string) =>
      cli(["explain-sync", "--offline", "--tenant", "dev", "-f", "in.yaml", "--profile", "p.yaml"], {
        "in.yaml": pods,
        "p.yaml": profile,
      });
    // The node floor holds at privileged too, until the profile lifts the one rule.
    const floor = await withPrivileged(privileged);
    expect(floor.stdout).toMatch(
      /^Pod +default\/admin .* Skip +.*capability SYS_ADMIN is beyond Pod Security baseline's list/m,
    );
    const loose = await withPrivileged(`${privileged}  workloads: {allowedCapabilities: [SYS_ADMIN]}\n`);
    expect(loose.stdout).toMatch(/^Pod +default\/admin .* Create /m);
    expect(loose.stdout).toMatch(/^Pod +default\/netns .* Skip +refused by host rules: spec\.hostNetwork/m);
  });

  it("predicts the claim rules: classes outside the profile's list and resource claims are Skips naming the field", async () => {
    const objects = [
      "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: fast\nspec: {storageClassName: fast, volumeName: pv-1}\n",
      "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: ssd\nspec: {storageClassName: ssd, selector: {matchLabels: {a: b}}}\n",
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: gpu\nspec:\n  containers: [{name: c}]\n  resourceClaims: [{name: g, resourceClaimTemplateName: t}]\n",
    ].join("---\n");
    const { code, stdout } = await cli(
      ["explain-sync", "--offline", "--tenant", "dev", "-f", "in.yaml", "--profile", "p.yaml", "-o", "json"],
      {
        "in.yaml": objects,
        "p.yaml":
          "apiVersion: tenantplane.io/v1alpha1\nkind: IsolationProfile\nmetadata:\n  name: p\nspec:\n  workloads: {storage: {allowedClasses: [ssd]}}\n",
      },
    );
    expect(code).toBe(0);
    const reasons = Object.fromEntries(
      JSON.parse(stdout).map((d: { action: string; reason: string; tenantRef: { name: string } }) => [
        d.tenantRef.name,
        `${d.action} ${d.reason}`,
      ]),
    );
    expect(reasons["fast"]).toBe(
      "Skip cannot be synced as written: spec.storageClassName: storage class fast is not in IsolationProfile spec.workloads.storage.allowedClasses (allowed: ssd)",
    );
    expect(reasons["ssd"]).toMatch(
      /^Create .*spec\.selector dropped: a tenant claim may not pick, pre-bind or mark as bound a host volume; spec\.storageClassName ssd becomes tp-dev\.ssd, the tenant's own copy of that host class: no volume made for anyone else can bind$/,
    );
    expect(reasons["gpu"]).toBe(
      "Skip refused by host rules: spec.resourceClaims[0]: claim g asks the node's drivers for devices, which needs IsolationProfile spec.workloads.allowResourceClaims: true",
    );
  });

  it("predicts Services past the profile's load-balancer quota as Skips", async () => {
    const profile = `${fileURLToPath(new URL("../../../examples/", import.meta.url))}isolationprofile.yaml`;
    const lbs = ["a", "b", "c"]
      .map((name) => `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${name}\nspec: {type: LoadBalancer}\n`)
      .join("---\n");
    const { code, stdout } = await run(lbs, "--profile", profile);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Service +default\/b .* Create /m);
    expect(stdout).toMatch(
      /^Service +default\/c .* Skip +refused by host rules: spec\.type: LoadBalancer would exceed resourceQuota services\.loadbalancers \(2, 2 in use\)$/m,
    );
  });

  it("refuses an invalid --profile, naming the field", async () => {
    const bad =
      "apiVersion: tenantplane.io/v1alpha1\nkind: IsolationProfile\nmetadata:\n  name: p\nspec:\n  workloads: {tolerations: [{effect: Never}]}\n";
    const { code, stderr } = await cli(
      ["explain-sync", "--offline", "--tenant", "dev", "-f", "in.yaml", "--profile", "p.yaml"],
      {
        "in.yaml": fine,
        "p.yaml": bad,
      },
    );
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /p\.yaml: document 1: IsolationProfile "p" is invalid: spec\.workloads\.tolerations\[0\]\.effect/,
    );
  });

  it("turns an unexpected failure into one line with exit 1, never a stack trace", async () => {
    let stderr = "";
    const code = await runCli(["explain-sync", "--offline", "--tenant", "dev", "-f", "in.yaml", "-o", "json"], {
      stdout: () => undefined,
      stderr: (text) => void (stderr += text),
      readFile: async () => fine,
      now: () => {
        throw new TypeError("clock broken\n    at somewhere (file.js:1:1)");
      },
    });
    expect(code).toBe(1);
    expect(stderr).toBe("tenantplane explain-sync: unexpected error: clock broken\n");
  });

  it("says when a file holds no objects", async () => {
    const { code, stdout } = await cli(["explain-sync", "--offline", "--tenant", "dev", "-f", "empty.yaml"], {
      "empty.yaml": "# nothing\n",
    });
    expect(code).toBe(0);
    expect(stdout).toBe("no objects found in empty.yaml\n");
  });

  it("rejects an invalid tenant name with exit status 1", async () => {
    const { code, stderr } = await cli(["explain-sync", "--offline", "--tenant", "t".repeat(61), "-f", workloads]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/--tenant "t{61}": a tenant name must be a DNS-1123 label of at most 60 characters/);
  });

  it("reports an unreadable file with exit status 1", async () => {
    const { code, stderr } = await explain("-f", `${examples}missing.yaml`);
    expect(code).toBe(1);
    expect(stderr).toMatch(/cannot read .*missing\.yaml: ENOENT/);
  });

  it.each([
    [["explain-sync", "--tenant", "dev", "-f", "x", "--policy", "p.yaml"], "--policy and --profile need --offline"],
    [["explain-sync", "--offline", "--tenant", "dev", "-f", "x", "--context", "c"], "do not apply to --offline"],
    [
      ["explain-sync", "--offline", "--tenant", "dev", "-f", "x", "-o", "name"],
      "-o name: use one of table, json, yaml",
    ],
    [["explain-sync", "--offline", "-f", "x"], "missing --tenant <name>"],
    [["explain-sync", "--offline", "--tenant", "dev"], "missing -f <file|->"],
    [
      ["explain-sync", "--offline", "--tenant", "dev", "-f", "x", "-o", "wide"],
      "-o wide: use one of table, json, yaml",
    ],
    [["explain-sync", "--offline", "--tenant", "dev", "-f", "x", "--prune"], "--prune needs a live tenant"],
    [
      ["explain-sync", "--offline", "--tenant", "dev", "-f", "x", "--field-manager", "m"],
      "--field-manager needs a live",
    ],
    [["explain-sync", "--offline", "--bogus"], "Unknown option '--bogus'"],
    [["explain-sync", "--offline", "stray"], "Unexpected argument 'stray'"],
  ])("rejects the command line %j with exit status 2", async (argv, message) => {
    const { code, stdout, stderr } = await cli(argv);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain(message);
    expect(stderr).toContain("Run 'tenantplane explain-sync --help' for usage.");
  });

  it("prints its help", async () => {
    const { code, stdout } = await cli(["explain-sync", "--help"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: tenantplane explain-sync --tenant <name> -f <file\|->/);
    expect(stdout).toContain("tenantplane explain-sync --offline --tenant <name>");
    expect(stdout).toMatch(/Examples:\n {2}tenantplane explain-sync/);
    expect(stdout).toMatch(/3 the host\ncluster cannot be reached/);
    expect(stdout).toMatch(/^ {2}--prune {13}\(live\) the manifest is the complete desired state/m);
  });
});

describe("notReadyNote", () => {
  it("says when the sync worker would not act on the plan yet", () => {
    const ready = { status: { conditions: [{ type: "ControlPlaneReady", status: "True" }] } };
    expect(notReadyNote(ready)).toBeUndefined();
    expect(notReadyNote({ status: {} })).toMatch(/no Ready control plane yet/);
    expect(notReadyNote({ ...ready, metadata: { deletionTimestamp: "2026-01-01T00:00:00Z" } } as never)).toMatch(
      /is being deleted/,
    );
  });
});

describe("podNetworkWrites", () => {
  const own = (name: string, clusterIP: string) => ({
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name,
      namespace: "tp-dev",
      labels: { "app.kubernetes.io/managed-by": "tenantplane", "tenantplane.io/tenant": "dev" },
    },
    spec: { clusterIP },
  });
  const web = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", namespace: "shop" },
    spec: { ports: [{ port: 80 }] },
  };
  const hosts = [own("k3s", "10.96.0.10"), own("tenant-dns", "10.96.0.53")];

  it("predicts the zone and service links the worker writes once the plan is applied, addresses to come as placeholders", () => {
    const result = plan({ tenant: "dev", policy: defaultSyncPolicySpec, tenantObjects: [web], hostObjects: hosts });
    const writes = podNetworkWrites("dev", [web], hosts, result, true)!;
    expect(writes.map((d) => `${d.action} ${d.hostRef.name}`)).toEqual([
      "Create service-links.shop",
      "Create tenant-dns-records",
    ]);
    expect(writes[1]?.reason).toBe(
      "tenant DNS zone cluster.local with 2 names (kubernetes.default.svc.cluster.local 10.96.0.10, " +
        "web.shop.svc.cluster.local <ClusterIP of tp-dev/web-x-shop-x-dev>), nothing of another tenant",
    );
  });

  it("in Private mode predicts the Pod's Skip naming the mode, and the zone and links deleted once no host Pod is left", () => {
    const rules = withPlacement(defaultHostRules, PRIVATE_PLACEMENT);
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "api", namespace: "shop" },
      spec: { containers: [{ name: "c", image: "nginx" }] },
    };
    const before = plan({ tenant: "dev", policy: defaultSyncPolicySpec, tenantObjects: [web], hostObjects: hosts });
    const records = podNetworkWrites("dev", [web], hosts, before, true)!.map((d) => d.object!);
    const hostObjects = [...hosts, ...records.map((r) => ({ ...r, kind: "ConfigMap" }))];
    const result = plan({
      tenant: "dev",
      policy: defaultSyncPolicySpec,
      rules,
      tenantObjects: [web, pod],
      hostObjects,
    });
    const skip = result.decisions.find((d) => d.kind === "Pod");
    expect(skip).toMatchObject({ action: "Skip", reason: privateModeReason("shop", "api") });
    const writes = podNetworkWrites("dev", [web, pod], hostObjects, result, true, true)!;
    expect(writes.map((d) => `${d.action} ${d.hostRef.name}`)).toEqual([
      "Delete service-links.shop",
      "Delete tenant-dns-records",
    ]);
    expect(writes[1]?.reason).toContain("TenantCluster spec.isolation.mode is Private");
  });

  it("predicts nothing while the tenant's API and DNS Services have no addresses", () => {
    const result = plan({ tenant: "dev", policy: defaultSyncPolicySpec, tenantObjects: [web], hostObjects: [] });
    expect(podNetworkWrites("dev", [web], [], result, true)).toBeUndefined();
  });
});
