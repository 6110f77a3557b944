import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ApiProbes } from "./api-probes.js";
import { ProbeClients } from "./probe-clients.js";

// TLS verification off: the ApiProbes tests speak plain HTTP to stand-ins, which the client
// allows only so.
const kubeconfig = (server: string) => `apiVersion: v1
kind: Config
clusters:
- name: t
  cluster:
    server: ${server}
    insecure-skip-tls-verify: true
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

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A tenant API stand-in: answers /version, or holds every request when `silent`. */
async function tenantApi(silent = false): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    requests++;
    if (silent) return;
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ gitVersion: "v1.34.1+k3s1" }));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests };
}

/** The tenants `finished` was called for, and a promise for the next call. */
function finishedLog() {
  const calls: string[] = [];
  let next: (tenant: string) => void = () => undefined;
  return {
    calls,
    finished: (tenant: string) => {
      calls.push(tenant);
      next(tenant);
    },
    next: () => new Promise<string>((r) => (next = r)),
  };
}

describe("ApiProbes", () => {
  it("probes beside the pass and hands the answer to the next pass, once", async () => {
    const api = await tenantApi();
    const probes = new ApiProbes(new ProbeClients(1_000), 1_000);
    const log = finishedLog();
    const ended = log.next();
    expect(probes.take("a", kubeconfig(api.url), log.finished)).toBeUndefined();
    expect(await ended).toBe("a");
    expect(probes.take("a", kubeconfig(api.url), log.finished)).toEqual({ ok: true, server: api.url });
    // Taken: the next pass probes again.
    const again = log.next();
    expect(probes.take("a", kubeconfig(api.url), log.finished)).toBeUndefined();
    await again;
    expect(api.requests()).toBe(2);
  });

  it("runs one probe per tenant at a time and reports a silent API after the timeout", async () => {
    const api = await tenantApi(true);
    const probes = new ApiProbes(new ProbeClients(150), 150);
    const log = finishedLog();
    const ended = log.next();
    const started = performance.now();
    expect(probes.take("a", kubeconfig(api.url), log.finished)).toBeUndefined();
    expect(probes.take("a", kubeconfig(api.url), log.finished)).toBeUndefined();
    await ended;
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    const answer = probes.take("a", kubeconfig(api.url), log.finished);
    expect(answer).toMatchObject({ ok: false, server: api.url });
    expect(answer?.ok === false && answer.error).toMatch(/150 ms|timed out|timeout/i);
    expect(api.requests()).toBe(1);
    expect(log.calls).toEqual(["a"]);
  });

  it("does not hand out an answer for a replaced kubeconfig, nor wake a forgotten tenant", async () => {
    const first = await tenantApi();
    const second = await tenantApi();
    const probes = new ApiProbes(new ProbeClients(1_000), 1_000);
    const log = finishedLog();
    let ended = log.next();
    probes.take("a", kubeconfig(first.url), log.finished);
    await ended;
    ended = log.next();
    expect(probes.take("a", kubeconfig(second.url), log.finished)).toBeUndefined();
    await ended;
    expect(probes.take("a", kubeconfig(second.url), log.finished)).toEqual({ ok: true, server: second.url });

    const silent = await tenantApi(true);
    const quiet = new ApiProbes(new ProbeClients(100), 100);
    const calls: string[] = [];
    quiet.take("b", kubeconfig(silent.url), (t) => calls.push(t));
    quiet.forget("b");
    await new Promise((r) => setTimeout(r, 300));
    expect(calls).toEqual([]);
    expect(silent.requests()).toBe(1);
  });
});
