/** A token bucket: `burst` tokens, refilled at `perSecond`; take() says whether one was available. */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly burst: number,
    private readonly perSecond: number,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.last = now();
  }

  take(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Milliseconds until take() can succeed (0 when it can now). */
  waitMs(): number {
    this.refill();
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) / this.perSecond) * 1000);
  }

  private refill(): void {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.perSecond);
    this.last = t;
  }
}

/**
 * A request budget shared by every request of a client: `perSecond` on average, up to `burst`
 * at once. `wait()` resolves when the request may go; waiters go in arrival order.
 */
export class RequestBudget {
  private readonly bucket: TokenBucket;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    readonly perSecond: number,
    readonly burst: number,
  ) {
    this.bucket = new TokenBucket(Math.max(1, burst), perSecond);
  }

  wait(): Promise<void> {
    const turn = this.queue.then(async () => {
      while (!this.bucket.take()) await new Promise((r) => setTimeout(r, Math.ceil(1000 / this.perSecond)));
    });
    this.queue = turn;
    return turn;
  }
}
