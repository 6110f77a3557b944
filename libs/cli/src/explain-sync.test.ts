import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { DecisionSchema } from "@tenantplane/messaging";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { runCli } from "./cli.js";
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
    expect(lines).toHaveLength(13);
    expect(stdout).toMatch(
      /^Pod +shop\/web +tp-dev\/web-x-shop-x-dev +no +Create +host Pod tp-dev\/web-x-shop-x-dev absent$/m,
    );
    expect(stdout).toMatch(/^ConfigMap +kube-system\/coredns +\S+ +no +Skip +namespace kube-system belongs/m);
  });

  it("prints Decisions matching the public schema with -o json", async () => {
    const { code, stdout } = await explain("-f", workloads, "-o", "json");
    expect(code).toBe(0);
    const decisions = DecisionSchema.array().parse(JSON.parse(stdout));
    expect(decisions).toHaveLength(12);
    expect(
      decisions.every((d) => d.service === "explain-sync" && d.time === NOW.toISOString() && d.tenant === "dev"),
    ).toBe(true);
    expect(new Set(decisions.map((d) => d.id)).size).toBe(12);
    expect(decisions.filter((d) => d.action === "Create")).toHaveLength(11);
    expect(decisions.filter((d) => d.action === "Skip")).toHaveLength(1);
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

  it("refuses examples/tenant/bad.yaml, naming the document", async () => {
    const { code, stdout, stderr } = await explain("-f", `${examples}bad.yaml`);
    expect(code).toBe(1);
    expect(stdout).toBe("");
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

  it("reports malformed objects as Skips and carries on", async () => {
    const text =
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n";
    const { code, stdout } = await cli(
      ["explain-sync", "--offline", "--tenant", "dev", "-f", "in.yaml", "-o", "json"],
      { "in.yaml": text },
    );
    expect(code).toBe(0);
    expect(
      JSON.parse(stdout).map((d: { action: string; reason: string }) => [d.action, d.reason.split(":")[0]]),
    ).toEqual([
      ["Skip", "malformed ConfigMap (item 1)"],
      ["Create", "host ConfigMap tp-dev/ok-x-default-x-dev absent"],
    ]);
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
    [["explain-sync", "--tenant", "dev", "-f", "x"], "explain-sync needs --offline"],
    [["explain-sync", "--offline", "-f", "x"], "missing --tenant <name>"],
    [["explain-sync", "--offline", "--tenant", "dev"], "missing -f <file|->"],
    [
      ["explain-sync", "--offline", "--tenant", "dev", "-f", "x", "-o", "wide"],
      "-o wide: use one of table, json, yaml",
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
    expect(stdout).toMatch(/^Usage: tenantplane explain-sync --offline --tenant <name> -f <file\|->/);
  });
});
