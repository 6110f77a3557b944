import { describe } from "@tenantplane/runtime";
import type { ProbeClients } from "./probe-clients.js";

/** What one authenticated `GET /version` against a tenant's API found. */
export type ProbeAnswer = { ok: true; server: string } | { ok: false; server: string; error: string };

interface Entry {
  kubeconfig: string;
  running: boolean;
  answer?: ProbeAnswer;
}

/**
 * Runs each tenant's readiness probe beside the reconcile passes instead of inside one. A tenant
 * API that does not answer keeps its probe waiting for the full timeout; awaited in the pass, that
 * held one of the service's reconcile slots for as long, so as many silent tenants as there are
 * slots stopped every other tenant's work. A pass now takes the answer of a probe that finished
 * since the last pass, or starts one and ends; the probe's end wakes the tenant's next pass.
 */
export class ApiProbes {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly clients: ProbeClients,
    private readonly timeoutMs: number,
  ) {}

  /**
   * The answer of a probe made with `kubeconfig` that finished since the last call (taken: the
   * next call probes again). Otherwise starts a probe unless one is running, returns undefined,
   * and calls `finished(tenant)` when the probe ends.
   */
  take(tenant: string, kubeconfig: string, finished: (tenant: string) => void): ProbeAnswer | undefined {
    let entry = this.entries.get(tenant);
    if (entry?.answer !== undefined && entry.kubeconfig === kubeconfig) {
      const answer = entry.answer;
      entry.answer = undefined;
      return answer;
    }
    if (entry?.running) {
      // A probe with a replaced kubeconfig answers for nothing; its end wakes a pass that probes anew.
      return undefined;
    }
    entry = { kubeconfig, running: true };
    this.entries.set(tenant, entry);
    void this.probe(tenant, entry, finished);
    return undefined;
  }

  /** Drops the tenant's answer and client; a probe still running is ignored when it ends. */
  forget(tenant: string): void {
    this.entries.delete(tenant);
    this.clients.forget(tenant);
  }

  private async probe(tenant: string, entry: Entry, finished: (tenant: string) => void): Promise<void> {
    const { client, server } = this.clients.for(tenant, entry.kubeconfig);
    let answer: ProbeAnswer;
    try {
      await withTimeout(client.request("GET", "/version"), this.timeoutMs);
      answer = { ok: true, server };
    } catch (err) {
      answer = { ok: false, server, error: describe(err) };
    }
    entry.running = false;
    if (this.entries.get(tenant) !== entry) return;
    entry.answer = answer;
    finished(tenant);
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
