import { describe, expect, it } from "vitest";
import { runCli } from "./cli.js";
import { CliError } from "./cli-io.js";
import { checkPrivate, joinCommandFor, joinSecretName, parseJoinTarget } from "./join-command.js";
import { memoryIo } from "./memory-io.js";
import type { RawObject } from "./tenant-context.js";

const TOKEN = `K10${"a".repeat(64)}::abc123.0123456789abcdef`;
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

function tenant(mode: string | undefined, status: Record<string, unknown> = {}): RawObject {
  return {
    metadata: { name: "dev" },
    spec: mode === undefined ? {} : { isolation: { mode } },
    status,
  };
}

function joinSecret(server: string, data: Record<string, string> = {}): RawObject {
  return {
    metadata: {
      name: "dev-join",
      namespace: "tp-dev",
      annotations: { "tenantplane.io/join-token-expires": "2026-05-08T12:00:00Z" },
    },
    data: { token: b64(TOKEN), server: b64(server), "ca.crt": b64("PEM"), ...data },
  };
}

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    return (error as CliError).message;
  }
  throw new Error("no refusal");
}

describe("joinCommandFor", () => {
  it("prints the k3s agent command with the server and token of the join Secret, and how to add labels and taints", () => {
    const out = joinCommandFor(
      "dev",
      tenant("Private", { isolation: { mode: "Private" } }),
      joinSecret("https://203.0.113.7:6443"),
    );
    expect(out.warnings).toEqual([]);
    expect(out.stdout.split("\n")[0]).toBe(
      `curl -sfL https://get.k3s.io | K3S_URL=https://203.0.113.7:6443 K3S_TOKEN=${TOKEN} sh -s - agent`,
    );
    expect(out.stdout).toContain("--node-label <key>=<value> or --node-taint <key>=<value>:NoSchedule");
    expect(out.stdout).toContain("The token expires 2026-05-08T12:00:00Z");
  });

  it("warns that an in-cluster address reaches only machines inside the host cluster", () => {
    const out = joinCommandFor("dev", tenant("Private"), joinSecret("https://k3s.tp-dev.svc:6443"));
    expect(out.stdout).toContain("K3S_URL=https://k3s.tp-dev.svc:6443 ");
    expect(out.warnings).toHaveLength(1);
    expect(out.warnings[0]).toContain("spec.controlPlane.expose.loadBalancer.enabled: true");
  });

  it("says when the move to Private is still under way", () => {
    const out = joinCommandFor(
      "dev",
      tenant("Private", { isolation: { mode: "Shared" } }),
      joinSecret("https://lb.example:6443"),
    );
    expect(out.warnings).toEqual([
      "tenant dev is still moving to Private (status.isolation.mode is Shared): nodes may join now; its Pods are placed on them once the move completes",
    ]);
  });

  it.each([
    [undefined, "spec.isolation.mode unset (Shared)"],
    ["Shared", "spec.isolation.mode Shared"],
    ["Dedicated", "spec.isolation.mode Dedicated"],
  ])("refuses a tenant whose mode is %s, naming the field and how to set it", (mode, named) => {
    const message = refusal(() => checkPrivate("dev", tenant(mode)));
    expect(message).toContain(`TenantCluster dev has ${named}`);
    expect(message).toContain(`kubectl patch tc dev --type merge -p '{"spec":{"isolation":{"mode":"Private"}}}'`);
  });

  it("names the Secret and the condition to look at when no credential is issued yet", () => {
    expect(refusal(() => joinCommandFor("dev", tenant("Private"), undefined))).toBe(
      "Secret tp-dev/dev-join does not exist yet: the provisioner issues it once the tenant API answers in Private mode. " +
        "Look at the ControlPlaneReady condition ('tenantplane explain tc/dev')",
    );
    expect(
      refusal(() => joinCommandFor("dev", tenant("Private"), joinSecret("https://x:6443", { token: "" }))),
    ).toContain("Secret tp-dev/dev-join has no key token");
  });

  it("quotes a value the shell would split", () => {
    const out = joinCommandFor("dev", tenant("Private"), joinSecret("https://lb.example:6443/a b"));
    expect(out.stdout).toContain("K3S_URL='https://lb.example:6443/a b' ");
  });
});

describe("join-command arguments", () => {
  it("takes tc/<tenant> or a bare tenant name", () => {
    expect(parseJoinTarget("tc/dev")).toBe("dev");
    expect(parseJoinTarget("tenantcluster/dev")).toBe("dev");
    expect(parseJoinTarget("dev")).toBe("dev");
    expect(joinSecretName("dev")).toBe("dev-join");
  });

  it.each([
    [[], 2, "missing tc/<tenant>"],
    [["pod/dev"], 2, '"pod/dev": write tc/<tenant>'],
    [["tc/dev", "b"], 2, "Unexpected argument 'b'"],
    [["tc/Bad!"], 1, 'tc/<tenant> "Bad!": a tenant name must be'],
    [["tc/dev", "--context"], 2, "--context"],
  ])("refuses %j with exit %i", async (args, code, message) => {
    const { io, out } = memoryIo();
    expect(await runCli(["join-command", ...args], io)).toBe(code);
    expect(out.stderr).toContain(message);
  });

  it("prints help saying the output is a secret and the RBAC it needs", async () => {
    const { io, out } = memoryIo();
    expect(await runCli(["join-command", "--help"], io)).toBe(0);
    expect(out.stdout).toContain("treat the output as a secret");
    expect(out.stdout).toContain("needs RBAC permission to get that Secret");
  });
});
