/**
 * One write per key until the cache shows what it wrote: callers asking while it is in flight,
 * or after it is done but before {@link seen}, share it instead of sending their own. Several
 * Pods bound to a new node at once each sent a create of it, answered 409 but for one, and each
 * held its Pod's binding until its own answer came.
 */
export class SharedWrites {
  private readonly made = new Map<string, { done: Promise<void>; at: number }>();

  constructor(
    /** How long a finished write speaks for its key when the cache never shows it (deleted meanwhile, say). */
    private readonly memoryMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Runs `write` for `key` unless a write of it is in flight or remembered; a failed write is forgotten at once. */
  run(key: string, write: () => Promise<void>): Promise<void> {
    const at = this.now();
    const made = this.made.get(key);
    if (made !== undefined && at - made.at < this.memoryMs) return made.done;
    const done = write().catch((err: unknown) => {
      if (this.made.get(key)?.done === done) this.made.delete(key);
      throw err;
    });
    this.made.set(key, { done, at });
    return done;
  }

  /** The cache shows `key` now (or showed it go): from here on it speaks for the key. */
  seen(key: string): void {
    this.made.delete(key);
  }
}
