import { olderVersion, type RawObject } from "@tenantplane/kube";

/** How long a write is remembered at most when the cache never shows it (the object went again at once). */
export const OWN_WRITE_MEMORY_MS = 30_000;

/**
 * Objects this worker wrote, as the API server answered, until its watch cache shows them.
 * A watch reports a write some time after the write's answer, and in between other events
 * (the host copy running, a host Pod's status) make the worker plan the same object again:
 * planned from the cache alone, the write was made a second time (a Pod's status patched
 * again, a token minted again and its Secret replaced). Planning from {@link view} sees the
 * write at once. Pure but for the clock passed in.
 */
export class OwnWrites {
  private readonly written = new Map<string, { obj: RawObject; at: number }>();

  constructor(private readonly memoryMs = OWN_WRITE_MEMORY_MS) {}

  /** Remembers `obj`, the API server's answer to a write of the object under `key`. */
  remember(key: string, obj: RawObject, now: number): void {
    if (obj.metadata.resourceVersion === undefined) return;
    this.written.set(key, { obj, at: now });
  }

  /**
   * The object under `key` as planning should see it: `cached` once the cache shows this
   * worker's last write or something after it (or the object under another uid), else that
   * write's answer. A write the cache never shows is forgotten after the memory time.
   */
  view(key: string, cached: RawObject | undefined, now: number): RawObject | undefined {
    const mine = this.written.get(key);
    if (mine === undefined) return cached;
    const caughtUp =
      cached !== undefined &&
      (cached.metadata.uid !== mine.obj.metadata.uid ||
        !olderVersion(cached.metadata.resourceVersion, mine.obj.metadata.resourceVersion));
    if (caughtUp || now - mine.at > this.memoryMs) {
      this.written.delete(key);
      return cached;
    }
    return mine.obj;
  }

  /** Drops every write remembered longer than the memory time (their objects may never be viewed again). */
  prune(now: number): void {
    for (const [key, { at }] of this.written) if (now - at > this.memoryMs) this.written.delete(key);
  }

  forget(key: string): void {
    this.written.delete(key);
  }

  get size(): number {
    return this.written.size;
  }
}
