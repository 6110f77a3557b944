import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { runCli } from "./cli.js";
import { kubeconfigRef, withServer } from "./kubeconfig.js";
import { memoryIo } from "./memory-io.js";

const stored = `apiVersion: v1
kind: Config
clusters:
  - name: dev
    cluster:
      server: https://k3s.tp-dev.svc:6443
      certificate-authority-data: Q0E=
users:
  - name: admin
    user: { client-certificate-data: Q0VSVA==, client-key-data: S0VZ }
contexts:
  - name: dev
    context: { cluster: dev, user: admin }
current-context: dev
`;

describe("kubeconfig", () => {
  it("points every cluster at the external endpoint and keeps the rest", () => {
    const out = YAML.parse(withServer(stored, "https://203.0.113.7:6443"));
    expect(out.clusters[0].cluster).toEqual({
      server: "https://203.0.113.7:6443",
      "certificate-authority-data": "Q0E=",
    });
    expect(out.users).toEqual(YAML.parse(stored).users);
    expect(out["current-context"]).toBe("dev");
  });

  it("finds the Secret reference only when it is complete", () => {
    expect(
      kubeconfigRef({
        status: { kubeconfigSecretRef: { namespace: "tp-dev", name: "dev-kubeconfig", key: "kubeconfig" } },
      }),
    ).toEqual({
      namespace: "tp-dev",
      name: "dev-kubeconfig",
      key: "kubeconfig",
    });
    expect(kubeconfigRef({ status: { kubeconfigSecretRef: { namespace: "tp-dev" } } })).toBeUndefined();
    expect(kubeconfigRef({})).toBeUndefined();
  });

  it.each([
    [[], 2, "missing <tenant>"],
    [["a", "b"], 2, "Unexpected argument 'b'"],
    [["Bad!"], 1, '<tenant> "Bad!": a tenant name must be'],
    [["dev", "--context"], 2, "--context"],
  ])("refuses %j with exit %i", async (args, code, message) => {
    const { io, out } = memoryIo();
    expect(await runCli(["kubeconfig", ...args], io)).toBe(code);
    expect(out.stderr).toContain(message);
  });

  it("prints help naming the RBAC it needs", async () => {
    const { io, out } = memoryIo();
    expect(await runCli(["kubeconfig", "--help"], io)).toBe(0);
    expect(out.stdout).toContain("needs RBAC permission to get that Secret");
    expect(out.stdout).toContain("Examples:");
  });
});
