import { JsonClient, kubeConfigFromString } from "@tenantplane/kube";

/** A tenant's probe client and the server URL its kubeconfig names. */
export interface ProbeClient {
  client: JsonClient;
  server: string;
}

/**
 * One client per tenant for the authenticated readiness probe, kept while the tenant's admin
 * kubeconfig stays the same. Making a client parses the kubeconfig's certificate and key into a
 * TLS context, which every probe of a tenant waiting for its API used to pay again (about a
 * tenth of the provisioner's CPU in a burst of new tenants). No connection stays open between
 * probes; a replaced kubeconfig or a forgotten tenant closes its client.
 */
export class ProbeClients {
  private readonly clients = new Map<string, ProbeClient & { kubeconfig: string }>();

  constructor(
    private readonly timeoutMs: number,
    private readonly max = 4096,
  ) {}

  /** The client for `tenant` speaking with `kubeconfig`, and the server it names. */
  for(tenant: string, kubeconfig: string): ProbeClient {
    const held = this.clients.get(tenant);
    if (held) this.clients.delete(tenant);
    if (held && held.kubeconfig !== kubeconfig) held.client.close();
    const entry = held?.kubeconfig === kubeconfig ? held : this.open(kubeconfig);
    this.clients.set(tenant, entry);
    if (this.clients.size > this.max) {
      const [oldest, evicted] = this.clients.entries().next().value!;
      this.clients.delete(oldest);
      evicted.client.close();
    }
    return entry;
  }

  private open(kubeconfig: string): ProbeClient & { kubeconfig: string } {
    const kc = kubeConfigFromString(kubeconfig);
    return {
      kubeconfig,
      server: kc.getCurrentCluster()?.server ?? "",
      client: new JsonClient(kc, { timeoutMs: this.timeoutMs, keepAlive: false }),
    };
  }

  /** Closes and drops the tenant's client (the tenant is gone). */
  forget(tenant: string): void {
    this.clients.get(tenant)?.client.close();
    this.clients.delete(tenant);
  }

  get size(): number {
    return this.clients.size;
  }
}
