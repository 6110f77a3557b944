import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeApiError } from "@tenantplane/kube";
import { describe, expect, it } from "vitest";
import { CliError } from "./cli-io.js";
import { clusterError, isUnreachable, openHost } from "./host.js";

const kubeconfig = (server: string) => `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${server}"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: one, context: {cluster: c, user: u}}, {name: two, context: {cluster: c, user: u}}]
current-context: one
`;

function file(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "tp-cli-")), "kubeconfig");
  writeFileSync(path, text);
  return path;
}

describe("openHost", () => {
  it("uses the current context or --context, and names the contexts it has when one is missing", () => {
    const path = file(kubeconfig("https://127.0.0.219:6443"));
    expect(openHost({ kubeconfig: path }).server).toBe("https://127.0.0.219:6443");
    expect(openHost({ kubeconfig: path, context: "two" }).server).toBe("https://127.0.0.219:6443");
    expect(() => openHost({ kubeconfig: path, context: "three" })).toThrow(
      '--context "three": no such context in the kubeconfig (it has: one, two)',
    );
  });

  it("says which --kubeconfig cannot be loaded (exit 1)", () => {
    let error: unknown;
    try {
      openHost({ kubeconfig: "/nonexistent/kubeconfig" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(1);
    expect((error as CliError).message).toMatch(/^--kubeconfig: cannot load \/nonexistent\/kubeconfig: /);
  });
});

describe("clusterError", () => {
  const cluster = {
    objects: undefined as never,
    client: undefined as never,
    server: "https://h:6443",
    label: "the host cluster",
  };

  it("is exit 3 for a server that cannot be reached, directly or as a cause", () => {
    for (const error of [
      Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }),
      Object.assign(new Error("getaddrinfo"), { code: "ENOTFOUND" }),
      new Error("fetch failed", { cause: Object.assign(new Error("x"), { code: "ETIMEDOUT" }) }),
    ]) {
      expect(isUnreachable(error)).toBe(true);
      const mapped = clusterError(cluster, "list TenantClusters", error) as CliError;
      expect(mapped.exitCode).toBe(3);
      expect(mapped.message).toMatch(
        /^cannot reach the host cluster at https:\/\/h:6443 \(\w+\) to list TenantClusters: check/,
      );
    }
    expect(isUnreachable(new Error("other"))).toBe(false);
  });

  it("names the RBAC permission on 403 and asks for new credentials on 401 (exit 1)", () => {
    const forbidden = new KubeApiError("GET", "/api/v1/namespaces/tp-dev/secrets/dev-kubeconfig", 403, {
      message: 'secrets "dev-kubeconfig" is forbidden: User "jane" cannot get resource "secrets"',
    });
    const mapped = clusterError(
      cluster,
      "read Secret tp-dev/dev-kubeconfig",
      forbidden,
      '"get" on "secrets" in namespace tp-dev',
    ) as CliError;
    expect(mapped.exitCode).toBe(1);
    expect(mapped.message).toBe(
      'forbidden to read Secret tp-dev/dev-kubeconfig: secrets "dev-kubeconfig" is forbidden: User "jane" cannot get resource "secrets"; this needs RBAC permission "get" on "secrets" in namespace tp-dev',
    );
    const unauthorized = clusterError(
      cluster,
      "list TenantClusters",
      new KubeApiError("GET", "/x", 401, {}),
    ) as CliError;
    expect(unauthorized.message).toContain("refused the kubeconfig's credentials (401)");
  });

  it("points at the CRDs when the server does not serve tenantplane's kinds", () => {
    const mapped = clusterError(
      cluster,
      "list TenantClusters",
      new Error("the API server does not serve kind TenantCluster in tenantplane.io/v1alpha1"),
    ) as CliError;
    expect(mapped.message).toContain("are the tenantplane CRDs installed on https://h:6443?");
  });
});

describe("openHost without any configuration", () => {
  it("names the sources it tried and points at --offline (exit 1), instead of falling back to localhost", () => {
    const home = mkdtempSync(join(tmpdir(), "tp-home-"));
    let error: unknown;
    try {
      openHost({ env: { HOME: home } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(1);
    expect((error as CliError).message).toContain(`~/.kube/config (${home}/.kube/config: no such file)`);
    expect((error as CliError).message).toContain("--offline");
  });
});
