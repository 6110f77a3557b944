/**
 * Remembers the newest stream sequence seen per key. Messages carry keys, not
 * snapshots, so an older message for a key that already has a newer one asks
 * for nothing the newer one does not: it can be acked unhandled. This keeps one
 * retry loop per tenant however many changes were published while it waited.
 */
export class Freshness {
  private readonly newest = new Map<string, number>();

  /** Records `seq` for `key`; false when a newer message for the key was seen before. */
  observe(key: string, seq: number): boolean {
    const newest = this.newest.get(key) ?? 0;
    if (seq < newest) return false;
    this.newest.set(key, seq);
    return true;
  }
}
