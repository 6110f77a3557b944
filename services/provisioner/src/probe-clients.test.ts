import { describe, expect, it } from "vitest";
import { ProbeClients } from "./probe-clients.js";

const kubeconfig = (server: string) => `apiVersion: v1
kind: Config
clusters:
- name: t
  cluster:
    server: ${server}
users:
- name: t
  user:
    token: x
contexts:
- name: t
  context:
    cluster: t
    user: t
current-context: t
`;

describe("ProbeClients", () => {
  it("keeps one client per tenant while its kubeconfig stays the same", () => {
    const clients = new ProbeClients(1_000);
    const first = clients.for("a", kubeconfig("https://a.example:6443"));
    expect(clients.for("a", kubeconfig("https://a.example:6443")).client).toBe(first.client);
    const replaced = clients.for("a", kubeconfig("https://b.example:443"));
    expect(replaced.client).not.toBe(first.client);
    expect(replaced.server).toBe("https://b.example:443");
    expect(clients.size).toBe(1);
  });

  it("forgets a tenant, and the least recently used past its bound", () => {
    const clients = new ProbeClients(1_000, 2);
    const a = clients.for("a", kubeconfig("https://a.example"));
    clients.for("b", kubeconfig("https://b.example"));
    clients.for("a", kubeconfig("https://a.example"));
    clients.for("c", kubeconfig("https://c.example"));
    expect(clients.size).toBe(2);
    expect(clients.for("a", kubeconfig("https://a.example")).client).toBe(a.client);
    clients.forget("a");
    expect(clients.size).toBe(1);
    expect(clients.for("a", kubeconfig("https://a.example")).client).not.toBe(a.client);
  });
});
