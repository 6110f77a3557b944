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

  /**
   * Takes `cost` tokens if the bucket holds them. A cost above the burst is taken from a full
   * bucket (it can never hold more), so nothing waits forever.
   */
  take(cost = 1): boolean {
    this.refill();
    const needed = Math.min(cost, this.burst);
    if (this.tokens < needed) return false;
    this.tokens -= needed;
    return true;
  }

  /** Milliseconds until take(cost) can succeed (0 when it can now). */
  waitMs(cost = 1): number {
    this.refill();
    const needed = Math.min(cost, this.burst);
    return this.tokens >= needed ? 0 : Math.ceil(((needed - this.tokens) / this.perSecond) * 1000);
  }

  private refill(): void {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.perSecond);
    this.last = t;
  }
}

/**
 * A request budget shared by every request of a client: `perSecond` on average, up to `burst`
 * at once. `wait()` resolves when the request may go; waiters go in arrival order, and only the
 * first of them sleeps, until its token is due.
 */
export class RequestBudget {
  private readonly bucket: TokenBucket;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    readonly perSecond: number,
    readonly burst: number,
    now: () => number = Date.now,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {
    if (!(perSecond > 0) || !(burst >= 1)) throw new RangeError("a request budget needs perSecond > 0 and burst >= 1");
    this.bucket = new TokenBucket(burst, perSecond, now);
  }

  /** Milliseconds until the budget has a request's token (0 when it has one now). */
  waitMs(): number {
    return this.bucket.waitMs();
  }

  /** Resolves when `cost` tokens (one request, or a write's bytes) are taken, after earlier waiters. */
  wait(cost = 1): Promise<void> {
    const turn = this.queue.then(async () => {
      while (!this.bucket.take(cost)) await this.sleep(Math.max(1, this.bucket.waitMs(cost)));
    });
    this.queue = turn;
    return turn;
  }
}
