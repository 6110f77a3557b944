/**
 * Runs tasks serially per key and concurrently across keys, up to `limit` at a
 * time: two messages about one tenant never race inside a replica, while a slow
 * tenant does not hold up the others.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();
  private running = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  /** Number of keys with queued or running work. */
  get size(): number {
    return this.tails.size;
  }

  /** Enqueues `task` behind earlier tasks of the same key; resolves when it has run. */
  run(key: string, task: () => Promise<void>): Promise<void> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const next = previous.then(() => this.withSlot(task));
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }

  /** Resolves when every queued task has finished. */
  async idle(): Promise<void> {
    while (this.tails.size > 0) await Promise.all([...this.tails.values()]);
  }

  private async withSlot(task: () => Promise<void>): Promise<void> {
    while (this.running >= this.limit) await new Promise<void>((r) => this.waiters.push(r));
    this.running++;
    try {
      await task();
    } finally {
      this.running--;
      this.waiters.shift()?.();
    }
  }
}
