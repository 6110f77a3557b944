import {
  startListWatch,
  type JsonClient,
  type ListWatch,
  type ListWatchOptions,
  type RawWatchEvent,
} from "@tenantplane/kube";

type Start = (opts: ListWatchOptions) => ListWatch;

interface Shared {
  watch: ListWatch;
  events: Set<(event: RawWatchEvent) => void>;
  currents: Set<(current: boolean, err?: unknown) => void>;
}

/**
 * One list-watch per API server, collection, selector and form (whole or metadata only), shared by everyone of one tenant
 * who asks for it: the forward syncer and the back-sync both follow the tenant's Pods and
 * Services and their host copies, and separate watches would make both API servers list
 * and stream every one of those objects twice (and this process parse them twice). Each
 * {@link open} returns its own handle; the watch stops when the last handle does.
 */
export class SharedWatches {
  private readonly shared = new Map<string, Shared>();
  private readonly clientIds = new WeakMap<JsonClient, number>();
  private nextClientId = 0;

  constructor(private readonly start: Start = startListWatch) {}

  open(opts: ListWatchOptions): ListWatch {
    const key = `${this.clientId(opts.client)} ${opts.path}?${opts.labelSelector ?? ""}${opts.metadataOnly ? " metadata" : ""}`;
    let entry = this.shared.get(key);
    if (entry === undefined) {
      const events = new Set<(event: RawWatchEvent) => void>();
      const currents = new Set<(current: boolean, err?: unknown) => void>();
      const watch = this.start({
        ...opts,
        // Each subscriber is isolated: one that throws does not keep the event from the others.
        // (A Set may lose members while it is iterated; this runs for every event, so no copy.)
        onEvent: (event) => {
          for (const handler of events) callSafely(() => handler(event), opts.logger);
        },
        onCurrent: (current, err) => {
          for (const handler of currents) callSafely(() => handler(current, err), opts.logger);
        },
      });
      entry = { watch, events, currents };
      this.shared.set(key, entry);
    }
    const { watch, events, currents } = entry;
    // Fresh functions per handle, so two handles never share (and never remove) one entry.
    const onEvent = (event: RawWatchEvent) => opts.onEvent(event);
    const given = opts.onCurrent;
    const onCurrent = given && ((current: boolean, err?: unknown) => given(current, err));
    events.add(onEvent);
    if (onCurrent) currents.add(onCurrent);
    let open = true;
    return {
      get: (namespace, name) => watch.get(namespace, name),
      list: () => watch.list(),
      current: () => watch.current(),
      synced: watch.synced,
      reconsider: (obj) => watch.reconsider(obj),
      stop: () => {
        if (!open) return;
        open = false;
        events.delete(onEvent);
        if (onCurrent) currents.delete(onCurrent);
        if (events.size === 0 && currents.size === 0) {
          this.shared.delete(key);
          watch.stop();
        }
      },
    };
  }

  /** Watches open now (for tests and metrics). */
  get size(): number {
    return this.shared.size;
  }

  private clientId(client: JsonClient): number {
    let id = this.clientIds.get(client);
    if (id === undefined) this.clientIds.set(client, (id = this.nextClientId++));
    return id;
  }
}

function callSafely(fn: () => void, logger: ListWatchOptions["logger"]): void {
  try {
    fn();
  } catch (err) {
    logger.error({ err }, "watch subscriber threw; event dropped for it");
  }
}
