import { startListWatch, type JsonClient, type ListWatch, type RawObject } from "@tenantplane/kube";
import type { Logger } from "@tenantplane/runtime";

/**
 * One list+watch of the host's Nodes shared by every tenant's back-sync: a tenant's
 * virtual Nodes mirror the host nodes its Pods run on. Listeners hear each node that changed.
 */
export class HostNodes {
  private readonly watch: ListWatch;
  private readonly listeners = new Set<(name: string) => void>();

  constructor(client: JsonClient, logger: Logger) {
    this.watch = startListWatch({
      client,
      path: "/api/v1/nodes",
      apiVersion: "v1",
      kind: "Node",
      logger: logger.child({ side: "host", kind: "Node" }),
      onEvent: (e) => {
        for (const listener of this.listeners) listener(e.object.metadata.name);
      },
    });
  }

  /** The host node of this name, as last seen. */
  get(name: string): RawObject | undefined {
    return this.watch.get(undefined, name);
  }

  /** Resolves once the host nodes have been listed. */
  get synced(): Promise<void> {
    return this.watch.synced;
  }

  /** Calls `listener` with the name of every node that changes until the returned function is called. */
  subscribe(listener: (name: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  stop(): void {
    this.watch.stop();
  }
}
