/**
 * Remembers the last Skip published per source, so a Skip is published once per change
 * of (source version, reason) and not on every resync or host event.
 */
export class SkipMemory {
  private readonly last = new Map<string, string>();

  /** True (and remembered) when this (version, reason) was not the last one published for `key`. */
  shouldPublish(key: string, sourceVersion: string, reason: string): boolean {
    const mark = `${sourceVersion}\n${reason}`;
    if (this.last.get(key) === mark) return false;
    this.last.set(key, mark);
    return true;
  }

  /** The source is synced or gone: a later Skip for it is news again. */
  forget(key: string): void {
    this.last.delete(key);
  }
}
