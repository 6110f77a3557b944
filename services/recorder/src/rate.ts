/**
 * A token bucket that waits instead of refusing: `burst` writes at once, then
 * `perSecond`. Callers queue for a token, so a noisy tenant slows down its own
 * Event writes without anything being dropped.
 */
export class WaitingBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly burst: number,
    private readonly perSecond: number,
    private readonly now: () => number = Date.now,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {
    this.tokens = burst;
    this.last = now();
  }

  /** Resolves once a token was taken. */
  async acquire(): Promise<void> {
    for (;;) {
      const t = this.now();
      this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.perSecond);
      this.last = t;
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return;
      }
      await this.sleep(Math.ceil(((1 - this.tokens) / this.perSecond) * 1000));
    }
  }
}

/** A bounded set of recently seen ids: the oldest are forgotten first. */
export class RecentIds {
  private readonly ids = new Set<string>();

  constructor(private readonly max: number) {}

  has(id: string): boolean {
    return this.ids.has(id);
  }

  add(id: string): void {
    this.ids.delete(id);
    this.ids.add(id);
    while (this.ids.size > this.max) this.ids.delete(this.ids.values().next().value!);
  }

  get size(): number {
    return this.ids.size;
  }
}
